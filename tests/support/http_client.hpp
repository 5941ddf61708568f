#pragma once
// A small blocking HTTP/1.1 client for end-to-end tests, plus raw-bytes access for malformed requests.

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace gesso::testing {

struct http_reply {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;

  boost::json::value json() const;
  std::string header(const std::string& lower_name) const;
};

class http_client {
 public:
  http_client(std::string host, std::uint16_t port,
              std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : host_(std::move(host)), port_(port), timeout_(timeout) {}

  /// One request on a fresh connection; throws boost::system::system_error when it fails or takes
  /// longer than the client's timeout.
  http_reply request(const std::string& method, const std::string& target, const std::string& body = "",
                     const std::map<std::string, std::string>& headers = {}) const;

  /// POST /api/v1/tasks/create with a JSON body and a bearer key.
  http_reply create(const std::string& key, const std::string& body) const;

  /// GET /api/v1/tasks/{id} with a bearer key.
  http_reply query(const std::string& key, const std::string& task_id) const;

  /// POST /api/v1/tasks/{id}/cancel with a bearer key.
  http_reply cancel(const std::string& key, const std::string& task_id) const;

  /// Sends raw bytes, half-closes, and returns everything the server sends back until it closes.
  std::string raw(const std::string& bytes) const;

  std::uint16_t port() const { return port_; }

 private:
  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
};

/// The port from the server's "listening on http://HOST:PORT" line.
std::uint16_t port_from_listen_line(const std::string& line);

}  // namespace gesso::testing
