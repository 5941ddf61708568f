// Fuzzes the Range header parser: the first 8 bytes are the resource size, the rest the header.

#include "core/byte_range.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstring>

using gesso::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < sizeof(std::uint64_t)) {
    return 0;
  }
  std::uint64_t resource = 0;
  std::memcpy(&resource, data, sizeof resource);
  resource %= (std::uint64_t{1} << 40);  // up to 1 TiB: every size a media file could have
  const auto header = gesso::fuzz::as_text(data + sizeof resource, size - sizeof resource);
  const auto r = gesso::parse_range(header, resource);
  using kind = gesso::range_request::kind;
  if (r.outcome == kind::partial) {
    require(r.range.first <= r.range.last, "a partial range is not reversed");
    require(r.range.last < resource, "a partial range ends inside the resource");
  }
  if (r.outcome == kind::unsatisfiable) {
    require(header.find('=') != std::string_view::npos, "only a well-formed range is unsatisfiable");
  }
  return 0;
}
