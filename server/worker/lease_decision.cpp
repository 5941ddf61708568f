#include "server/worker/lease_decision.hpp"

#include <algorithm>

namespace gesso::worker {

std::chrono::milliseconds retry_backoff(int attempt, double jitter) {
  const std::int64_t base = std::min<std::int64_t>(30'000, 500LL << std::clamp(attempt - 1, 0, 6));
  const double spread = std::clamp(jitter, 0.0, 1.0) * static_cast<double>(base / 2);
  return std::chrono::milliseconds(base / 2 + static_cast<std::int64_t>(spread));
}

namespace {

std::string failure_of(const engines::engine_outcome& outcome) {
  return outcome.failure.empty() ? "internal" : outcome.failure;
}

// A final end keeps the engine's record of where the task ran (route, upstream model and job).
storage::lease_end with_record(storage::lease_end end, const engines::engine_outcome& outcome) {
  end.provider_job = outcome.provider_job.value_or("");
  return end;
}

}  // namespace

storage::lease_end decide_lease_end(const storage::claimed_task& task, const engines::engine_outcome& outcome,
                                    double jitter) {
  using kind = engines::engine_outcome::kind;
  switch (outcome.result) {
    case kind::succeeded:
      return with_record(storage::lease_end::succeeded(
                             task.id, task.lease_token,
                             {.image = outcome.image, .video = outcome.video, .audio = outcome.audio}),
                         outcome);
    case kind::failed:
      return with_record(
          storage::lease_end::failed(task.id, task.lease_token, outcome.error, failure_of(outcome)), outcome);
    case kind::retry:
      if (task.attempt >= task.max_attempts) {
        return storage::lease_end::failed(
            task.id, task.lease_token,
            "the task failed after " + std::to_string(task.attempt) + " attempts: " + outcome.error,
            failure_of(outcome));
      }
      // Never sooner than the provider asked (Retry-After), never sooner than the backoff.
      return storage::lease_end::retry(task.id, task.lease_token, outcome.error,
                                       std::max(outcome.delay, retry_backoff(task.attempt, jitter)));
    case kind::waiting:
      return storage::lease_end::wait(task.id, task.lease_token, outcome.provider_job.value_or(""),
                                      outcome.delay, outcome.progress);
  }
  return storage::lease_end::failed(task.id, task.lease_token, "the engine ended in an unknown way");
}

}  // namespace gesso::worker
