#pragma once
// The worker side of tasks: claiming due work with FOR UPDATE SKIP LOCKED, leases and heartbeats,
// and finalizing by compare-and-set on the lease token, with the refund of a failed task exactly once.

#include "core/task.hpp"
#include "storage/connection_pool.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::storage {

/// A task held by one worker under a lease. Only the holder of lease_token may finalize it.
struct claimed_task {
  std::string id;
  std::string lease_token;
  std::string model_id;
  task_type type = task_type::image;
  std::string prompt;
  std::string aspect_ratio;
  std::vector<std::string> image_urls;
  std::string engine;
  int attempt = 0;  ///< 1 for the first claim
  int max_attempts = 1;
  std::optional<std::string> provider_job;  ///< a remote engine's job id from an earlier attempt
  std::optional<std::string> last_error;    ///< why the previous attempt did not finish
};

/// Media-store object keys of a finished task's outputs.
struct task_outputs {
  std::optional<std::string> image = std::nullopt;
  std::optional<std::string> video = std::nullopt;
  std::optional<std::string> audio = std::nullopt;
};

/// Claims up to `limit` due tasks for `owner` in one short transaction: status 2, a fresh lease token,
/// attempts + 1, due again at now + `lease` unless the holder extends or finalizes it. Due means
/// status 1 or 2, run_after passed, attempts left and deadline not passed.
std::vector<claimed_task> claim_due(connection_pool& pool, std::string_view owner, int limit,
                                    std::chrono::milliseconds lease);

/// Extends a held lease; false when it was lost (expired and taken over, or finalized).
bool extend_lease(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                  std::chrono::milliseconds lease);

/// Moves a held task to status 3 with its outputs; false (and no change) when the lease was lost.
bool finalize_success(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                      const task_outputs& outputs);

/// One held task's success, for finalize_successes.
struct success_record {
  std::string task_id;
  std::string lease_token;
  task_outputs outputs;
};

/// finalize_success for many tasks in one statement (one commit): element i says whether record i was
/// applied; a lost lease leaves only that task unchanged.
std::vector<bool> finalize_successes(connection_pool& pool, const std::vector<success_record>& records);

/// Moves a held task to status 4 with `error` and, in the same transaction, refunds its credits
/// unless a refund row already exists; false (and no change) when the lease was lost.
bool finalize_failure(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                      std::string_view error);

/// Releases a held task for another attempt after `delay`, remembering `error`; it stays at status 2
/// (clients never see a task go back). False when the lease was lost.
bool retry_later(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                 std::string_view error, std::chrono::milliseconds delay);

/// Releases a held task that a remote provider is working on: records the provider's job id (so a
/// later claim polls instead of submitting again) and makes the task due again after `delay`. A poll
/// is not an attempt: the claim's attempt is given back. The deadline still bounds the wait.
bool wait_for_provider(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                       std::string_view provider_job, std::chrono::milliseconds delay);

/// Gives a held task back untouched (a draining worker that had not started it): due at once, and
/// the claim's attempt is given back. False when the lease was lost.
bool release_unstarted(connection_pool& pool, std::string_view task_id, std::string_view lease_token);

/// Fails and refunds, exactly once, up to `limit` unfinished tasks whose deadline passed or whose
/// attempts ran out while no lease holds them. Returns how many it failed.
int rescue_overdue(connection_pool& pool, int limit);

/// Tasks that could be claimed now.
std::int64_t count_due(connection_pool& pool);

/// The queue as a whole, for metrics: due tasks, how long the oldest has been due, and tasks whose
/// remote engine holds them (submitted upstream, waiting for its answer).
struct queue_stats {
  std::int64_t due = 0;
  double oldest_due_seconds = 0;
  std::int64_t remote_in_flight = 0;
};
queue_stats read_queue_stats(connection_pool& pool);

}  // namespace gesso::storage
