// gesso-server: the HTTP API. Stateless; run as many as the load needs behind a load balancer.

#include "core/ids.hpp"
#include "server/api/http_server.hpp"
#include "server/api/task_waiters.hpp"
#include "server/runtime/log.hpp"
#include "server/runtime/process_setup.hpp"

#include <iostream>

int main() {
  using namespace gesso;
  const config cfg = runtime::load_config_or_exit("gesso-server");
  log::set_level(cfg.log_level);
  const catalog models = runtime::load_catalog_or_exit("gesso-server", cfg);
  storage::connection_pool connections(runtime::pool_settings_or_exit("gesso-server", cfg));
  runtime::blocking_pool database_calls(static_cast<std::size_t>(cfg.db_pool_size),
                                        static_cast<std::size_t>(cfg.db_queue_limit));

  const api::http_settings http = api::http_settings_from(cfg);

  api::media_links links{cfg.public_url, cfg.media_signing_key, cfg.media_url_ttl};
  if (links.signing_key.empty()) {
    links.signing_key = new_api_key();  // 256 random bits
    log::write(
        log::level::warn, "random_media_signing_key",
        {{"reason", "GESSO_MEDIA_SIGNING_KEY is not set: media links work only on this server process"}});
  }

  try {
    const media::media_store media(cfg.media_dir);
    const fetch_policy fetching{cfg.fetch_allowed_networks, cfg.webhook_http_hosts};
    api::api_context context{&models, &connections, &database_calls, &links, &media, nullptr, &fetching};
    context.limit_defaults = {cfg.rate_limit_rps, cfg.rate_limit_burst, cfg.max_concurrent_tasks};
    api::rate_limiter limiter;
    context.limiter = &limiter;
    api::task_waiters waiters(runtime::pool_settings_or_exit("gesso-server", cfg));
    context.waiters = &waiters;
    api::http_server frontend(http, context);
    frontend.run();
  } catch (const std::exception& e) {
    std::cerr << "gesso-server: " << e.what() << std::endl;
    database_calls.join();
    return 1;
  }
  database_calls.join();
  return 0;
}
