#pragma once
// A small HTTP listener for processes that serve no API (the worker): GET /healthz and /readyz for
// Kubernetes probes and /metrics, answered on a thread of its own so a busy or stalled main loop cannot
// hide itself.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace gesso::runtime {

/// What a probe path answers: an HTTP status and a JSON body.
struct probe_answer {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class health_server {
 public:
  /// Listens on `host`:`port` (0 picks a free port) and answers every GET (and HEAD, without
  /// the body) with `answer(path)`; other methods get 405. Throws if it cannot bind.
  health_server(const std::string& host, std::uint16_t port,
                std::function<probe_answer(std::string_view path)> answer);
  ~health_server();  ///< stops listening and joins its thread
  health_server(const health_server&) = delete;
  health_server& operator=(const health_server&) = delete;

  std::uint16_t port() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::runtime
