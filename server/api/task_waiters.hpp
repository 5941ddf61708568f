#pragma once
// Requests waiting for their task to be final (GET /api/v1/tasks/{id}?wait=N, docs/api.md#waiting).
// One thread per server LISTENs on the channel every statement that makes tasks final notifies
// (storage/notifications.hpp) and wakes the requests waiting for those ids; a waiting request holds a
// timer and no database connection, and costs no statement until it wakes.

#include "storage/connection_pool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace gesso::api {

class task_waiters {
 public:
  /// One waiting request: its timer is cancelled (on its own executor) when its task is final.
  struct waiter {
    explicit waiter(const boost::asio::any_io_executor& executor) : timer(executor) {}
    boost::asio::steady_timer timer;
    /// Set with the cancel, on the waiter's executor (its connection's strand): a wake that comes
    /// before the timer's wait has started (while the task is read) is not lost.
    bool woken = false;
  };

  /// Starts the listening thread (it reconnects by itself; while it is down, waits run to their end).
  explicit task_waiters(storage::pool_settings settings);
  ~task_waiters();  ///< stops the thread
  task_waiters(const task_waiters&) = delete;
  task_waiters& operator=(const task_waiters&) = delete;

  /// Registers `w` as waiting for `task_id`; false once closing (answer at once).
  bool add(const std::string& task_id, const std::shared_ptr<waiter>& w);
  void remove(const std::string& task_id, const std::shared_ptr<waiter>& w);

  /// Wakes the waiters of these tasks; from any thread.
  void wake(const std::vector<std::string>& task_ids);

  /// The drain: wakes every waiter and lets no request wait from now on.
  void close();

  /// Requests waiting now.
  std::size_t waiting() const;

 private:
  void listen(storage::pool_settings settings);
  void wake_all();

  mutable std::mutex mutex_;
  std::unordered_multimap<std::string, std::shared_ptr<waiter>> waiting_;
  std::atomic<bool> closing_{false};
  std::atomic<bool> stopping_{false};
  std::thread listener_;
};

}  // namespace gesso::api
