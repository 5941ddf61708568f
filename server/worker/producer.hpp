#pragma once
// The producer: claims as many due tasks as there are free slots, starts each on the executor, and
// sleeps until a wake-up (a NOTIFY from a server, a finished task) or the poll interval.

#include "server/worker/worker_state.hpp"

#include <boost/asio/awaitable.hpp>

namespace gesso::worker {

/// Turns until the worker starts draining.
boost::asio::awaitable<void> claim_loop(service::impl* w);

}  // namespace gesso::worker
