#pragma once
// What the security suites share (ssrf, tenant_isolation, secrets, abuse): request bodies, reading a
// task's error and a process's log, media targets, raw connections, and the open-file limit.

#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace gesso::testing::security_suites {

namespace json = boost::json;
namespace asio = boost::asio;
using asio::ip::tcp;

inline std::string create_body(const std::string& model, const std::string& prompt,
                               const std::vector<std::string>& image_urls = {}) {
  json::object body{{"model_id", model}, {"prompt", prompt}};
  if (!image_urls.empty()) {
    json::array urls;
    for (const auto& u : image_urls) {
      urls.emplace_back(u);
    }
    body["image_urls"] = std::move(urls);
  }
  return json::serialize(body);
}

inline std::string task_id_of(const http_reply& reply) {
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

inline std::string task_error(const std::string& task_id) {
  const auto details = json::parse(gesso_cli({"task", "show", task_id, "--json"}).out).as_object();
  const auto* error = details.if_contains("error");
  return error != nullptr && error->is_string() ? std::string(error->as_string()) : "";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The part of a media URL from "/media/" on.
inline std::string media_target(const std::string& url) {
  return url.substr(url.find("/media/"));
}

/// A connection the test holds open to the server, reading nothing until asked.
struct raw_connection {
  asio::io_context ioc;
  tcp::socket socket{ioc};
  explicit raw_connection(std::uint16_t port) { socket.connect({asio::ip::make_address("127.0.0.1"), port}); }

  /// Whether the server has closed the connection (reads what is pending without waiting).
  bool closed_by_server() {
    socket.non_blocking(true);
    std::array<char, 4096> sink{};
    for (;;) {
      boost::system::error_code ec;
      socket.read_some(asio::buffer(sink), ec);
      if (ec == asio::error::would_block) {
        return false;
      }
      if (ec) {
        return true;  // end of stream or reset
      }
    }
  }
};

inline void allow_many_open_files() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace gesso::testing::security_suites
