#include "server/api/media_handler.hpp"

#include "core/byte_range.hpp"
#include "core/media_url.hpp"
#include "server/api/api_response.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>

namespace gesso::api {

file_body::~file_body() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::size_t file_body::read(char* into, std::size_t n, std::uint64_t at) const {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, into + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) {
      continue;
    }
    if (r <= 0) {
      break;
    }
    got += static_cast<std::size_t>(r);
  }
  return got;
}

namespace {

std::string_view query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  return {};
}

std::string_view content_type_of(std::string_view object) {
  if (object.ends_with(".png")) {
    return "image/png";
  }
  if (object.ends_with(".jpg")) {
    return "image/jpeg";
  }
  if (object.ends_with(".webp")) {
    return "image/webp";
  }
  if (object.ends_with(".mp4")) {
    return "video/mp4";
  }
  if (object.ends_with(".m4a")) {
    return "audio/mp4";
  }
  return "application/octet-stream";
}

// What the blocking open found: the file, its size and the range asked for.
struct media_open {
  std::optional<file_body> file;
  std::uint64_t size = 0;
  range_request range;
};

media_open open_media(const std::filesystem::path& path, std::string_view range_header) {
  media_open r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return r;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return r;
  }
  r.size = static_cast<std::uint64_t>(info.st_size);
  r.range = range_header.empty() ? range_request{} : parse_range(range_header, r.size);
  if (r.range.outcome == range_request::kind::whole) {
    r.range.range = {0, r.size == 0 ? 0 : r.size - 1};
  }
  const bool empty = r.size == 0 || r.range.outcome == range_request::kind::unsatisfiable;
  const std::uint64_t length = empty ? 0 : r.range.range.last - r.range.range.first + 1;
  r.file.emplace(fd, r.range.range.first, length);
  return r;
}

}  // namespace

boost::asio::awaitable<response> serve_media(api_context* ctx, request_context* rc, std::string_view object,
                                             std::string_view query) {
  const std::string& request_id = rc->request_id;
  const std::string_view expires_text = query_value(query, "expires");
  std::int64_t expires = 0;
  const auto [end, ec] =
      std::from_chars(expires_text.data(), expires_text.data() + expires_text.size(), expires);
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  if (ec != std::errc{} || end != expires_text.data() + expires_text.size() ||
      !verify_media_signature(ctx->links->signing_key, object, expires, query_value(query, "sig"), now)) {
    co_return problem_response({errc::forbidden, "invalid or expired media link"}, request_id);
  }
  const std::filesystem::path path = ctx->media->path_of(object);
  const std::string range_header(rc->req[http::field::range]);
  auto work = [&path, &range_header] { return open_media(path, range_header); };
  media_open found = co_await ctx->database_calls->run(std::move(work));
  if (!found.file) {
    co_return problem_response({errc::not_found, "media not found; it may have passed its retention period"},
                               request_id);
  }
  if (found.range.outcome == range_request::kind::unsatisfiable) {
    response res = problem_response({errc::range_not_satisfiable, "the requested range is outside the file"},
                                    request_id);
    res.set(http::field::content_range, "bytes */" + std::to_string(found.size));
    co_return res;
  }
  const bool partial = found.range.outcome == range_request::kind::partial;
  response res(partial ? http::status::partial_content : http::status::ok, 11);
  res.set(http::field::content_type, content_type_of(object));
  res.set(http::field::accept_ranges, "bytes");
  res.set(http::field::cache_control, "private, max-age=3600");
  res.set("X-Request-Id", request_id);
  const std::uint64_t length = found.file->length;
  if (partial) {
    res.set(http::field::content_range, "bytes " + std::to_string(found.range.range.first) + "-" +
                                            std::to_string(found.range.range.last) + "/" +
                                            std::to_string(found.size));
  }
  res.content_length(length);
  if (length > 0) {
    rc->file.emplace(std::move(*found.file));  // the frontend sends it in pieces after the header
  }
  co_return res;
}

}  // namespace gesso::api
