#pragma once
// What a worker drives: an engine turns a claimed task into outputs in the media store. Local engines
// render at once; remote engines submit to a provider and are polled on later attempts.

#include "core/catalog.hpp"
#include "core/network_policy.hpp"
#include "server/media/media_store.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gesso::engines {

using media::media_store;  ///< where engines put their outputs (server/media)

/// What one task's input images may take in all (docs/security.md#bounds): a task over either fails
/// (and is refunded) with the reason.
struct input_limits {
  static constexpr std::uint64_t pixels_per_task = 64ULL * 1024 * 1024;  ///< source pixels, all inputs
  static constexpr std::size_t bytes_per_task = 32 * 1024 * 1024;        ///< fetched bytes, all inputs
};

/// One attempt at one task.
struct engine_job {
  std::string task_id;
  const model_spec* model = nullptr;
  std::string prompt;
  std::string aspect_ratio;
  std::vector<std::string> image_urls;
  int attempt = 1;
  std::optional<std::string> provider_job;  ///< set when an earlier attempt submitted to a provider
};

/// How an attempt ended.
struct engine_outcome {
  enum class kind {
    succeeded,              ///< outputs stored: finalize as status 3
    failed,                 ///< permanent: finalize as status 4 and refund
    retry,                  ///< transient: try again after `delay` (counts as an attempt)
    waiting,                ///< submitted to a provider: poll again after `delay`, holding no worker slot
  } result = kind::failed;  ///< how the attempt ended (not a task status)
  std::optional<std::string> image;  ///< media object keys of the outputs
  std::optional<std::string> video;
  std::optional<std::string> audio;
  std::string error;                        ///< for failed and retry: a sentence for the client
  std::string failure;                      ///< for failed and retry: the kind (docs/api.md#failures), or ""
  std::chrono::milliseconds delay{0};       ///< for retry and waiting
  int progress = -1;                        ///< for waiting: 0–100 when the provider reported it
  std::optional<std::string> provider_job;  ///< for waiting: remember the provider's job; otherwise, when
                                            ///< set, recorded on the task (route, upstream model and job)
};

/// One call to a provider route, for the worker's metrics.
struct route_call {
  std::string model;
  std::size_t route = 0;
  std::string engine;
  std::string outcome;  ///< "ok", "retry" (unavailable), or the failure kind
  double seconds = 0;
};

/// A route's circuit, for the worker's metrics: 0 closed, 1 half-open, 2 open.
struct route_health {
  std::size_t route = 0;
  std::string engine;
  int circuit = 0;
};

class engine {
 public:
  virtual ~engine() = default;

  /// Time to wait before run(), without holding a thread (simulated latency).
  virtual std::chrono::milliseconds latency(const engine_job&) const { return std::chrono::milliseconds(0); }

  /// Runs one attempt; blocking, called on a CPU thread. Throws only for infrastructure faults (disk,
  /// a missing encoder); the worker retries those.
  virtual engine_outcome run(const engine_job& job, media_store& media) = 0;

  /// Cancels, best effort, what a task left running at its provider (the task has already failed, at
  /// its deadline); blocking, on an engine thread. Engines without providers have nothing to cancel.
  virtual void cancel(const std::string& /*provider_job*/) {}

  /// Provider engines: each route's circuit now. Others have no routes.
  virtual std::vector<route_health> routes_health() const { return {}; }
};

/// What engines need from the process configuration.
struct engine_environment {
  std::string ffmpeg = "ffmpeg";  ///< the encoder program (GESSO_FFMPEG)
  fetch_policy fetching = {};     ///< where input images and remote outputs may be fetched from
  /// Takes a slot on a route (key, cap, task id) for max_concurrency across workers; unset, caps are
  /// not enforced (a process without the database). Blocking; called on engine threads.
  std::function<bool(const std::string&, int, const std::string&)> take_route_slot = {};
  /// Told of every provider call (from engine threads); unset, nothing is counted.
  std::function<void(const route_call&)> observe_route = {};
};

/// The engine a model's catalog entry names, built with its engine_settings; throws std::invalid_argument
/// naming the model when the engine is unknown or its settings are invalid.
std::unique_ptr<engine> make_engine(const model_spec& model, const engine_environment& environment = {});

}  // namespace gesso::engines
