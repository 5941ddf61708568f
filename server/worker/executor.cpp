#include "server/worker/executor.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "server/worker/lease_decision.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <random>

namespace gesso::worker {
using asio::awaitable;
using namespace std::chrono_literals;

namespace {

struct heartbeat_state {
  explicit heartbeat_state(asio::io_context& ioc) : timer(ioc) {}
  asio::steady_timer timer;
  bool done = false;
  bool lost = false;
};

// Extends the lease every third of its length until the task is done; marks it lost if another
// worker has taken it over (this one was presumed dead).
awaitable<void> heartbeat(service::impl* w, std::shared_ptr<storage::claimed_task> task,
                          std::shared_ptr<heartbeat_state> state) {
  while (!state->done) {
    co_await runtime::sleep_for(&state->timer, w->settings.lease / 3);
    if (state->done) {
      break;
    }
    try {
      // Raw pointers only: a lambda with non-trivial members inside a co_await trips g++ 12 (PR 100611).
      auto extend = [w, t = task.get()] {
        return storage::extend_lease(w->connections, t->id, t->lease_token, w->settings.lease);
      };
      const bool held = co_await w->database_calls.run(std::move(extend));
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
awaitable<void> complete(service::impl* w, std::shared_ptr<storage::claimed_task> task,
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

// A task whose client asked to cancel it: stop it at its provider where the engine can (best effort:
// the task fails as canceled whatever the provider answers), and never run it.
awaitable<void> cancel_instead(service::impl* w, std::shared_ptr<storage::claimed_task> task,
                               engines::engine_outcome* outcome) {
  const auto engine_it = w->engines.find(task->model_id);
  if (task->provider_job && engine_it != w->engines.end()) {
    try {
      auto cancel = [e = engine_it->second.get(), job = task->provider_job->c_str()] { e->cancel(job); };
      co_await w->engine_threads.run(std::move(cancel));
      log::write(log::level::info, "provider_job_cancelled", {{"task_id", task->id}});
    } catch (const std::exception& e) {
      log::write(log::level::warn, "provider_cancel_failed", {{"task_id", task->id}, {"reason", e.what()}});
    }
  }
  outcome->result = engines::engine_outcome::kind::failed;
  outcome->failure = "canceled";
  outcome->error = "canceled at the client's request";
}

}  // namespace

awaitable<void> run_task(service::impl* w, std::shared_ptr<storage::claimed_task> task) {
  auto outcome = std::make_shared<engines::engine_outcome>();
  const model_spec* model = w->models->find(task->model_id);
  const auto engine_it = w->engines.find(task->model_id);
  if (task->cancel_requested) {
    co_await cancel_instead(w, task, outcome.get());
  } else if (model == nullptr || engine_it == w->engines.end()) {
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
      *outcome = co_await w->engine_threads.run(std::move(render));
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

}  // namespace gesso::worker
