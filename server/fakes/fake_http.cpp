#include "server/fakes/fake_http.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <thread>

namespace gesso::fakes {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

std::string fake_request::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string fake_request::query_value(const std::string& name) const {
  std::size_t at = 0;
  while (at < query.size()) {
    const auto amp = query.find('&', at);
    const std::string pair = query.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string::npos ? std::string() : pair.substr(eq + 1);
    }
    if (amp == std::string::npos) {
      break;
    }
    at = amp + 1;
  }
  return {};
}

fake_response json_response(unsigned status, std::string body) {
  return fake_response{
      .status = status, .content_type = "application/json", .headers = {}, .body = std::move(body)};
}

struct fake_http_server::impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  fake_handler handler;
  std::atomic<bool> stopping{false};
};

namespace {

void serve(tcp::socket socket, const fake_handler* handler) {
  beast::flat_buffer buffer(64 * 1024 * 1024);
  beast::error_code ec;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    http::read(socket, buffer, parser, ec);
    if (ec) {
      return;
    }
    const auto& req = parser.get();
    fake_request r;
    r.method = std::string(req.method_string());
    const std::string target(req.target());
    const auto q = target.find('?');
    r.path = target.substr(0, q);
    r.query = q == std::string::npos ? "" : target.substr(q + 1);
    for (const auto& field : req) {
      std::string name(field.name_string());
      for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      r.headers[name] = std::string(field.value());
    }
    r.body = req.body();
    const fake_response answer = (*handler)(r);
    if (answer.delay.count() > 0) {
      std::this_thread::sleep_for(answer.delay);
    }
    if (answer.drop) {
      socket.shutdown(tcp::socket::shutdown_both, ec);
      return;
    }
    http::response<http::string_body> res{static_cast<http::status>(answer.status), 11};
    res.set(http::field::server, "gesso-fake-providers");
    res.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) {
      res.set(name, value);
    }
    res.body() = answer.body;
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) {
      socket.shutdown(tcp::socket::shutdown_send, ec);
      return;
    }
  }
}

}  // namespace

fake_http_server::fake_http_server(const std::string& host, std::uint16_t port, fake_handler handler)
    : impl_(std::make_unique<impl>()) {
  impl_->handler = std::move(handler);
  const tcp::endpoint endpoint(asio::ip::make_address(host), port);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
}

fake_http_server::~fake_http_server() = default;

std::uint16_t fake_http_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void fake_http_server::run() {
  while (!impl_->stopping) {
    beast::error_code ec;
    tcp::socket socket(impl_->ioc);
    impl_->acceptor.accept(socket, ec);
    if (ec) {
      if (impl_->stopping) {
        return;
      }
      continue;
    }
    std::thread(serve, std::move(socket), &impl_->handler).detach();
  }
}

void fake_http_server::stop() {
  impl_->stopping = true;
  beast::error_code ec;
  impl_->acceptor.close(ec);
}

}  // namespace gesso::fakes
