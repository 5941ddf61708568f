#include "server/runtime/health_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include "server/runtime/asio_helpers.hpp"

#include <thread>

namespace gesso::runtime {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

using runtime::as_tuple_awaitable;

struct health_server::impl {
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::function<probe_answer(std::string_view)> answer;
  std::thread thread;
  std::uint16_t port = 0;
};

namespace {

// One request a connection: probes open a connection each time.
asio::awaitable<void> answer_one(health_server::impl* s, tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::seconds(5));
  beast::flat_buffer buffer(16 * 1024);  // bounded: a chunk-size line or trailer cannot grow it
  http::request_parser<http::string_body> parser;
  parser.header_limit(8 * 1024);
  parser.body_limit(1024);
  auto [ec, n] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
  if (ec) {
    co_return;
  }
  const auto& req = parser.get();
  http::response<http::string_body> res;
  res.version(11);
  res.keep_alive(false);
  const bool head = req.method() == http::verb::head;
  if (req.method() != http::verb::get && !head) {
    res.set(http::field::content_type, "application/json");
    res.result(http::status::method_not_allowed);
    res.set(http::field::allow, "GET, HEAD");
    res.body() = R"({"status":"method not allowed"})";
  } else {
    const std::string_view target = req.target();
    const probe_answer a = s->answer(target.substr(0, target.find('?')));
    res.result(a.status);
    res.set(http::field::content_type, a.content_type);
    res.body() = a.body;
  }
  res.prepare_payload();
  if (head) {  // the length of what GET would send, and no body
    res.body().clear();
  }
  auto [wec, wn] = co_await http::async_write(stream, res, as_tuple_awaitable);
  static_cast<void>(wec);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> accept_loop(health_server::impl* s) {
  while (s->acceptor.is_open()) {
    auto [ec, socket] = co_await s->acceptor.async_accept(as_tuple_awaitable);
    if (ec) {
      if (ec == asio::error::operation_aborted) {
        co_return;
      }
      continue;
    }
    asio::co_spawn(s->ioc, answer_one(s, std::move(socket)), asio::detached);
  }
}

}  // namespace

health_server::health_server(const std::string& host, std::uint16_t port,
                             std::function<probe_answer(std::string_view path)> answer)
    : impl_(std::make_unique<impl>()) {
  impl_->answer = std::move(answer);
  const tcp::endpoint endpoint(asio::ip::make_address(host), port);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  asio::co_spawn(impl_->ioc, accept_loop(impl_.get()), asio::detached);
  impl_->thread = std::thread([s = impl_.get()] { s->ioc.run(); });
}

health_server::~health_server() {
  asio::post(impl_->ioc, [s = impl_.get()] {
    boost::system::error_code ignored;
    s->acceptor.close(ignored);
  });
  impl_->ioc.stop();
  impl_->thread.join();
}

std::uint16_t health_server::port() const {
  return impl_->port;
}

}  // namespace gesso::runtime
