#pragma once
// What the worker's parts share: the state behind worker::service, on one I/O thread. Internal to
// server/worker/.

#include "server/runtime/blocking_pool.hpp"
#include "server/runtime/metrics.hpp"
#include "server/worker/completer.hpp"
#include "server/worker/service.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <csignal>
#include <mutex>
#include <set>

namespace gesso::worker {
namespace asio = boost::asio;

struct service::impl {
  worker_settings settings;
  const catalog* models = nullptr;
  std::map<std::string, std::unique_ptr<engines::engine>, std::less<>> engines;
  storage::pool_settings database_settings;  ///< also opens the LISTEN connection
  storage::connection_pool connections;
  media::media_store* media = nullptr;
  asio::io_context ioc{1};                // one thread: every coroutine below runs here, so no locks
  runtime::blocking_pool database_calls;  ///< threads that wait on the database
  runtime::blocking_pool engine_threads;  ///< threads that run engines (and the media sweep)
  completer completions{ioc.get_executor(), database_calls, connections, 128};
  asio::steady_timer wake{ioc};
  asio::steady_timer rescue_timer{ioc};
  asio::signal_set signals{ioc, SIGTERM, SIGINT};
  bool wake_pending = false;
  std::atomic<int> active{0};                   ///< tasks held; written on the I/O thread, read by metrics
  std::set<asio::steady_timer*> latency_waits;  ///< cancelled by a drain: those tasks are released
  std::atomic<bool> stopping{false};
  std::atomic<std::int64_t> last_loop{std::chrono::steady_clock::now().time_since_epoch().count()};
  std::atomic<bool> database_ok{true};

  // Metrics (docs/operations.md#metrics), served on the probe listener.
  runtime::metrics::registry registry;
  runtime::metrics::counter_family& claimed =
      registry.counter("gesso_tasks_claimed_total", "Tasks claimed (each attempt), by model.", {"model"});
  runtime::metrics::counter_family& finished = registry.counter(
      "gesso_tasks_finished_total",
      "Attempts finalized, by model and outcome: succeeded, failed (refunded), retry, waiting (on a remote "
      "engine).",
      {"model", "outcome"});
  runtime::metrics::counter_family& refunded = registry.counter(
      "gesso_tasks_refunded_total", "Failed tasks refunded by this worker, by model.", {"model"});
  runtime::metrics::histogram_family& claim_seconds =
      registry.histogram("gesso_claim_duration_seconds", "Duration of one claim statement.", {},
                         runtime::metrics::latency_bounds());
  runtime::metrics::histogram_family& engine_seconds = registry.histogram(
      "gesso_engine_duration_seconds", "Engine time per attempt (simulated latency included), by model.",
      {"model"}, runtime::metrics::latency_bounds());
  runtime::metrics::counter_family& route_calls = registry.counter(
      "gesso_provider_requests_total",
      "Calls to provider routes, by model, route (its index in the model's routes), engine and outcome: ok, "
      "retry (unavailable) or the failure kind.",
      {"model", "route", "engine", "outcome"});
  runtime::metrics::histogram_family& route_seconds = registry.histogram(
      "gesso_provider_request_duration_seconds",
      "Duration of one call to a provider route (submit or poll, output download excluded).",
      {"model", "route", "engine"}, runtime::metrics::latency_bounds());
  std::mutex route_mutex;  ///< guards route_in_flight (written by maintenance, read by scrapes)
  runtime::metrics::registry::labeled_values route_in_flight;
  std::atomic<std::int64_t> queue_due{0};
  std::atomic<std::int64_t> remote_in_flight{0};
  std::atomic<double> oldest_due_seconds{0};

  impl(worker_settings s, storage::pool_settings d)
      : settings(std::move(s)),
        database_settings(std::move(d)),
        connections(database_settings),
        database_calls(4, static_cast<std::size_t>(settings.concurrency) * 4 + 64),
        engine_threads(static_cast<std::size_t>(settings.render_threads), 1'000'000) {}

  // Wakes the claim loop now, or right after its current claim if it is busy.
  void wake_now() {
    wake_pending = true;
    wake.cancel();
  }
};

}  // namespace gesso::worker
