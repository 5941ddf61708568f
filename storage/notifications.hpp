#pragma once
// Waking idle workers when tasks are created, without a NOTIFY inside each create transaction
// (that serialises commits: docs/architecture.md, "Wake-up"). Servers send one coalesced NOTIFY per short
// window; workers LISTEN on a dedicated connection and also poll, so a lost wake-up only delays.

#include "storage/connection_pool.hpp"

#include <chrono>
#include <memory>

namespace gesso::storage {

/// Sends the "tasks were created" signal (its own autocommit statement).
void notify_tasks_created(connection_pool& pool);

/// A dedicated connection that LISTENs for the signal.
class task_listener {
 public:
  /// Connects and LISTENs; throws unavailable when the database cannot be reached.
  explicit task_listener(const pool_settings& settings);
  ~task_listener();
  task_listener(const task_listener&) = delete;
  task_listener& operator=(const task_listener&) = delete;

  /// Waits up to `timeout` for the signal; true if it came. Throws unavailable if the connection broke.
  bool wait(std::chrono::milliseconds timeout);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::storage
