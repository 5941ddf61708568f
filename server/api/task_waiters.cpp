#include "server/api/task_waiters.hpp"

#include "server/runtime/log.hpp"
#include "storage/notifications.hpp"

#include <boost/asio/post.hpp>

namespace gesso::api {
using namespace std::chrono_literals;

namespace {

void cancel_on_its_executor(const std::shared_ptr<task_waiters::waiter>& w) {
  boost::asio::post(w->timer.get_executor(), [w] {
    w->woken = true;
    w->timer.cancel();
  });
}

}  // namespace

task_waiters::task_waiters(storage::pool_settings settings)
    : listener_([this, settings = std::move(settings)] { listen(settings); }) {}

task_waiters::~task_waiters() {
  stopping_ = true;
  listener_.join();
}

bool task_waiters::add(const std::string& task_id, const std::shared_ptr<waiter>& w) {
  std::lock_guard lock(mutex_);
  if (closing_) {
    return false;
  }
  waiting_.emplace(task_id, w);
  return true;
}

void task_waiters::remove(const std::string& task_id, const std::shared_ptr<waiter>& w) {
  std::lock_guard lock(mutex_);
  const auto [first, last] = waiting_.equal_range(task_id);
  for (auto it = first; it != last; ++it) {
    if (it->second == w) {
      waiting_.erase(it);
      return;
    }
  }
}

void task_waiters::wake(const std::vector<std::string>& task_ids) {
  std::lock_guard lock(mutex_);
  for (const std::string& id : task_ids) {
    const auto [first, last] = waiting_.equal_range(id);
    for (auto it = first; it != last; ++it) {
      cancel_on_its_executor(it->second);
    }
  }
}

void task_waiters::wake_all() {
  std::lock_guard lock(mutex_);
  for (const auto& [id, w] : waiting_) {
    cancel_on_its_executor(w);
  }
}

void task_waiters::close() {
  closing_ = true;
  wake_all();
}

std::size_t task_waiters::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

// The listening loop: a broken connection wakes every waiter (a notification may have been lost; each
// reads its task again) and reconnects after a second.
void task_waiters::listen(storage::pool_settings settings) {
  while (!stopping_) {
    try {
      storage::final_listener listener(settings);
      while (!stopping_) {
        const std::vector<std::string> ids = listener.wait(200ms);
        if (!ids.empty()) {
          wake(ids);
        }
      }
    } catch (const std::exception& e) {
      log::write(log::level::warn, "final_listener_lost", {{"reason", e.what()}});
      wake_all();
      for (int i = 0; i < 5 && !stopping_; ++i) {
        std::this_thread::sleep_for(200ms);
      }
    }
  }
}

}  // namespace gesso::api
