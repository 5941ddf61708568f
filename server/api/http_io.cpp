#include "server/api/http_io.hpp"

#include "server/api/api_response.hpp"
#include "server/api/http_framing.hpp"
#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <vector>

namespace gesso::api {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using runtime::as_tuple_awaitable;

std::size_t read_buffer_limit(const http_settings& settings) {
  return settings.max_header_bytes + 4096;
}

namespace {

bool expects_continue(const http::request_parser<http::string_body>& parser) {
  const auto& header = parser.get();
  const auto it = header.find(http::field::expect);
  return it != header.end() && beast::iequals(it->value(), "100-continue");
}

// What a request body costs while it is held: the body itself, its JSON parse (bounded by the body's
// size plus 64 KiB, core/create_request.cpp) and the fields copied out of it.
constexpr std::size_t body_memory_factor = 3;

std::optional<response> refuse(errc code, std::string message, const request_context* rc) {
  return problem_response({code, std::move(message)}, rc->request_id);
}

}  // namespace

asio::awaitable<std::optional<response>> read_request(const request_reading* r, beast::tcp_stream* stream,
                                                      beast::flat_buffer* buffer, request_context* rc,
                                                      bool* quit,
                                                      std::optional<memory_budget::reservation>* held) {
  const http_settings* settings = r->settings;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(settings->max_header_bytes));
  parser.body_limit(settings->max_body_bytes);
  stream->expires_after(settings->read_timeout);
  auto [ec, n] = co_await http::async_read_header(*stream, *buffer, parser, as_tuple_awaitable);
  if (!ec) {
    if (auto framing = framing_problem(parser.get())) {
      co_return problem_response(*framing, rc->request_id);
    }
    const std::string_view target = parser.get().target();
    if (const std::string_view origin = origin_form(target); origin.size() != target.size()) {
      parser.get().target(std::string(origin));
    }
    const std::uint64_t declared =
        parser.chunked() ? settings->max_body_bytes : parser.content_length().value_or(0);
    if (declared > 0) {
      auto reserved = r->bodies->try_reserve(static_cast<std::size_t>(declared) * body_memory_factor);
      if (!reserved) {
        co_return refuse(errc::unavailable,
                         "the server is receiving too many large request bodies at once; retry shortly", rc);
      }
      held->emplace(std::move(*reserved));
    }
    if (expects_continue(parser)) {
      // Only a request that will be read gets 100 Continue: the route, method, key shape and
      // Content-Type are checked first, so a client does not send a body that is refused anyway.
      if (std::optional<response> early = refuse_before_body(parser.get(), rc)) {
        co_return early;
      }
      http::response<http::empty_body> proceed(http::status::continue_, 11);
      auto [wec, wn] = co_await http::async_write(*stream, proceed, as_tuple_awaitable);
      ec = wec;
    }
  }
  if (!ec && !parser.is_done()) {
    auto [bec, bn] = co_await http::async_read(*stream, *buffer, parser, as_tuple_awaitable);
    ec = bec;
  }
  if (ec == http::error::body_limit) {
    co_return refuse(
        errc::payload_too_large,
        "request body is larger than the limit of " + std::to_string(settings->max_body_bytes) + " bytes",
        rc);
  }
  if (ec == http::error::header_limit) {
    co_return refuse(errc::header_too_large,
                     "request headers are larger than the limit of " +
                         std::to_string(settings->max_header_bytes) + " bytes",
                     rc);
  }
  if (ec == http::error::buffer_overflow) {
    co_return refuse(errc::malformed_request,
                     "a chunk-size line or trailer is longer than " +
                         std::to_string(read_buffer_limit(*settings)) + " bytes",
                     rc);
  }
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == http::error::partial_message) {
    *quit = true;
    co_return std::nullopt;
  }
  if (ec) {
    co_return refuse(errc::malformed_request, "malformed HTTP request: " + ec.message(), rc);
  }
  rc->req = parser.release();
  co_return std::nullopt;
}

// After refusing a request whose body was not read (413, 431, malformed), half-close and discard
// what the client is still sending for a short while: closing at once would reset the connection
// and the client could lose the response.
asio::awaitable<void> linger(beast::tcp_stream* stream) {
  boost::system::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
  std::array<char, 16 * 1024> sink{};
  std::size_t discarded = 0;
  stream->expires_after(std::chrono::seconds(2));
  while (discarded < 64 * 1024 * 1024) {
    auto [ec, n] = co_await stream->async_read_some(asio::buffer(sink), as_tuple_awaitable);
    if (ec) {
      break;
    }
    discarded += n;
  }
}

// Writes the response: a HEAD answer keeps its Content-Length but sends no body; a file body is sent
// after the header in pieces of at most file_piece_bytes, so a download holds no more than one piece.
asio::awaitable<boost::system::error_code> write_response(const http_settings* settings,
                                                          beast::tcp_stream* stream, response* res,
                                                          request_context* rc, bool head) {
  if (head && !res->body().empty()) {
    res->content_length(res->body().size());
    res->body().clear();
  }
  stream->expires_after(settings->write_timeout);
  if (!rc->file || head) {
    auto [ec, n] = co_await http::async_write(*stream, *res, as_tuple_awaitable);
    co_return ec;
  }
  http::response_serializer<http::string_body> serializer(*res);
  auto [hec, hn] = co_await http::async_write_header(*stream, serializer, as_tuple_awaitable);
  if (hec) {
    co_return hec;
  }
  std::vector<char> piece(
      static_cast<std::size_t>(std::min<std::uint64_t>(file_piece_bytes, rc->file->length)));
  for (std::uint64_t sent = 0; sent < rc->file->length;) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), rc->file->length - sent));
    const std::size_t got = rc->file->read(piece.data(), want, rc->file->offset + sent);
    if (got == 0) {  // the file shrank or vanished: the client sees a short body and the connection close
      log::write(log::level::warn, "media_read_failed", {{"request_id", rc->request_id}});
      co_return asio::error::make_error_code(asio::error::eof);
    }
    stream->expires_after(settings->write_timeout);
    auto [wec, wn] = co_await asio::async_write(*stream, asio::buffer(piece.data(), got), as_tuple_awaitable);
    if (wec) {
      co_return wec;
    }
    sent += got;
  }
  co_return boost::system::error_code{};
}

}  // namespace gesso::api
