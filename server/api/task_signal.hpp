#pragma once
// Tells idle workers that tasks were created: at most one NOTIFY per window, outside every create
// transaction, however many creates happen meanwhile.

#include "server/runtime/blocking_pool.hpp"
#include "storage/connection_pool.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>

namespace gesso::server {

class task_signal {
 public:
  task_signal(boost::asio::any_io_executor executor, blocking_pool& db, storage::connection_pool& database,
              std::chrono::milliseconds window)
      : executor_(std::move(executor)), db_(&db), database_(&database), window_(window) {}

  /// Called after each successful create, from any thread.
  void poke();

 private:
  friend struct task_signal_access;
  boost::asio::any_io_executor executor_;
  blocking_pool* db_;
  storage::connection_pool* database_;
  std::chrono::milliseconds window_;
  std::atomic<bool> armed_{false};
};

}  // namespace gesso::server
