#include "tests/support/media_probe.hpp"

#include "tests/support/pg_cluster.hpp"

#include <boost/json.hpp>

namespace gesso::testing {

std::pair<int, int> png_size(const std::string& bytes) {
  static const std::string signature = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 24 || bytes.compare(0, 8, signature) != 0 || bytes.compare(12, 4, "IHDR") != 0) {
    return {0, 0};
  }
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) | (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) | static_cast<unsigned char>(bytes[at + 3]);
  };
  return {be32(16), be32(20)};
}

boost::json::object ffprobe(const std::string& path) {
  return boost::json::parse(shell("ffprobe -v error -show_streams -show_format -of json '" + path + "'"))
      .as_object();
}

}  // namespace gesso::testing
