#pragma once
// The API's routes: translate HTTP into core and storage calls and back, nothing else.

#include "core/catalog.hpp"
#include "core/limits.hpp"
#include "core/network_policy.hpp"
#include "core/task_json.hpp"
#include "server/api/http_types.hpp"
#include "server/api/rate_limiter.hpp"
#include "server/api/task_signal.hpp"
#include "server/api/task_waiters.hpp"
#include "server/media/media_store.hpp"
#include "server/runtime/blocking_pool.hpp"
#include "server/runtime/metrics.hpp"
#include "storage/connection_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace gesso::api {

using gesso::media_links;  ///< how result URLs are made (core/task_json.hpp)

/// The API server's metric families (docs/operations.md#metrics); the frontend creates them.
struct api_metrics {
  runtime::metrics::registry registry;
  runtime::metrics::counter_family& requests;
  runtime::metrics::histogram_family& durations;
  runtime::metrics::counter_family& tasks_created;
  runtime::metrics::counter_family& credits_charged;
  api_metrics();
};

/// What the handlers need; owned by main() and alive for the whole run.
struct api_context {
  const catalog* models = nullptr;
  storage::connection_pool* connections = nullptr;   ///< the database connections
  runtime::blocking_pool* database_calls = nullptr;  ///< threads that wait on the database
  media_links* links = nullptr;
  const media::media_store* media = nullptr;
  task_signal* wake_workers = nullptr;     ///< pokes workers after creates (one NOTIFY per window)
  const fetch_policy* fetching = nullptr;  ///< what workers may fetch: image URLs they would refuse are 400
  const std::atomic<bool>* drain_started =
      nullptr;                         ///< set by the frontend when a drain begins: /readyz fails
  api_metrics* metrics = nullptr;      ///< set by the frontend
  limit_settings limit_defaults = {};  ///< the configuration's per-account limits (core/limits.hpp)
  rate_limiter* limiter = nullptr;     ///< the per-key rate limit; unset, none is applied
  task_waiters* waiters = nullptr;     ///< requests waiting for final tasks; unset, ?wait answers at once
};

/// A response body sent from an open file (media downloads): `length` bytes from `offset`, read in
/// pieces of at most file_piece_bytes while they are written, so a download never holds the file.
class file_body {
 public:
  file_body(int fd, std::uint64_t from, std::uint64_t bytes) : fd_(fd), offset(from), length(bytes) {}
  file_body(file_body&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), offset(other.offset), length(other.length) {}
  file_body& operator=(file_body&&) = delete;
  ~file_body();
  /// Up to `n` bytes at `at`; 0 when nothing could be read (the file shrank or an I/O error).
  std::size_t read(char* into, std::size_t n, std::uint64_t at) const;

 private:
  int fd_;

 public:
  std::uint64_t offset;
  std::uint64_t length;
};

inline constexpr std::size_t file_piece_bytes = 64 * 1024;

/// A query waiting for its task to be final (GET …?wait=N): registered with the waiters and read once
/// by the handler, then answered by finish_wait.
struct parked_wait {
  std::string task_id;
  std::string key_hash;
  std::chrono::seconds seconds{0};
  std::shared_ptr<task_waiters::waiter> waiter;
};

/// One request and what the frontend knows of it. Coroutines take it by pointer: g++ 12 mishandles
/// class-type temporaries that live across a co_await (GCC PR 100611).
struct request_context {
  request req;
  std::string request_id;
  std::string_view route = "other";     ///< set by the router: the metrics label of the endpoint
  std::optional<file_body> file;        ///< set by a handler whose body is a file: sent after the header
  std::unique_ptr<parked_wait> parked;  ///< set by a query that waits: answer it with finish_wait
};

/// The refusal a request gets before its body is read (unknown route, wrong method, a create with a
/// malformed key or a non-JSON Content-Type), or nothing; the frontend sends 100 Continue only after it.
std::optional<response> refuse_before_body(const request& header, request_context* rc);

/// Answers one request. Never throws: every failure becomes a response (api_response.hpp). A query
/// that waits for its task comes back with rc->parked set and a response that only carries its
/// headers; the frontend then calls finish_wait, so that none of the handler's frames stay alive while
/// it waits (docs/api.md#waiting: a waiting request holds its connection and a timer, little else;
/// server/api/parked_waits.hpp).
boost::asio::awaitable<response> handle_request(api_context* ctx, request_context* rc);

}  // namespace gesso::api
