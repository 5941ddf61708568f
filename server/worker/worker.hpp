#pragma once
// gesso-worker's engine room: claims due tasks, runs their engines concurrently on coroutines,
// holds each task's lease with a heartbeat, finalizes by compare-and-set, refunds failures exactly
// once, and rescues overdue tasks. SIGTERM stops claiming, gives back tasks it has not started, and
// lets the others finish.

#include "core/catalog.hpp"
#include "core/config.hpp"
#include "server/engines/engine.hpp"
#include "server/media/media_store.hpp"
#include "storage/connection_pool.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace gesso::server {

/// How one worker process behaves (README: GESSO_WORKER_*).
/// How a worker runs. Every default lives in core/config.hpp: fill it with worker_settings_from.
struct worker_settings {
  std::string id;                               ///< lease owner name, for operators
  int concurrency = 1;                          ///< tasks held at once
  int render_threads = 1;                       ///< threads running engines
  std::chrono::milliseconds lease{};            ///< a task is taken over if not extended for this long
  std::chrono::milliseconds poll{};             ///< claim this often even without a wake-up
  std::chrono::milliseconds rescue_interval{};  ///< how often overdue tasks are failed and refunded
  std::chrono::hours media_retention{};         ///< outputs older than this are deleted
};

/// The worker's settings from the process configuration: the id defaults to host name and process id,
/// render threads to one per core.
worker_settings worker_settings_from(const config& cfg);

class worker {
 public:
  /// Builds every model's engine; throws std::invalid_argument naming a model whose engine is unusable.
  worker(worker_settings settings, const catalog& models, const engines::engine_environment& environment,
         storage::pool_settings database, media::media_store& media);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  /// Runs until SIGTERM or SIGINT, then returns once every held task is finished.
  void run();

  /// For probes, from any thread.
  struct health {
    bool stopping = false;                                  ///< a drain has begun
    bool database_ok = true;                                ///< the last claim reached the database
    std::chrono::steady_clock::duration since_last_loop{};  ///< the claim loop's last turn
  };
  health status() const;

  /// The worker's metrics in the Prometheus text format, from any thread.
  std::string metrics_text() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::server
