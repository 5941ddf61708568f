#pragma once
// Completes held tasks: every lease end (success, failure and refund, retry, wait for a provider, give
// back) goes through here and one storage function, storage::end_leases, in batches: every end that
// arrives while a batch is being written joins the next one, so under load one statement and one commit
// cover many tasks, and a lone end waits for nothing. Runs on the worker's single I/O thread: no locks.

#include "server/runtime/blocking_pool.hpp"
#include "storage/connection_pool.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <deque>

namespace gesso::worker {

class completer {
 public:
  completer(boost::asio::any_io_executor executor, runtime::blocking_pool& database_calls,
            storage::connection_pool& connections, std::size_t max_batch)
      : executor_(std::move(executor)),
        database_calls_(&database_calls),
        connections_(&connections),
        max_batch_(max_batch) {}

  /// Applies one lease end: true when applied, false when the lease was lost. Throws what the database
  /// threw (the caller retries).
  boost::asio::awaitable<bool> complete(storage::lease_end end);

 private:
  struct waiter;
  boost::asio::awaitable<void> write_batches();

  boost::asio::any_io_executor executor_;
  runtime::blocking_pool* database_calls_;
  storage::connection_pool* connections_;
  std::size_t max_batch_;
  std::deque<waiter*> queued_;
  bool writing_ = false;
};

}  // namespace gesso::worker
