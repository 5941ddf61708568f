// gesso-worker: runs tasks. Stateless; run as many as the queue needs, on any nodes sharing the
// database and the media directory. With arguments, the catalog's offline check and one-task trial
// (`gesso-worker catalog check FILE`, `gesso-worker catalog try MODEL --prompt …`).

#include "server/runtime/health_server.hpp"
#include "server/runtime/log.hpp"
#include "server/runtime/metrics.hpp"
#include "server/runtime/process_setup.hpp"
#include "server/worker/catalog_commands.hpp"
#include "server/worker/service.hpp"

#include <csignal>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace gesso;
  if (argc > 1) {  // gesso-worker catalog check|try … (docs/operations.md#catalog-check-and-try)
    return worker::run_catalog_command(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  }
  std::signal(SIGPIPE, SIG_IGN);  // an encoder that dies must not take the worker with it
  const config cfg = runtime::load_config_or_exit("gesso-worker");
  log::set_level(cfg.log_level);
  const catalog models = runtime::load_catalog_or_exit("gesso-worker", cfg);
  storage::pool_settings database = runtime::pool_settings_or_exit("gesso-worker", cfg);

  const worker::worker_settings settings = worker::worker_settings_from(cfg);

  try {
    media::media_store media(cfg.media_dir);
    const engines::engine_environment environment{
        cfg.ffmpeg, fetch_policy{cfg.fetch_allowed_networks, cfg.webhook_http_hosts}};
    worker::service w(settings, models, environment, database, media);
    // Probes: alive while the claim loop turns (it waits at most a poll interval, plus a slow
    // database call); ready while not draining and the database answered the last claim.
    const auto stalled_after = std::max<std::chrono::milliseconds>(
        std::chrono::seconds(30), 3 * cfg.worker_poll + cfg.db_connect_timeout + cfg.db_statement_timeout);
    std::optional<runtime::health_server> probes;
    std::string probe_note;
    if (cfg.worker_listen_port) {
      probes.emplace(
          cfg.worker_listen_host, *cfg.worker_listen_port, [&w, stalled_after](std::string_view path) {
            const auto h = w.status();
            if (path == "/healthz") {
              return h.since_last_loop < stalled_after
                         ? runtime::probe_answer{200, R"({"status":"ok"})"}
                         : runtime::probe_answer{503, R"({"status":"stalled"})"};
            }
            if (path == "/readyz") {
              if (h.stopping) {
                return runtime::probe_answer{503, R"({"status":"draining"})"};
              }
              return h.database_ok ? runtime::probe_answer{200, R"({"status":"ready"})"}
                                   : runtime::probe_answer{503, R"({"status":"database unavailable"})"};
            }
            if (path == "/metrics") {
              return runtime::probe_answer{200, w.metrics_text(),
                                           std::string(runtime::metrics::content_type)};
            }
            return runtime::probe_answer{404,
                                         R"({"status":"no such endpoint: /healthz, /readyz and /metrics"})"};
          });
      probe_note =
          " (probes on http://" + cfg.worker_listen_host + ":" + std::to_string(probes->port()) + ")";
    }
    std::cout << "gesso-worker " << settings.id << " running" << probe_note << std::endl;
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
