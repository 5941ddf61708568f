#include "tests/support/test_http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <vector>

namespace gesso::testing {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

struct test_http_server::impl {
  explicit impl(const std::string& address) : acceptor(ioc, {asio::ip::make_address(address), 0}) {}
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::mutex mutex;
  std::map<std::string, test_route> routes;
  std::vector<received_request> received;  ///< guarded by mutex
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::vector<std::thread> connections;  ///< joined on destruction
};

test_http_server::test_http_server(const std::string& address)
    : impl_(std::make_unique<impl>(address)), address_(address) {
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->thread = std::thread([this] {
    while (!impl_->stopping) {
      boost::system::error_code ec;
      tcp::socket socket(impl_->ioc);
      impl_->acceptor.accept(socket, ec);
      if (ec || impl_->stopping) {
        continue;
      }
      ++connections_;
      // Each connection on its own thread, so a slow route does not hold up the others.
      std::lock_guard registry_lock(impl_->mutex);
      impl_->connections.emplace_back([this, socket = std::move(socket)]() mutable {
        boost::system::error_code io_error;
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> req;
        http::read(socket, buffer, req, io_error);
        if (io_error) {
          return;
        }
        ++requests_;
        const std::string target(req.target());
        test_route r{404, {}, "not found", std::chrono::milliseconds(0)};
        {
          std::lock_guard lock(impl_->mutex);
          received_request seen{std::string(req.method_string()), target, {}, req.body()};
          for (const auto& field : req) {
            std::string name(field.name_string());
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return std::tolower(c); });
            seen.headers[name] = std::string(field.value());
          }
          impl_->received.push_back(std::move(seen));
          if (const auto it = impl_->routes.find(target.substr(0, target.find('?')));
              it != impl_->routes.end()) {
            r = it->second;
            if (it->second.fail_first > 0) {
              --it->second.fail_first;
              r = test_route{500, {}, "try again", std::chrono::milliseconds(0)};
            }
          }
        }
        std::this_thread::sleep_for(r.delay);
        http::response<http::string_body> res(static_cast<http::status>(r.status), 11);
        for (const auto& [name, value] : r.headers) {
          res.set(name, value);
        }
        res.body() = r.body;
        res.prepare_payload();
        http::write(socket, res, io_error);
        socket.shutdown(tcp::socket::shutdown_both, io_error);
      });
    }
  });
}

test_http_server::~test_http_server() {
  impl_->stopping = true;
  // Wake the blocking accept with one last connection.
  boost::system::error_code ec;
  asio::io_context ioc;
  tcp::socket poke(ioc);
  poke.connect({asio::ip::make_address(address_), port_}, ec);
  impl_->thread.join();
  for (auto& t : impl_->connections) {
    t.join();
  }
}

std::vector<received_request> test_http_server::received() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->received;
}

void test_http_server::route(const std::string& path, test_route r) {
  std::lock_guard lock(impl_->mutex);
  impl_->routes[path] = std::move(r);
}

}  // namespace gesso::testing
