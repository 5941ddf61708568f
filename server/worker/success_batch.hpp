#pragma once
// Finalizes a worker's successes in batches: every success that arrives while a batch is being written
// joins the next one, so under load one statement and one commit cover many tasks, and a lone success
// waits for nothing. Runs on the worker's single I/O thread: no locks.

#include "server/runtime/blocking_pool.hpp"
#include "storage/connection_pool.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <deque>

namespace gesso::server {

class success_batch {
 public:
  success_batch(boost::asio::any_io_executor executor, blocking_pool& db, storage::connection_pool& pool,
                std::size_t max_batch)
      : executor_(std::move(executor)), db_(&db), pool_(&pool), max_batch_(max_batch) {}

  /// Finalizes one held task's success: true when applied, false when its lease was lost. Throws what
  /// the database threw (the caller retries as for any finalize).
  boost::asio::awaitable<bool> finalize(storage::success_record record);

 private:
  struct waiter;
  boost::asio::awaitable<void> write_batches();

  boost::asio::any_io_executor executor_;
  blocking_pool* db_;
  storage::connection_pool* pool_;
  std::size_t max_batch_;
  std::deque<waiter*> queued_;
  bool writing_ = false;
};

}  // namespace gesso::server
