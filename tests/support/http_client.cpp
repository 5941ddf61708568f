#include "tests/support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace gesso::testing {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

boost::json::value http_reply::json() const {
  return boost::json::parse(body);
}

std::string http_reply::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

http_reply http_client::request(const std::string& method, const std::string& target, const std::string& body,
                                const std::map<std::string, std::string>& headers) const {
  asio::io_context ioc;
  boost::beast::tcp_stream stream(ioc);
  stream.expires_after(timeout_);  // the whole exchange: a server that hangs fails the test, not CTest
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  req.method_string(method);
  req.set(http::field::host, host_);
  for (const auto& [name, value] : headers) {
    req.set(name, value);
  }
  req.body() = body;
  if (!body.empty() || method == "POST") {
    req.prepare_payload();
  }
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 * 1024 * 1024);  // media tests download outputs above 64 MiB
  parser.skip(method == "HEAD");         // a HEAD response announces a length but carries no body
  boost::system::error_code failure;
  stream.async_connect(
      tcp::endpoint(asio::ip::make_address(host_), port_), [&](boost::system::error_code ec) {
        if (ec) {
          failure = ec;
          return;
        }
        http::async_write(stream, req, [&](boost::system::error_code wec, std::size_t) {
          if (wec) {
            failure = wec;
            return;
          }
          http::async_read(stream, buffer, parser,
                           [&](boost::system::error_code rec, std::size_t) { failure = rec; });
        });
      });
  ioc.run();
  if (failure) {
    throw boost::system::system_error(failure, method + " " + target);
  }
  const auto& res = parser.get();
  http_reply reply;
  reply.status = res.result_int();
  for (const auto& field : res) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    reply.headers[name] = std::string(field.value());
  }
  reply.body = res.body();
  return reply;
}

http_reply http_client::create(const std::string& key, const std::string& body) const {
  return request("POST", "/api/v1/tasks/create", body,
                 {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}});
}

http_reply http_client::query(const std::string& key, const std::string& task_id) const {
  return request("GET", "/api/v1/tasks/" + task_id, "", {{"Authorization", "Bearer " + key}});
}

http_reply http_client::cancel(const std::string& key, const std::string& task_id) const {
  return request("POST", "/api/v1/tasks/" + task_id + "/cancel", "", {{"Authorization", "Bearer " + key}});
}

std::string http_client::raw(const std::string& bytes) const {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address(host_), port_));
  asio::write(socket, asio::buffer(bytes));
  socket.shutdown(tcp::socket::shutdown_send);
  std::string out;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(out), ec);
  return out;
}

std::uint16_t port_from_listen_line(const std::string& line) {
  const auto colon = line.rfind(':');
  if (line.find("listening on http://") == std::string::npos || colon == std::string::npos) {
    throw std::runtime_error("not a listen line: " + line);
  }
  return static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
}

}  // namespace gesso::testing
