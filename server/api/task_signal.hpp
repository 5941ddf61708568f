#pragma once
// Tells idle workers that tasks were created: at most one NOTIFY per window, outside every create
// transaction, however many creates happen meanwhile.

#include "server/runtime/blocking_pool.hpp"
#include "storage/connection_pool.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>

namespace gesso::api {

class task_signal {
 public:
  task_signal(boost::asio::any_io_executor executor, runtime::blocking_pool& database_calls,
              storage::connection_pool& connections, std::chrono::milliseconds window)
      : executor_(std::move(executor)),
        database_calls_(&database_calls),
        connections_(&connections),
        window_(window) {}

  /// Called after each successful create, from any thread.
  void poke();

 private:
  friend struct task_signal_access;
  boost::asio::any_io_executor executor_;
  runtime::blocking_pool* database_calls_;
  storage::connection_pool* connections_;
  std::chrono::milliseconds window_;
  std::atomic<bool> armed_{false};
};

}  // namespace gesso::api
