#include "server/media_handler.hpp"

#include "core/byte_range.hpp"
#include "core/media_url.hpp"
#include "server/api_response.hpp"

#include <charconv>
#include <chrono>
#include <fstream>

namespace gesso::server {
namespace {

constexpr std::uint64_t max_response_bytes = 64 * 1024 * 1024;

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

// What the blocking read found.
struct media_read {
  bool found = false;
  std::uint64_t size = 0;
  range_request range;
  std::string bytes;
};

media_read read_media(const std::filesystem::path& path, std::string_view range_header, bool head) {
  media_read r;
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!file || ec) {
    return r;
  }
  r.found = true;
  r.size = size;
  r.range = range_header.empty() ? range_request{} : parse_range(range_header, size);
  if (r.range.outcome == range_request::kind::whole) {
    r.range.range = {0, size == 0 ? 0 : size - 1};
  }
  if (head || r.range.outcome == range_request::kind::unsatisfiable || size == 0) {
    return r;
  }
  const std::uint64_t length = std::min(r.range.range.last - r.range.range.first + 1, max_response_bytes);
  r.bytes.resize(length);
  file.seekg(static_cast<std::streamoff>(r.range.range.first));
  file.read(r.bytes.data(), static_cast<std::streamsize>(length));
  r.bytes.resize(static_cast<std::size_t>(file.gcount()));
  return r;
}

}  // namespace

boost::asio::awaitable<response> serve_media(api_context* ctx, exchange* ex, std::string_view object,
                                             std::string_view query) {
  const std::string& request_id = ex->request_id;
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
  const bool head = ex->req.method() == http::verb::head;
  const std::filesystem::path path = ctx->media->path_of(object);
  const std::string range_header(ex->req[http::field::range]);
  auto work = [&path, &range_header, head] { return read_media(path, range_header, head); };
  const media_read found = co_await ctx->db->run(std::move(work));
  if (!found.found) {
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
  const std::uint64_t length = found.size == 0 ? 0 : found.range.range.last - found.range.range.first + 1;
  if (partial) {
    res.set(http::field::content_range, "bytes " + std::to_string(found.range.range.first) + "-" +
                                            std::to_string(found.range.range.last) + "/" +
                                            std::to_string(found.size));
  }
  res.body() = found.bytes;
  res.content_length(head ? length : res.body().size());
  co_return res;
}

}  // namespace gesso::server
