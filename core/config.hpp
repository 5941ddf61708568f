#pragma once
// The one typed configuration of every Gesso process, read from GESSO_* environment variables.

#include "core/error.hpp"
#include "core/network_policy.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gesso {

/// Every setting, with its default; docs/configuration.md lists them.
struct config {
  std::string database_url;  ///< GESSO_DATABASE_URL: libpq connection string or URI
  std::string listen_host = "0.0.0.0";
  std::uint16_t listen_port = 8080;                    ///< GESSO_LISTEN "host:port"; port 0 picks a free port
  int io_threads = 0;                                  ///< GESSO_IO_THREADS; 0 = one per core
  int db_pool_size = 16;                               ///< GESSO_DB_POOL_SIZE: connections = database threads
  int db_queue_limit = 256;                            ///< GESSO_DB_QUEUE_LIMIT: waiting requests before 503
  std::chrono::milliseconds db_connect_timeout{3000};  ///< GESSO_DB_CONNECT_TIMEOUT_MS
  std::chrono::milliseconds db_statement_timeout{5000};  ///< GESSO_DB_STATEMENT_TIMEOUT_MS
  std::chrono::milliseconds idle_timeout{60000};         ///< GESSO_IDLE_TIMEOUT_MS: keep-alive wait
  std::chrono::milliseconds read_timeout{30000};         ///< GESSO_READ_TIMEOUT_MS: one whole request
  std::chrono::milliseconds write_timeout{30000};        ///< GESSO_WRITE_TIMEOUT_MS: one whole response
  std::size_t max_body_bytes = 8 * 1024 * 1024;          ///< GESSO_MAX_BODY_BYTES
  std::size_t max_header_bytes = 16 * 1024;              ///< GESSO_MAX_HEADER_BYTES
  std::chrono::milliseconds drain_grace{5000};  ///< GESSO_DRAIN_GRACE_MS: /readyz fails, still serving
  int max_connections = 10000;  ///< GESSO_MAX_CONNECTIONS: open client connections; idle ones give way
  /// GESSO_BODY_MEMORY_BYTES: request bodies held and parsed at once, all connections together; a body
  /// that does not fit is refused with 503 before it is read (docs/security.md#bounds).
  std::size_t body_memory_bytes = 128 * 1024 * 1024;
  std::string admin_listen_host;                   ///< GESSO_ADMIN_LISTEN "host:port": /metrics of a server
  std::optional<std::uint16_t> admin_listen_port;  ///< unset: no admin listener
  std::string catalog_path;                        ///< GESSO_CATALOG: model catalog file
  std::string log_level = "info";                  ///< GESSO_LOG_LEVEL: debug, info, warn, error

  // Media: shared by servers (which serve it) and workers (which write it).
  std::string media_dir = "gesso-media";       ///< GESSO_MEDIA_DIR
  std::string public_url;                      ///< GESSO_PUBLIC_URL; empty = the bound address
  std::string media_signing_key;               ///< GESSO_MEDIA_SIGNING_KEY; empty = random per process
  std::chrono::seconds media_url_ttl{86400};   ///< GESSO_MEDIA_URL_TTL_S
  std::chrono::hours media_retention{168};     ///< GESSO_MEDIA_RETENTION_HOURS
  std::chrono::milliseconds notify_window{5};  ///< GESSO_NOTIFY_WINDOW_MS: coalesces worker wake-ups

  // Per-account limits' defaults (docs/api.md#limits); an account's own setting wins. 0 = unlimited.
  int rate_limit_rps = 0;        ///< GESSO_RATE_LIMIT_RPS: API requests per second per key
  int rate_limit_burst = 0;      ///< GESSO_RATE_LIMIT_BURST: requests above the rate at once; 0 = 2 × rps
  int max_concurrent_tasks = 0;  ///< GESSO_MAX_CONCURRENT_TASKS: an account's tasks running at once

  // Workers.
  std::string worker_listen_host;                   ///< GESSO_WORKER_LISTEN "host:port": /healthz and /readyz
  std::optional<std::uint16_t> worker_listen_port;  ///< unset: no probe listener
  std::string worker_id;                            ///< GESSO_WORKER_ID; empty = host name and process id
  int worker_concurrency = 32;                      ///< GESSO_WORKER_CONCURRENCY: tasks at once
  int worker_render_threads = 0;                    ///< GESSO_WORKER_RENDER_THREADS; 0 = one per core
  std::chrono::milliseconds worker_lease{30000};    ///< GESSO_WORKER_LEASE_MS
  std::chrono::milliseconds worker_poll{1000};      ///< GESSO_WORKER_POLL_MS: claim even without a wake-up
  std::chrono::milliseconds worker_rescue_interval{5000};  ///< GESSO_WORKER_RESCUE_MS
  std::string ffmpeg = "ffmpeg";  ///< GESSO_FFMPEG: the encoder the builtin engine runs
  std::vector<ip_network>
      fetch_allowed_networks;  ///< GESSO_FETCH_ALLOW_NETWORKS: non-public networks allowed
  std::vector<std::string>
      webhook_http_hosts;  ///< GESSO_WEBHOOK_HTTP_HOSTS: callback hosts allowed over http
};

/// Reads the configuration from `environment` ("NAME=value" entries, as in `environ`). Unknown GESSO_*
/// names and bad values are errors, given as one line that names the variable.
checked<config> load_config(std::span<const char* const> environment);

}  // namespace gesso
