#include "server/media/media_store.hpp"

#include "core/ids.hpp"
#include "core/media_url.hpp"

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace gesso::media {
namespace fs = std::filesystem;

namespace {

std::string random_suffix() {
  std::array<std::uint8_t, 8> bytes{};
  fill_random(bytes);
  std::string out;
  for (const auto b : bytes) {
    out += "0123456789abcdef"[b >> 4];
    out += "0123456789abcdef"[b & 0xF];
  }
  return out;
}

}  // namespace

media_store::media_store(fs::path root) : root_(std::move(root)) {
  fs::create_directories(root_);
  fs::create_directories(scratch());
}

std::string media_store::object_key(std::string_view task_id, std::string_view extension) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char day[16];
  std::strftime(day, sizeof day, "%Y/%m/%d", &utc);
  return std::string(day) + "/" + std::string(task_id) + "." + std::string(extension);
}

fs::path media_store::path_of(std::string_view object) const {
  if (!is_media_object_key(object)) {
    throw std::invalid_argument("not a media object key");
  }
  return root_ / fs::path(std::string(object));
}

fs::path media_store::scratch() const {
  return root_ / ".scratch";
}

void media_store::put(std::string_view object, std::string_view bytes) {
  const fs::path temporary = scratch() / ("put-" + random_suffix());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  adopt(object, temporary);
}

void media_store::adopt(std::string_view object, const fs::path& file) {
  const fs::path target = path_of(object);
  fs::create_directories(target.parent_path());
  fs::rename(file, target);  // atomic: readers see the old file, no file, or the whole new one
}

std::size_t media_store::delete_older_than(std::chrono::seconds age) {
  const auto cutoff = fs::file_time_type::clock::now() - age;
  std::size_t deleted = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) {
      break;
    }
    if (it->is_regular_file(ec) && it->last_write_time(ec) < cutoff && fs::remove(it->path(), ec)) {
      ++deleted;
    }
  }
  return deleted;
}

}  // namespace gesso::media
