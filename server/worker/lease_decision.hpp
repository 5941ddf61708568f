#pragma once
// How a held task's lease ends, decided from what its engine did: a pure function, so every rule
// (retries, their backoff, running out of attempts, waiting on a provider) is unit-tested without a
// database (tests/unit/lease_decision_test.cpp).

#include "server/engines/engine.hpp"
#include "storage/task_queue.hpp"

#include <chrono>

namespace gesso::worker {

/// The wait before the next attempt after a transient failure of attempt `attempt` (1 for the first):
/// 500 ms doubling per attempt up to 30 s, spread by `jitter` (0 to 1) over the upper half.
std::chrono::milliseconds retry_backoff(int attempt, double jitter);

/// The lease end for `task` after its engine came to `outcome`: succeeded stores the outputs; failed is
/// refunded with the engine's reason; a retry waits retry_backoff(attempt, jitter), or, on the last
/// attempt, fails with a reason naming the attempts; waiting records the provider's job and polls after
/// the engine's delay.
storage::lease_end decide_lease_end(const storage::claimed_task& task, const engines::engine_outcome& outcome,
                                    double jitter);

}  // namespace gesso::worker
