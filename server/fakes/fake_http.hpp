#pragma once
// The HTTP plumbing of gesso-fake-providers: a small blocking server, a thread per connection (a fake
// must be able to hold an answer for a minute, as a synchronous image API does), keep-alive, and the
// faults a real provider shows: slow answers and connections dropped without an answer.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gesso::fakes {

struct fake_request {
  std::string method;
  std::string path;                            ///< without the query
  std::string query;                           ///< after '?', undecoded
  std::map<std::string, std::string> headers;  ///< lower-case names
  std::string body;

  std::string header(const std::string& lower_name) const;
  std::string query_value(const std::string& name) const;
};

struct fake_response {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string body = {};
  bool drop = false;                   ///< close the connection without answering
  std::chrono::milliseconds delay{0};  ///< wait this long before answering
};

fake_response json_response(unsigned status, std::string body);

using fake_handler = std::function<fake_response(const fake_request&)>;

class fake_http_server {
 public:
  fake_http_server(const std::string& host, std::uint16_t port, fake_handler handler);
  ~fake_http_server();
  fake_http_server(const fake_http_server&) = delete;
  fake_http_server& operator=(const fake_http_server&) = delete;

  std::uint16_t port() const;
  /// Accepts until stop(); each connection on its own thread.
  void run();
  void stop();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::fakes
