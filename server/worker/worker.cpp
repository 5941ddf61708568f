#include "server/worker/worker.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/blocking_pool.hpp"
#include "server/runtime/log.hpp"
#include "server/runtime/metrics.hpp"
#include "server/worker/completer.hpp"
#include "server/worker/lease_decision.hpp"
#include "storage/notifications.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <random>
#include <set>
#include <thread>

namespace gesso::server {
namespace asio = boost::asio;
using asio::awaitable;
using namespace std::chrono_literals;

struct worker::impl {
  worker_settings settings;
  const catalog* models = nullptr;
  std::map<std::string, std::unique_ptr<engines::engine>, std::less<>> engines;
  storage::pool_settings database;
  storage::connection_pool pool;
  media::media_store* media = nullptr;
  asio::io_context ioc{1};  // one thread: every coroutine below runs here, so no locks
  blocking_pool db;
  blocking_pool render;
  completer completions{ioc.get_executor(), db, pool, 128};
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
  metrics::registry registry;
  metrics::counter_family& claimed =
      registry.counter("gesso_tasks_claimed_total", "Tasks claimed (each attempt), by model.", {"model"});
  metrics::counter_family& finished = registry.counter(
      "gesso_tasks_finished_total",
      "Attempts finalized, by model and outcome: succeeded, failed (refunded), retry, waiting (on a remote "
      "engine).",
      {"model", "outcome"});
  metrics::counter_family& refunded = registry.counter(
      "gesso_tasks_refunded_total", "Failed tasks refunded by this worker, by model.", {"model"});
  metrics::histogram_family& claim_seconds = registry.histogram(
      "gesso_claim_duration_seconds", "Duration of one claim statement.", {}, metrics::latency_bounds());
  metrics::histogram_family& engine_seconds = registry.histogram(
      "gesso_engine_duration_seconds", "Engine time per attempt (simulated latency included), by model.",
      {"model"}, metrics::latency_bounds());
  std::atomic<std::int64_t> queue_due{0};
  std::atomic<std::int64_t> remote_in_flight{0};
  std::atomic<double> oldest_due_seconds{0};

  impl(worker_settings s, storage::pool_settings d)
      : settings(std::move(s)),
        database(std::move(d)),
        pool(database),
        db(4, static_cast<std::size_t>(settings.concurrency) * 4 + 64),
        render(static_cast<std::size_t>(settings.render_threads), 1'000'000) {}

