#pragma once
// A tiny HTTP server on a loopback address for tests: fixed routes (status, headers, body, delay),
// counts of the connections and requests it received, and nothing else. Runs on its own thread until
// destroyed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gesso::testing {

struct test_route {
  int status = 200;
  std::map<std::string, std::string> headers = {};
  std::string body = {};
  std::chrono::milliseconds delay{0};  ///< wait before answering
  int fail_first = 0;                  ///< the first N requests to the route answer 500 instead, at once
};

/// A request as the server received it (header names in lower case).
struct received_request {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;
  std::string body;
};

class test_http_server {
 public:
  /// Listens on `address` (any 127.x address: SSRF tests tell hosts apart by address).
  explicit test_http_server(const std::string& address = "127.0.0.1");
  ~test_http_server();

  /// Serves `route` at `path` (exact match, query ignored); other paths answer 404.
  void route(const std::string& path, test_route r);

  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://" + address_ + ":" + std::to_string(port_) + path;
  }
  const std::string& address() const { return address_; }

  /// Connections accepted so far, whether or not they sent anything.
  int connections() const { return connections_.load(); }

  /// Requests received so far (every connection that sent a request line).
  int requests() const { return requests_.load(); }

  /// Every request received so far, in order.
  std::vector<received_request> received() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string address_;
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
};

}  // namespace gesso::testing
