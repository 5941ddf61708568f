#pragma once
// Waking idle workers when tasks are created, without a NOTIFY inside each create transaction
// (that serialises commits: docs/architecture.md, "Wake-up"). Servers send one coalesced NOTIFY per short
// window; workers LISTEN on a dedicated connection and also poll, so a lost wake-up only delays.

#include "storage/connection_pool.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

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

/// The channel on which every statement that makes tasks final (lease ends, the rescuer, a cancel)
/// announces their ids, comma-separated, at most 200 a notification (storage/ledger_sql.hpp): servers wake
/// the requests that wait for them (GET /api/v1/tasks/{id}?wait=N).
inline constexpr const char* tasks_final_channel = "gesso_tasks_final";

/// A dedicated connection that LISTENs on tasks_final_channel.
class final_listener {
 public:
  /// Connects and LISTENs; throws unavailable when the database cannot be reached.
  explicit final_listener(const pool_settings& settings);
  ~final_listener();
  final_listener(const final_listener&) = delete;
  final_listener& operator=(const final_listener&) = delete;

  /// Waits up to `timeout` for notifications; the task ids they named (empty when none came). Throws
  /// unavailable if the connection broke.
  std::vector<std::string> wait(std::chrono::milliseconds timeout);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::storage
