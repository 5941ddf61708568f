#include "server/worker/lease_decision.hpp"

#include <algorithm>

namespace gesso::worker {

std::chrono::milliseconds retry_backoff(int attempt, double jitter) {
  const std::int64_t base = std::min<std::int64_t>(30'000, 500LL << std::clamp(attempt - 1, 0, 6));
  const double spread = std::clamp(jitter, 0.0, 1.0) * static_cast<double>(base / 2);
  return std::chrono::milliseconds(base / 2 + static_cast<std::int64_t>(spread));
}

storage::lease_end decide_lease_end(const storage::claimed_task& task, const engines::engine_outcome& outcome,
                                    double jitter) {
  using kind = engines::engine_outcome::kind;
  switch (outcome.result) {
    case kind::succeeded:
      return storage::lease_end::succeeded(
          task.id, task.lease_token,
          {.image = outcome.image, .video = outcome.video, .audio = outcome.audio});
    case kind::failed:
      return storage::lease_end::failed(task.id, task.lease_token, outcome.error);
    case kind::retry:
      if (task.attempt >= task.max_attempts) {
        return storage::lease_end::failed(
            task.id, task.lease_token,
            "the task failed after " + std::to_string(task.attempt) + " attempts: " + outcome.error);
      }
      return storage::lease_end::retry(task.id, task.lease_token, outcome.error,
                                       retry_backoff(task.attempt, jitter));
    case kind::waiting:
      return storage::lease_end::wait(task.id, task.lease_token, outcome.provider_job.value_or(""),
                                      outcome.delay);
  }
  return storage::lease_end::failed(task.id, task.lease_token, "the engine ended in an unknown way");
}

}  // namespace gesso::worker
