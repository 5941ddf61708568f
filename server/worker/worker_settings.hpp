#pragma once
// How a worker runs (README: GESSO_WORKER_*).

#include "core/config.hpp"
#include "core/task_json.hpp"

#include <chrono>
#include <string>

namespace gesso::worker {

/// How a worker runs. Every default lives in core/config.hpp: fill it with worker_settings_from.
struct worker_settings {
  std::string id;                               ///< lease owner name, for operators
  int concurrency = 1;                          ///< tasks held at once
  int render_threads = 1;                       ///< threads running engines
  std::chrono::milliseconds lease{};            ///< a task is taken over if not extended for this long
  std::chrono::milliseconds poll{};             ///< claim this often even without a wake-up
  std::chrono::milliseconds rescue_interval{};  ///< how often overdue tasks are failed and refunded
  std::chrono::hours media_retention{};         ///< outputs older than this are deleted
  int default_account_cap = 0;  ///< an account's tasks running at once unless it has its own; 0 = none
  media_links links;            ///< how a webhook's body signs its output URLs (as the servers do)
  fetch_policy webhook_policy;  ///< where webhooks may be sent (the fetch policy and the http hosts)
};

/// The worker's settings from the process configuration: the id defaults to host name and process id,
/// render threads to one per core.
worker_settings worker_settings_from(const config& cfg);

}  // namespace gesso::worker