  // Wakes the claim loop now, or right after its current claim if it is busy.
  void wake_now() {
    wake_pending = true;
    wake.cancel();
  }
};

namespace {

struct heartbeat_state {
  explicit heartbeat_state(asio::io_context& ioc) : timer(ioc) {}
  asio::steady_timer timer;
  bool done = false;
  bool lost = false;
};

// Extends the lease every third of its length until the task is done; marks it lost if another
// worker has taken it over (this one was presumed dead).
awaitable<void> heartbeat(worker::impl* w, std::shared_ptr<storage::claimed_task> task,
                          std::shared_ptr<heartbeat_state> state) {
  while (!state->done) {
    co_await runtime::sleep_for(&state->timer, w->settings.lease / 3);
    if (state->done) {
      break;
    }
    try {
      // Raw pointers only: a lambda with non-trivial members inside a co_await trips g++ 12 (PR 100611).
      auto extend = [w, t = task.get()] {
        return storage::extend_lease(w->pool, t->id, t->lease_token, w->settings.lease);
      };
      const bool held = co_await w->db.run(std::move(extend));
      if (!held) {
        state->lost = true;
        log::write(log::level::warn, "lease_lost", {{"task_id", task->id}});
        break;
      }
    } catch (const std::exception& e) {
      // The database is unreachable: keep trying; if the lease expires meanwhile, the CAS at the end fails.
      log::write(log::level::warn, "heartbeat_failed", {{"task_id", task->id}, {"reason", e.what()}});
    }
  }
}

double jitter() {
  static thread_local std::mt19937 random{std::random_device{}()};
  return std::uniform_real_distribution<double>(0, 1)(random);
}

// The metrics label of each applied lease end (give_back is not an outcome: the task was not run).
std::string_view outcome_label(storage::lease_end::kind how) {
  using kind = storage::lease_end::kind;
  switch (how) {
    case kind::succeeded:
      return "succeeded";
    case kind::failed:
      return "failed";
    case kind::retry:
      return "retry";
    case kind::wait:
      return "waiting";
    case kind::give_back:
      return "released";
  }
  return "other";
}

// Applies a lease end through the completer, retrying while the database is unavailable. Gives up after
// a while: the lease then expires and the task is claimed again (outputs are re-rendered).
awaitable<void> complete(worker::impl* w, std::shared_ptr<storage::claimed_task> task,
                         std::shared_ptr<storage::lease_end> end) {
  asio::steady_timer pause(w->ioc);
  for (int attempt = 0; attempt < 20; ++attempt) {
    bool applied = false;
    bool unavailable = false;
    try {
      storage::lease_end copy = *end;  // named: no temporary inside the co_await (GCC PR 100611)
      applied = co_await w->completions.complete(std::move(copy));
    } catch (const std::exception& e) {
      unavailable = true;
      log::write(log::level::warn, "finalize_failed", {{"task_id", task->id}, {"reason", e.what()}});
    }
    if (unavailable) {  // no co_await inside a catch block
      co_await runtime::sleep_for(&pause, std::min(5000ms, 200ms * (attempt + 1)));
      continue;
    }
    const std::string_view label = outcome_label(end->how);
    if (applied && end->how != storage::lease_end::kind::give_back) {
      w->finished.add({task->model_id, label});
      if (end->how == storage::lease_end::kind::failed) {
        w->refunded.add({task->model_id});
      }
    }
    log::write(applied ? log::level::info : log::level::warn,
               applied ? "task_finalized" : "finalize_lost_lease",
               {{"task_id", task->id}, {"outcome", std::string(label)}, {"attempt", task->attempt}});
    co_return;
  }
}

awaitable<void> run_task(worker::impl* w, std::shared_ptr<storage::claimed_task> task) {
  auto outcome = std::make_shared<engines::engine_outcome>();
  const model_spec* model = w->models->find(task->model_id);
  const auto engine_it = w->engines.find(task->model_id);
  if (model == nullptr || engine_it == w->engines.end()) {
    outcome->result = engines::engine_outcome::kind::failed;
    outcome->error = "model " + task->model_id + " is no longer offered";
  } else {
    auto state = std::make_shared<heartbeat_state>(w->ioc);
    asio::co_spawn(w->ioc, heartbeat(w, task, state), asio::detached);
    auto job = std::make_shared<engines::engine_job>();
    job->task_id = task->id;
    job->model = model;
    job->prompt = task->prompt;
    job->aspect_ratio = task->aspect_ratio;
    job->image_urls = task->image_urls;
    job->attempt = task->attempt;
    job->provider_job = task->provider_job;
    engines::engine* engine = engine_it->second.get();
    const auto engine_started = std::chrono::steady_clock::now();
    if (const auto latency = engine->latency(*job); latency.count() > 0 && !w->stopping) {
      asio::steady_timer wait(w->ioc);
      w->latency_waits.insert(&wait);
      co_await runtime::sleep_for(&wait, latency);
      w->latency_waits.erase(&wait);
    }
    if (w->stopping) {
      // Draining before any work was done: give the task back for another worker instead of waiting.
      state->done = true;
      state->timer.cancel();
      auto end =
          std::make_shared<storage::lease_end>(storage::lease_end::give_back(task->id, task->lease_token));
      co_await complete(w, task, end);
      --w->active;
      w->wake_now();
      co_return;
    }
    try {
      auto render = [engine, j = job.get(), w] { return engine->run(*j, *w->media); };
      *outcome = co_await w->render.run(std::move(render));
    } catch (const std::exception& e) {
      log::write(log::level::error, "engine_error", {{"task_id", task->id}, {"reason", e.what()}});
      outcome->result = engines::engine_outcome::kind::retry;
      outcome->error = "the engine hit an internal error";
    }
    w->engine_seconds.observe(
        {task->model_id},
        std::chrono::duration<double>(std::chrono::steady_clock::now() - engine_started).count());
    state->done = true;
    state->timer.cancel();
    if (state->lost) {
      --w->active;
      w->wake_now();
      co_return;
    }
  }
  auto end = std::make_shared<storage::lease_end>(decide_lease_end(*task, *outcome, jitter()));
  co_await complete(w, task, end);
  --w->active;
  w->wake_now();
}

awaitable<void> claim_loop(worker::impl* w) {
  while (!w->stopping) {
    w->last_loop = std::chrono::steady_clock::now().time_since_epoch().count();
    const int free = w->settings.concurrency - w->active;
    bool database_down = false;
    if (free > 0) {
      std::vector<storage::claimed_task> claimed;
      try {
        auto claim = [w, free] {
          return storage::claim_due(w->pool, w->settings.id, free, w->settings.lease);
        };
        const auto started = std::chrono::steady_clock::now();
        claimed = co_await w->db.run(std::move(claim));
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

// Any worker fails and refunds overdue tasks, and deletes expired media.
awaitable<void> housekeeping(worker::impl* w) {
  auto last_retention = std::chrono::steady_clock::now() - 24h;
  while (!w->stopping) {
    try {
      auto rescue = [w] { return storage::rescue_overdue(w->pool, 100); };
      const int rescued = co_await w->db.run(std::move(rescue));
      auto stats = [w] { return storage::read_queue_stats(w->pool); };
      const storage::queue_stats queue = co_await w->db.run(std::move(stats));
      w->queue_due = queue.due;
      w->oldest_due_seconds = queue.oldest_due_seconds;
      w->remote_in_flight = queue.remote_in_flight;
      if (rescued > 0) {
        log::write(log::level::info, "tasks_rescued", {{"count", rescued}});
      }
      if (std::chrono::steady_clock::now() - last_retention > 10min) {
        last_retention = std::chrono::steady_clock::now();
        auto sweep = [w] { return w->media->delete_older_than(w->settings.media_retention); };
        const std::size_t deleted = co_await w->render.run(std::move(sweep));
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

}  // namespace

worker::worker(worker_settings settings, const catalog& models,
               const engines::engine_environment& environment, storage::pool_settings database,
               media::media_store& media)
    : impl_(std::make_unique<impl>(std::move(settings), std::move(database))) {
  impl_->models = &models;
  impl_->media = &media;
  impl* w = impl_.get();
  w->registry.gauge("gesso_tasks_held", "Tasks this worker holds (claimed, not yet finalized).",
                    [w] { return static_cast<double>(w->active.load()); });
  w->registry.gauge("gesso_tasks_capacity", "Tasks this worker may hold (GESSO_WORKER_CONCURRENCY).",
                    [w] { return static_cast<double>(w->settings.concurrency); });
  w->registry.gauge("gesso_queue_due_tasks",
                    "Tasks due for a claim now, all workers together (sampled every rescue interval).",
                    [w] { return static_cast<double>(w->queue_due.load()); });
  w->registry.gauge("gesso_queue_oldest_due_seconds",
                    "How long the oldest due task has been waiting (sampled).",
                    [w] { return w->oldest_due_seconds.load(); });
  w->registry.gauge("gesso_remote_tasks_in_flight",
                    "Tasks submitted to a remote engine and waiting for it, all workers together (sampled).",
                    [w] { return static_cast<double>(w->remote_in_flight.load()); });
  for (const model_spec& m : models.models()) {
    impl_->engines.emplace(m.id, engines::make_engine(m, environment));
  }
}

worker::~worker() = default;

std::string worker::metrics_text() const {
  return impl_->registry.render();
}

worker::health worker::status() const {
  const std::chrono::steady_clock::time_point last{
      std::chrono::steady_clock::duration{impl_->last_loop.load()}};
  return {impl_->stopping.load(), impl_->database_ok.load(), std::chrono::steady_clock::now() - last};
}

void worker::run() {
  impl& w = *impl_;
  // Wake-ups from servers; a separate thread because LISTEN blocks on its own connection.
  std::thread listener([&w] {
    while (!w.stopping) {
      try {
        storage::task_listener listen(w.database);
        while (!w.stopping) {
          if (listen.wait(250ms)) {
            asio::post(w.ioc, [&w] { w.wake_now(); });
          }
        }
      } catch (const std::exception& e) {
        log::write(log::level::warn, "listener_failed", {{"reason", e.what()}});
        for (int i = 0; i < 10 && !w.stopping; ++i) {
          std::this_thread::sleep_for(100ms);
        }
      }
    }
  });
  w.signals.async_wait([&w](const boost::system::error_code& ec, int signal) {
    if (ec) {
      return;
    }
    log::write(log::level::info, "draining", {{"signal", signal}, {"held_tasks", w.active}});
    w.stopping = true;
    w.wake.cancel();
    w.rescue_timer.cancel();
    for (asio::steady_timer* wait : w.latency_waits) {
      wait->cancel();
    }
  });
  asio::co_spawn(w.ioc, claim_loop(&w), asio::detached);
  asio::co_spawn(w.ioc, housekeeping(&w), asio::detached);
  log::write(log::level::info, "worker_started",
             {{"worker_id", w.settings.id}, {"concurrency", w.settings.concurrency}});
  w.ioc.run();  // returns when the loops have stopped and every held task is finalized
  listener.join();
  w.db.join();
  w.render.join();
  log::write(log::level::info, "stopped", {});
}

}  // namespace gesso::server
