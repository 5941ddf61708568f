#include "server/worker/worker_settings.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

namespace gesso::worker {

worker_settings worker_settings_from(const config& cfg) {
  worker_settings settings;
  settings.id = cfg.worker_id;
  if (settings.id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    settings.id = std::string(host) + "-" + std::to_string(getpid());
  }
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  settings.concurrency = cfg.worker_concurrency;
  settings.render_threads = cfg.worker_render_threads > 0 ? cfg.worker_render_threads : cores;
  settings.lease = cfg.worker_lease;
  settings.poll = cfg.worker_poll;
  settings.rescue_interval = cfg.worker_rescue_interval;
  settings.media_retention = cfg.media_retention;
  settings.default_account_cap = cfg.max_concurrent_tasks;
  settings.links = {cfg.public_url, cfg.media_signing_key, cfg.media_url_ttl};
  settings.webhook_policy = {cfg.fetch_allowed_networks, cfg.webhook_http_hosts};
  return settings;
}

}  // namespace gesso::worker
