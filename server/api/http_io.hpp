#pragma once
// Reading one request and writing one response on a client connection, under the frontend's limits:
// a bounded read buffer, the framing rules, the body memory budget, 100 Continue after the checks,
// HEAD without a body, and file bodies sent in pieces.

#include "server/api/api_handlers.hpp"
#include "server/api/http_server.hpp"
#include "server/api/memory_budget.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <optional>

namespace gesso::api {

/// What reading a request needs from the server; alive for the server's whole run.
struct request_reading {
  const http_settings* settings;
  memory_budget* bodies;  ///< every body's memory is reserved here before it is read
};

/// The read buffer's limit: a whole header block, one chunk-size line with its extensions, or a trailer
/// block must fit in it (Beast parses each in one piece and would otherwise buffer them without bound).
std::size_t read_buffer_limit(const http_settings& settings);

/// Reads one request into rc->req. Returns a response when the request must be refused (the connection
/// closes after it), or nothing; sets *quit when the connection should close silently. The body's
/// memory is reserved in *held before the body is read.
boost::asio::awaitable<std::optional<response>> read_request(const request_reading* r,
                                                             boost::beast::tcp_stream* stream,
                                                             boost::beast::flat_buffer* buffer,
                                                             request_context* rc, bool* quit,
                                                             std::optional<memory_budget::reservation>* held);

/// After a refusal whose body was not read: half-closes and discards what the client still sends for
/// a short while, so the client sees the answer instead of a reset.
boost::asio::awaitable<void> linger(boost::beast::tcp_stream* stream);

/// Writes `res`; a HEAD answer keeps its Content-Length and sends no body; rc->file, when set, is sent
/// after the header in pieces of at most file_piece_bytes.
boost::asio::awaitable<boost::system::error_code> write_response(const http_settings* settings,
                                                                 boost::beast::tcp_stream* stream,
                                                                 response* res, request_context* rc,
                                                                 bool head);

}  // namespace gesso::api
