#pragma once
// The Beast HTTP/1.1 frontend: accepts connections, reads requests under timeouts and limits,
// hands each to the API, and drains gracefully on SIGTERM or SIGINT.

#include "core/config.hpp"
#include "server/api/api_handlers.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gesso::api {

/// How the frontend listens and protects itself.
/// How the frontend listens and protects itself. Every default lives in core/config.hpp: fill it with
/// http_settings_from.
struct http_settings {
  std::string host;
  std::uint16_t port = 0;  ///< 0 picks a free port
  int io_threads = 1;
  std::chrono::milliseconds idle_timeout{};
  std::chrono::milliseconds read_timeout{};
  std::chrono::milliseconds write_timeout{};
  std::size_t max_body_bytes = 0;
  std::size_t max_header_bytes = 0;
  /// Request bodies held and parsed at once, all connections together; beyond it 503 before reading.
  std::size_t body_memory_bytes = 0;
  /// Where /metrics is served (never on the public listener); empty: nowhere.
  std::string admin_host;
  std::uint16_t admin_port = 0;
  /// Open client connections at most. At the limit a new connection takes the place of the longest
  /// idle keep-alive connection; when none is idle, the new one is closed at once.
  std::size_t max_connections = 0;
  std::chrono::milliseconds notify_window{};  ///< coalescing of worker wake-ups
  /// After SIGTERM: how long /readyz fails while everything else is still served (with
  /// Connection: close), so load balancers take the server out before it stops accepting.
  std::chrono::milliseconds drain_grace{};
};

/// The frontend's settings from the process configuration: one I/O thread per core when io_threads is
/// 0, and the connection limit lowered to fit the open-file limit.
http_settings http_settings_from(const config& cfg);

class http_server {
 public:
  /// Serves `api`; the server provides api.wake_workers (the worker wake-up signal) itself.
  http_server(http_settings settings, api_context api);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds, prints "gesso-server listening on http://HOST:PORT" on standard output (and, with an admin
  /// listener, "gesso-server admin on http://HOST:PORT"), and serves until
  /// SIGTERM or SIGINT. Then /readyz fails for the drain grace while requests are still served (each
  /// response closes its connection); after it — or at once on a second signal — the server stops
  /// accepting, closes idle connections, finishes in-flight requests and returns. Throws if it
  /// cannot bind.
  void run();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::api
