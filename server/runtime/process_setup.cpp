#include "server/runtime/process_setup.hpp"

#include "server/runtime/log.hpp"

#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

extern char** environ;

namespace gesso::runtime {
namespace {

[[noreturn]] void refuse(std::string_view program, std::string_view reason) {
  std::cerr << program << ": " << reason << std::endl;
  std::exit(2);
}

}  // namespace

config load_config_or_exit(std::string_view program) {
  std::vector<const char*> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    entries.push_back(*e);
  }
  auto cfg = load_config(entries);
  if (!cfg) {
    refuse(program, cfg.error().reason);
  }
  return *cfg;
}

std::size_t connection_limit_within_open_files(std::size_t wanted) {
  constexpr rlim_t reserve = 256;  // database connections, media files, ffmpeg pipes, logs
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return wanted;
  }
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
    }
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted + reserve) {
    return wanted;
  }
  const std::size_t fits =
      limit.rlim_cur > reserve + 16 ? static_cast<std::size_t>(limit.rlim_cur - reserve) : 16;
  log::write(log::level::warn, "connection_limit_lowered",
             {{"wanted", wanted},
              {"open_file_limit", static_cast<std::uint64_t>(limit.rlim_cur)},
              {"max_connections", fits}});
  return fits;
}

catalog load_catalog_or_exit(std::string_view program, const config& cfg) {
  if (cfg.catalog_path.empty()) {
    return catalog::builtin();
  }
  std::ifstream file(cfg.catalog_path);
  if (!file) {
    refuse(program, "GESSO_CATALOG=" + cfg.catalog_path + ": cannot read the file");
  }
  std::stringstream text;
  text << file.rdbuf();
  auto parsed = catalog::parse(text.str());
  if (!parsed) {
    refuse(program, "GESSO_CATALOG=" + cfg.catalog_path + ": " + parsed.error().reason);
  }
  return *parsed;
}

storage::pool_settings pool_settings_or_exit(std::string_view program, const config& cfg) {
  if (cfg.database_url.empty()) {
    refuse(program, "GESSO_DATABASE_URL is not set (a libpq connection string, e.g. postgresql:///gesso)");
  }
  storage::pool_settings s;
  s.url = cfg.database_url;
  s.max_idle = static_cast<std::size_t>(cfg.db_pool_size);
  s.connect_timeout = cfg.db_connect_timeout;
  s.statement_timeout = cfg.db_statement_timeout;
  s.application_name = std::string(program);
  return s;
}

}  // namespace gesso::runtime
