#include "server/worker/maintenance.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "storage/task_queue.hpp"

namespace gesso::worker {
using asio::awaitable;
using namespace std::chrono_literals;

awaitable<void> housekeeping(service::impl* w) {
  auto last_retention = std::chrono::steady_clock::now() - 24h;
  while (!w->stopping) {
    try {
      auto rescue = [w] { return storage::rescue_overdue(w->connections, 100); };
      const int rescued = co_await w->database_calls.run(std::move(rescue));
      auto stats = [w] { return storage::read_queue_stats(w->connections); };
      const storage::queue_stats queue = co_await w->database_calls.run(std::move(stats));
      w->queue_due = queue.due;
      w->oldest_due_seconds = queue.oldest_due_seconds;
      w->remote_in_flight = queue.remote_in_flight;
      auto routes = [w] { return storage::read_route_in_flight(w->connections); };
      const std::vector<storage::route_in_flight> held = co_await w->database_calls.run(std::move(routes));
      runtime::metrics::registry::labeled_values sampled;
      for (const storage::route_in_flight& r : held) {
        sampled.push_back({{r.model_id, r.route}, static_cast<double>(r.tasks)});
      }
      {
        std::lock_guard lock(w->route_mutex);
        w->route_in_flight = std::move(sampled);
      }
      if (rescued > 0) {
        log::write(log::level::info, "tasks_rescued", {{"count", rescued}});
      }
      if (std::chrono::steady_clock::now() - last_retention > 10min) {
        last_retention = std::chrono::steady_clock::now();
        auto sweep = [w] { return w->media->delete_older_than(w->settings.media_retention); };
        const std::size_t deleted = co_await w->engine_threads.run(std::move(sweep));
        if (deleted > 0) {
          log::write(log::level::info, "media_expired", {{"count", deleted}});
        }
      }
    } catch (const std::exception& e) {
      log::write(log::level::warn, "housekeeping_failed", {{"reason", e.what()}});
    }
    co_await runtime::sleep_for(&w->rescue_timer, w->settings.rescue_interval);
  }
}

}  // namespace gesso::worker
