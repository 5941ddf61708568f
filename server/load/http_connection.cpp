#include "server/load/http_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include "server/runtime/asio_helpers.hpp"

namespace gesso::load {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

namespace {

std::string describe(const error_code& ec, const char* step) {
  if (ec == beast::error::timeout) {
    return "timeout";
  }
  if (ec == asio::error::connection_refused) {
    return "connect refused";
  }
  if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::broken_pipe) {
    return "connection closed";
  }
  return std::string(step) + ": " + ec.message();
}

}  // namespace

http_connection::http_connection(asio::any_io_executor executor,
                                 const asio::ip::tcp::resolver::results_type* endpoints)
    : stream_(std::move(executor)), endpoints_(endpoints) {}

asio::awaitable<http_answer> http_connection::send(const http::request<http::string_body>* req,
                                                   std::chrono::milliseconds timeout) {
  const bool reused = connected_;
  http_answer result = co_await attempt(req, timeout);
  // A server may close an idle keep-alive connection just as a request is sent on it; the request
  // then never reached it, and an idempotent one can be sent again (RFC 9110 §9.2.2).
  const http::verb method = req->method();
  const bool idempotent = method == http::verb::get || method == http::verb::head ||
                          method == http::verb::put || method == http::verb::delete_ ||
                          method == http::verb::options;
  if (result.status == 0 && reused && !answer_started_ && idempotent &&
      result.failure == "connection closed") {
    result = co_await attempt(req, timeout);
    result.retried = true;
  }
  co_return result;
}

asio::awaitable<http_answer> http_connection::attempt(const http::request<http::string_body>* req,
                                                      std::chrono::milliseconds timeout) {
  http_answer result;
  answer_started_ = false;
  stream_.expires_after(timeout);
  if (!connected_) {
    auto [ec, endpoint] = co_await stream_.async_connect(*endpoints_, runtime::as_tuple_awaitable);
    static_cast<void>(endpoint);
    if (ec) {
      stream_.close();
      result.failure = describe(ec, "connect");
      co_return result;
    }
    stream_.socket().set_option(asio::ip::tcp::no_delay(true));
    connected_ = true;
  }
  auto [write_ec, written] = co_await http::async_write(stream_, *req, runtime::as_tuple_awaitable);
  static_cast<void>(written);
  if (write_ec) {
    stream_.close();
    connected_ = false;
    result.failure = describe(write_ec, "write");
    co_return result;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // results can be videos of many megabytes
  auto [read_ec, read] = co_await http::async_read(stream_, buffer_, parser, runtime::as_tuple_awaitable);
  static_cast<void>(read);
  answer_started_ = parser.got_some() || buffer_.size() > 0;
  if (read_ec) {
    stream_.close();
    connected_ = false;
    buffer_.clear();
    result.failure = describe(read_ec, "read");
    co_return result;
  }
  http::response<http::string_body> answer = parser.release();
  if (!answer.keep_alive()) {
    stream_.close();
    connected_ = false;
    buffer_.clear();
  }
  result.status = static_cast<int>(answer.result_int());
  result.body = std::move(answer.body());
  co_return result;
}

connection_set::connection_set(asio::any_io_executor executor,
                               asio::ip::tcp::resolver::results_type endpoints, int limit)
    : executor_(std::move(executor)), endpoints_(std::move(endpoints)), limit_(limit) {}

asio::awaitable<std::unique_ptr<http_connection>> connection_set::acquire() {
  if (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    co_return c;
  }
  if (opened_ < limit_) {
    ++opened_;
    co_return std::make_unique<http_connection>(executor_, &endpoints_);
  }
  waiter w{asio::steady_timer(executor_, asio::steady_timer::time_point::max()), nullptr};
  waiters_.push_back(&w);
  while (!w.given) {
    auto [ec] = co_await w.wake.async_wait(runtime::as_tuple_awaitable);
    static_cast<void>(ec);  // cancelled by release, which has handed over a connection
  }
  co_return std::move(w.given);
}

void connection_set::release(std::unique_ptr<http_connection> connection) {
  if (!waiters_.empty()) {
    waiter* w = waiters_.front();
    waiters_.pop_front();
    w->given = std::move(connection);
    w->wake.cancel();
    return;
  }
  idle_.push_back(std::move(connection));
}

asio::awaitable<http_answer> send_on(connection_set* set, const http::request<http::string_body>* req,
                                     std::chrono::milliseconds timeout) {
  std::unique_ptr<http_connection> connection = co_await set->acquire();
  http_answer result = co_await connection->send(req, timeout);
  set->release(std::move(connection));
  co_return result;
}

}  // namespace gesso::load
