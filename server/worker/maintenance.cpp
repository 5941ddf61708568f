#include "server/worker/maintenance.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "storage/task_queue.hpp"
#include "storage/tasks.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace gesso::worker {
using asio::awaitable;
using namespace std::chrono_literals;

namespace {

// A task failed at its deadline may still be running at its provider: cancel it there, where the
// provider can, on an engine thread, without waiting for the answers.
void cancel_at_providers(service::impl* w, const std::vector<storage::rescued_task>& rescued) {
  for (const storage::rescued_task& t : rescued) {
    const auto engine = w->engines.find(t.model_id);
    if (!t.provider_job || engine == w->engines.end()) {
      continue;
    }
    engines::engine* e = engine->second.get();
    auto cancel = [e, job = *t.provider_job, id = t.id] {
      try {
        e->cancel(job);
        log::write(log::level::info, "provider_job_cancelled", {{"task_id", id}});
      } catch (const std::exception& error) {
        log::write(log::level::warn, "provider_cancel_failed", {{"task_id", id}, {"reason", error.what()}});
      }
    };
    asio::co_spawn(w->ioc, w->engine_threads.run(std::move(cancel)), asio::detached);
  }
}

}  // namespace

awaitable<void> housekeeping(service::impl* w) {
  auto last_retention = std::chrono::steady_clock::now() - 24h;
  while (!w->stopping) {
    try {
      auto rescue = [w] { return storage::rescue_overdue(w->connections, 100); };
      const std::vector<storage::rescued_task> rescued_tasks =
          co_await w->database_calls.run(std::move(rescue));
      const auto rescued = static_cast<std::int64_t>(rescued_tasks.size());
      cancel_at_providers(w, rescued_tasks);
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
      auto purge = [w] { return storage::purge_idempotency_keys(w->connections, 1000); };
      if (const std::int64_t forgotten = co_await w->database_calls.run(std::move(purge)); forgotten > 0) {
        log::write(log::level::info, "idempotency_keys_expired", {{"count", forgotten}});
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
