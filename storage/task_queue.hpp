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
  bool cancel_requested = false;            ///< the client asked to cancel it: cancel, do not run
};

/// Media-store object keys of a finished task's outputs.
struct task_outputs {
  std::optional<std::string> image = std::nullopt;
  std::optional<std::string> video = std::nullopt;
  std::optional<std::string> audio = std::nullopt;
};

/// Claims up to `limit` due tasks for `owner` in one short transaction: status 2, a fresh lease token,
/// attempts + 1, due again at now + `lease` unless the holder extends or finalizes it. Due means
/// status 1 or 2, run_after passed, attempts left and deadline not passed. Fair between accounts (each
/// account's oldest first, round-robin), and a queued task is claimed only while its account runs
/// fewer tasks than its cap (its own max_concurrent_tasks, else `default_cap`; 0 = none), sql/011.
std::vector<claimed_task> claim_due(connection_pool& pool, std::string_view owner, int limit,
                                    std::chrono::milliseconds lease, int default_cap = 0);

/// The accounts with open tasks one claim visits at most (from a random one): with more, an account
/// may wait a few claim rounds for its turn.
inline constexpr int max_accounts_per_claim = 1000;

/// Extends a held lease; false when it was lost (expired and taken over, or finalized).
bool extend_lease(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                  std::chrono::milliseconds lease);

/// Every way a held lease ends, as one value (one per state change): the worker decides it from the
/// engine's result (server/worker/lease_decision.hpp) and end_leases applies it, guarded by the lease
/// token. Build it with the named constructors.
struct lease_end {
  enum class kind {
    succeeded,  ///< status 3 with the outputs
    failed,     ///< status 4 with the reason, and the credits refunded exactly once
    retry,      ///< due again after `delay` for another attempt, remembering `error`; stays status 2
    wait,       ///< a provider holds the job: poll after `delay`; not an attempt (given back)
    give_back,  ///< released untouched (a draining worker had not started it): due now, attempt given back
  };
  kind how = kind::give_back;
  std::string task_id;
  std::string lease_token;
  task_outputs outputs = {};           ///< succeeded
  std::string error = {};              ///< failed: the task's reason; retry: why the attempt did not finish
  std::chrono::milliseconds delay{0};  ///< retry and wait
  std::string provider_job = {};       ///< wait: the provider's job, polled by the next claim; succeeded and
                                       ///< failed: when set, recorded on the task (route, model, job)
  std::string failure = {};            ///< failed: the kind (docs/api.md#failures); "" is internal
  int progress = -1;                   ///< wait: 0–100 when the provider reported it

  static lease_end succeeded(std::string task_id, std::string lease_token, task_outputs outputs);
  static lease_end failed(std::string task_id, std::string lease_token, std::string error,
                          std::string failure = "internal");
  static lease_end retry(std::string task_id, std::string lease_token, std::string error,
                         std::chrono::milliseconds delay);
  static lease_end wait(std::string task_id, std::string lease_token, std::string provider_job,
                        std::chrono::milliseconds delay, int progress = -1);
  static lease_end give_back(std::string task_id, std::string lease_token);
};

/// Tasks held by a provider, per model and route (the route recorded in provider_job).
struct route_in_flight {
  std::string model_id;
  std::string route;
  std::int64_t tasks = 0;
};
std::vector<route_in_flight> read_route_in_flight(connection_pool& pool);

/// Takes a slot on a route for a task about to be submitted to it, unless `cap` tasks already hold
/// one (sql/004); a task that holds a slot elsewhere moves it here. The slot is freed by the lease end
/// that finishes, retries or gives back the task.
bool take_route_slot(connection_pool& pool, std::string_view route_key, std::string_view task_id, int cap);

/// Applies many lease ends in one statement (one commit), each only while its task is still held under
/// its token; failed tasks are refunded in the same statement, at most once per task (the ledger's
/// UNIQUE (task_id, kind)). Element i says whether end i was applied; a lost lease changes nothing.
std::vector<bool> end_leases(connection_pool& pool, const std::vector<lease_end>& ends);

/// end_leases for one.
bool end_lease(connection_pool& pool, const lease_end& end);

/// A task the rescuer failed, and the provider job it may have left running.
struct rescued_task {
  std::string id;
  std::string model_id;
  std::optional<std::string> provider_job;
};

/// Fails and refunds, exactly once, up to `limit` unfinished tasks whose deadline passed or whose
/// attempts ran out while no lease holds them. Returns the tasks it failed.
std::vector<rescued_task> rescue_overdue(connection_pool& pool, int limit);

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
