#pragma once
// One keep-alive HTTP/1.1 client connection of the load generator, and the bounded set of them that a
// thread's requests share. Single-threaded: everything runs on one io_context.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace gesso::load {

/// What one exchange came to: an HTTP status and body, or why there was none.
struct http_answer {
  int status = 0;  ///< 0 when no answer came
  std::string body;
  std::string failure;  ///< "timeout", "connect refused", "connection closed", … when status is 0
  /// Sent twice: a reused connection closed before any byte of the answer, and the request is
  /// idempotent, so it was sent once more on a new connection, as HTTP clients do (RFC 9110 §9.2.2).
  bool retried = false;
};

class http_connection {
 public:
  http_connection(boost::asio::any_io_executor executor,
                  const boost::asio::ip::tcp::resolver::results_type* endpoints);

  /// Connects when needed, sends `req` and reads the answer, all within `timeout`. A failure or an
  /// answer that ends the connection leaves it closed; the next exchange connects anew. An idempotent
  /// request whose reused connection closed before any byte of the answer is sent once more.
  boost::asio::awaitable<http_answer> send(
      const boost::beast::http::request<boost::beast::http::string_body>* req,
      std::chrono::milliseconds timeout);

 private:
  boost::asio::awaitable<http_answer> attempt(
      const boost::beast::http::request<boost::beast::http::string_body>* req,
      std::chrono::milliseconds timeout);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_{1024 * 1024};  ///< bounded: a header or chunk line cannot grow it
  bool answer_started_ = false;                    ///< the last attempt received a byte of its answer
  const boost::asio::ip::tcp::resolver::results_type* endpoints_;
  bool connected_ = false;
};

/// At most `limit` connections; a request that finds none free waits for one (its latency, measured
/// from its intended send time, includes the wait).
class connection_set {
 public:
  connection_set(boost::asio::any_io_executor executor,
                 boost::asio::ip::tcp::resolver::results_type endpoints, int limit);

  boost::asio::awaitable<std::unique_ptr<http_connection>> acquire();
  void release(std::unique_ptr<http_connection> connection);

  int opened() const { return opened_; }

 private:
  struct waiter {
    boost::asio::steady_timer wake;
    std::unique_ptr<http_connection> given;
  };
  boost::asio::any_io_executor executor_;
  boost::asio::ip::tcp::resolver::results_type endpoints_;
  int limit_;
  int opened_ = 0;
  std::vector<std::unique_ptr<http_connection>> idle_;
  std::deque<waiter*> waiters_;
};

/// Borrows a connection from `set`, sends `req` on it, and gives it back.
boost::asio::awaitable<http_answer> send_on(
    connection_set* set, const boost::beast::http::request<boost::beast::http::string_body>* req,
    std::chrono::milliseconds timeout);

}  // namespace gesso::load
