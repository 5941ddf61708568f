// gesso-worker: runs tasks. Stateless; run as many as the queue needs, on any nodes sharing the
// database and the media directory.

#include "server/log.hpp"
#include "server/process_setup.hpp"
#include "server/worker.hpp"

#include <unistd.h>

#include <csignal>
#include <iostream>
#include <thread>

int main() {
  using namespace gesso;
  std::signal(SIGPIPE, SIG_IGN);  // an encoder that dies must not take the worker with it
  const config cfg = server::load_config_or_exit("gesso-worker");
  log::set_level(cfg.log_level);
  const catalog models = server::load_catalog_or_exit("gesso-worker", cfg);
  storage::pool_settings database = server::pool_settings_or_exit("gesso-worker", cfg);

  server::worker_settings settings;
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

  try {
    engines::media_store media(cfg.media_dir);
    const engines::engine_environment environment{cfg.ffmpeg, fetch_policy{cfg.fetch_allowed_networks}};
    server::worker w(settings, models, environment, database, media);
    std::cout << "gesso-worker " << settings.id << " running" << std::endl;
    w.run();
  } catch (const std::invalid_argument& e) {
    std::cerr << "gesso-worker: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gesso-worker: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
