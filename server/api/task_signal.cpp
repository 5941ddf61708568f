#include "server/api/task_signal.hpp"

#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "storage/notifications.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace gesso::api {
namespace asio = boost::asio;

struct task_signal_access {
  static asio::awaitable<void> send_after_window(task_signal* s) {
    asio::steady_timer timer(s->executor_);
    co_await runtime::sleep_for(&timer, s->window_);
    s->armed_ = false;  // creates from now on arm the next window
    try {
      storage::connection_pool* connections = s->connections_;
      co_await s->database_calls_->run_internal([connections] {
        storage::notify_tasks_created(*connections);
        return true;
      });
    } catch (const std::exception& e) {
      // Workers also poll, so a lost wake-up only adds latency.
      log::write(log::level::warn, "notify_failed", {{"reason", e.what()}});
    }
  }
};

void task_signal::poke() {
  if (!armed_.exchange(true)) {
    asio::co_spawn(executor_, task_signal_access::send_after_window(this), asio::detached);
  }
}

}  // namespace gesso::api
