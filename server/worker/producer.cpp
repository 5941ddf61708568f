#include "server/worker/producer.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "server/worker/executor.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace gesso::worker {
using asio::awaitable;

awaitable<void> claim_loop(service::impl* w) {
  while (!w->stopping) {
    w->last_loop = std::chrono::steady_clock::now().time_since_epoch().count();
    const int free = w->settings.concurrency - w->active;
    bool database_down = false;
    if (free > 0) {
      std::vector<storage::claimed_task> claimed;
      try {
        auto claim = [w, free] {
          return storage::claim_due(w->connections, w->settings.id, free, w->settings.lease,
                                    w->settings.default_account_cap);
        };
        const auto started = std::chrono::steady_clock::now();
        claimed = co_await w->database_calls.run(std::move(claim));
        w->claim_seconds.observe(
            {}, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      } catch (const std::exception& e) {
        database_down = true;
        log::write(log::level::warn, "claim_failed", {{"reason", e.what()}});
      }
      w->database_ok = !database_down;
      for (auto& task : claimed) {
        w->claimed.add({task.model_id});
        ++w->active;
        log::write(log::level::info, "task_claimed", {{"task_id", task.id}, {"attempt", task.attempt}});
        asio::co_spawn(w->ioc, run_task(w, std::make_shared<storage::claimed_task>(std::move(task))),
                       asio::detached);
      }
    }
    if (w->wake_pending && !database_down) {
      w->wake_pending = false;
      continue;
    }
    co_await runtime::sleep_for(&w->wake, w->settings.poll);
    w->wake_pending = false;
  }
}

}  // namespace gesso::worker
