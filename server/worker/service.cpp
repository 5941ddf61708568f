#include "server/worker/service.hpp"

#include "server/runtime/log.hpp"
#include "server/worker/maintenance.hpp"
#include "server/worker/producer.hpp"
#include "server/worker/webhook_sender.hpp"
#include "server/worker/worker_state.hpp"
#include "storage/notifications.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <thread>

namespace gesso::worker {
using namespace std::chrono_literals;

service::service(worker_settings settings, const catalog& models,
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
  // Route caps (max_concurrency) are counted in the database, across every worker.
  engines::engine_environment with_caps = environment;
  with_caps.take_route_slot = [w](const std::string& route, int cap, const std::string& task_id) {
    return storage::take_route_slot(w->connections, route, task_id, cap);
  };
  with_caps.observe_route = [w](const engines::route_call& c) {
    const std::string route = std::to_string(c.route);
    w->route_calls.add({c.model, route, c.engine, c.outcome});
    w->route_seconds.observe({c.model, route, c.engine}, c.seconds);
  };
  w->registry.gauge_family(
      "gesso_route_circuit_state",
      "Each provider route's circuit in this worker: 0 closed, 1 half-open, 2 open.",
      {"model", "route", "engine"}, [w] {
        runtime::metrics::registry::labeled_values out;
        for (const auto& [model, engine] : w->engines) {
          for (const engines::route_health& r : engine->routes_health()) {
            out.push_back({{model, std::to_string(r.route), r.engine}, static_cast<double>(r.circuit)});
          }
        }
        return out;
      });
  w->registry.gauge_family(
      "gesso_route_tasks_in_flight",
      "Tasks submitted to each provider route and not yet ended, all workers together (sampled).",
      {"model", "route"}, [w] {
        std::lock_guard lock(w->route_mutex);
        return w->route_in_flight;
      });
  for (const model_spec& m : models.models()) {
    impl_->engines.emplace(m.id, engines::make_engine(m, with_caps));
  }
}

service::~service() = default;

std::string service::metrics_text() const {
  return impl_->registry.render();
}

service::health service::status() const {
  const std::chrono::steady_clock::time_point last{
      std::chrono::steady_clock::duration{impl_->last_loop.load()}};
  return {impl_->stopping.load(), impl_->database_ok.load(), std::chrono::steady_clock::now() - last};
}

void service::run() {
  impl& w = *impl_;
  // Wake-ups from servers; a separate thread because LISTEN blocks on its own connection.
  std::thread listener([&w] {
    while (!w.stopping) {
      try {
        storage::task_listener listen(w.database_settings);
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
  asio::co_spawn(w.ioc, send_webhooks(&w), asio::detached);
  log::write(log::level::info, "worker_started",
             {{"worker_id", w.settings.id}, {"concurrency", w.settings.concurrency}});
  w.ioc.run();  // returns when the loops have stopped and every held task is finalized
  listener.join();
  w.database_calls.join();
  w.engine_threads.join();
  log::write(log::level::info, "stopped", {});
}

}  // namespace gesso::worker
