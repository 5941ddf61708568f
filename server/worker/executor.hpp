#pragma once
// The executor: runs one claimed task's engine while a heartbeat holds its lease, then hands the lease
// end that decide_lease_end chooses to the completer (retried while the database is unavailable).

#include "server/worker/worker_state.hpp"
#include "storage/task_queue.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace gesso::worker {

/// Runs `task` to its lease end; releases its slot (and wakes the producer) when done.
boost::asio::awaitable<void> run_task(service::impl* w, std::shared_ptr<storage::claimed_task> task);

}  // namespace gesso::worker
