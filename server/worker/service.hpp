#pragma once
// gesso-worker's engine room, in the shape of River's: a producer claims due tasks (producer.cpp), an
// executor runs each one's engine under a lease heartbeat (executor.cpp), one completer applies every
// lease end (completer.cpp), and maintenance rescues overdue tasks and expires media (maintenance.cpp).
// SIGTERM stops claiming, gives back tasks not yet started, and lets the others finish.

#include "core/catalog.hpp"
#include "server/engines/engine.hpp"
#include "server/media/media_store.hpp"
#include "server/worker/worker_settings.hpp"
#include "storage/connection_pool.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace gesso::worker {

class service {
 public:
  /// Builds every model's engine; throws std::invalid_argument naming a model whose engine is unusable.
  service(worker_settings settings, const catalog& models, const engines::engine_environment& environment,
          storage::pool_settings database, media::media_store& media);
  ~service();
  service(const service&) = delete;
  service& operator=(const service&) = delete;

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

}  // namespace gesso::worker
