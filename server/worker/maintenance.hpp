#pragma once
// Maintenance: any worker fails and refunds overdue tasks, samples the queue for the metrics, and
// deletes expired media.

#include "server/worker/worker_state.hpp"

#include <boost/asio/awaitable.hpp>

namespace gesso::worker {

/// Turns every rescue interval until the worker starts draining.
boost::asio::awaitable<void> housekeeping(service::impl* w);

}  // namespace gesso::worker
