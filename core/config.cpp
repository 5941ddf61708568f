#include "core/config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>

namespace gesso {
namespace {

using config_result = checked<config>;

constexpr std::string_view known_names[] = {
    "GESSO_DATABASE_URL",
    "GESSO_LISTEN",
    "GESSO_IO_THREADS",
    "GESSO_DB_POOL_SIZE",
    "GESSO_DB_QUEUE_LIMIT",
    "GESSO_DB_CONNECT_TIMEOUT_MS",
    "GESSO_DB_STATEMENT_TIMEOUT_MS",
    "GESSO_IDLE_TIMEOUT_MS",
    "GESSO_READ_TIMEOUT_MS",
    "GESSO_WRITE_TIMEOUT_MS",
    "GESSO_MAX_BODY_BYTES",
    "GESSO_MAX_HEADER_BYTES",
    "GESSO_MAX_CONNECTIONS",
    "GESSO_BODY_MEMORY_BYTES",
    "GESSO_ADMIN_LISTEN",
    "GESSO_DRAIN_GRACE_MS",
    "GESSO_CATALOG",
    "GESSO_LOG_LEVEL",
    "GESSO_MEDIA_DIR",
    "GESSO_PUBLIC_URL",
    "GESSO_MEDIA_SIGNING_KEY",
    "GESSO_MEDIA_URL_TTL_S",
    "GESSO_MEDIA_RETENTION_HOURS",
    "GESSO_NOTIFY_WINDOW_MS",
    "GESSO_RATE_LIMIT_RPS",
    "GESSO_RATE_LIMIT_BURST",
    "GESSO_MAX_CONCURRENT_TASKS",
    "GESSO_WORKER_ID",
    "GESSO_WORKER_LISTEN",
    "GESSO_WORKER_CONCURRENCY",
    "GESSO_WORKER_RENDER_THREADS",
    "GESSO_WORKER_LEASE_MS",
    "GESSO_WORKER_POLL_MS",
    "GESSO_WORKER_RESCUE_MS",
    "GESSO_FFMPEG",
    "GESSO_FETCH_ALLOW_NETWORKS",
    "GESSO_WEBHOOK_HTTP_HOSTS",
};

// Parses a whole decimal integer in [lo, hi] or explains what is wrong with it.
checked<std::int64_t> integer(std::string_view name, std::string_view text, std::int64_t lo,
                              std::int64_t hi) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) {
    return refusal{std::string(name) + "=" + std::string(text) + ": expected a whole number from " +
                   std::to_string(lo) + " to " + std::to_string(hi)};
  }
  return value;
}

checked<void> parse_listen(std::string_view name, std::string_view text, std::string& out_host,
                           std::uint16_t& out_port) {
  const std::string bad =
      std::string(name) + "=" + std::string(text) + ": expected host:port, e.g. 0.0.0.0:8080 or [::1]:0";
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return refusal{bad};
  }
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) {
      return refusal{bad};
    }
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return refusal{bad};
  }
  auto port = integer(name, text.substr(colon + 1), 0, 65535);
  if (!port) {
    return refusal{bad};
  }
  out_host = std::string(host);
  out_port = static_cast<std::uint16_t>(*port);
  return {};
}

using variables = std::map<std::string, std::string, std::less<>>;

// The GESSO_* variables of the environment; refuses a name this version does not know (a typo would
// otherwise be silently ignored).
checked<variables> gesso_variables(std::span<const char* const> environment) {
  variables vars;
  for (const char* entry : environment) {
    if (entry == nullptr) {
      continue;
    }
    const std::string_view e(entry);
    if (!e.starts_with("GESSO_")) {
      continue;
    }
    const auto eq = e.find('=');
    const std::string_view name = e.substr(0, eq);
    if (std::find(std::begin(known_names), std::end(known_names), name) == std::end(known_names)) {
      return refusal{"unknown setting " + std::string(name) +
                     " (see docs/configuration.md for the GESSO_* variables)"};
    }
    vars.emplace(std::string(name), eq == std::string_view::npos ? "" : std::string(e.substr(eq + 1)));
  }
  return vars;
}

// Reads the variables into config fields; each read answers "" or what is wrong.
class reader {
 public:
  explicit reader(const variables& vars) : vars_(&vars) {}

  const std::string* text(std::string_view name) const {
    const auto it = vars_->find(name);
    return it == vars_->end() ? nullptr : &it->second;
  }

  template <class Number>
  std::string number(std::string_view name, Number& field, std::int64_t lo, std::int64_t hi) const {
    if (const std::string* v = text(name)) {
      auto r = integer(name, *v, lo, hi);
      if (!r) {
        return r.error().reason;
      }
      field = static_cast<Number>(*r);
    }
    return {};
  }

  template <class Rep, class Period>
  std::string duration(std::string_view name, std::chrono::duration<Rep, Period>& field, std::int64_t lo,
                       std::int64_t hi) const {
    std::int64_t count = field.count();
    std::string error = number(name, count, lo, hi);
    field = std::chrono::duration<Rep, Period>(count);
    return error;
  }

  // An optional host:port; "" leaves it unset.
  std::string address(std::string_view name, std::string& host, std::optional<std::uint16_t>& port) const {
    if (const std::string* v = text(name); v != nullptr && !v->empty()) {
      std::uint16_t bound = 0;
      if (auto r = parse_listen(name, *v, host, bound); !r) {
        return r.error().reason;
      }
      port = bound;
    }
    return {};
  }

 private:
  const variables* vars_;
};

// Paths, URLs, keys, networks, names.
std::string read_texts(const reader& r, config& c) {
  for (auto [name, field] :
       {std::pair{"GESSO_DATABASE_URL", &c.database_url}, std::pair{"GESSO_MEDIA_DIR", &c.media_dir},
        std::pair{"GESSO_MEDIA_SIGNING_KEY", &c.media_signing_key},
        std::pair{"GESSO_WORKER_ID", &c.worker_id}, std::pair{"GESSO_CATALOG", &c.catalog_path},
        std::pair{"GESSO_FFMPEG", &c.ffmpeg}}) {
    if (const std::string* v = r.text(name)) {
      *field = *v;
    }
  }
  if (const std::string* v = r.text("GESSO_PUBLIC_URL")) {
    if (!v->empty() && !v->starts_with("http://") && !v->starts_with("https://")) {
      return "GESSO_PUBLIC_URL=" + *v + ": expected an http:// or https:// base URL";
    }
    c.public_url = *v;
    while (c.public_url.ends_with('/')) {
      c.public_url.pop_back();
    }
  }
  if (const std::string* v = r.text("GESSO_FETCH_ALLOW_NETWORKS")) {
    auto networks = parse_networks(*v);
    if (!networks) {
      return "GESSO_FETCH_ALLOW_NETWORKS: " + networks.error().reason;
    }
    c.fetch_allowed_networks = std::move(*networks);
  }
  if (const std::string* v = r.text("GESSO_WEBHOOK_HTTP_HOSTS")) {
    std::size_t start = 0;
    while (start <= v->size()) {
      const auto comma = v->find(',', start);
      std::string host = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      std::erase(host, ' ');
      if (host.empty() || host.find_first_of("/:@?#") != std::string::npos) {
        return "GESSO_WEBHOOK_HTTP_HOSTS: \"" + host +
               "\" is not a host name or address (comma-separated, no ports)";
      }
      std::transform(host.begin(), host.end(), host.begin(),
                     [](unsigned char ch) { return std::tolower(ch); });
      c.webhook_http_hosts.push_back(std::move(host));
      if (comma == std::string::npos) {
        break;
      }
      start = comma + 1;
    }
  }
  if (c.media_dir.empty()) {
    return "GESSO_MEDIA_DIR must not be empty";
  }
  if (!c.media_signing_key.empty() && c.media_signing_key.size() < 32) {
    return "GESSO_MEDIA_SIGNING_KEY must be at least 32 characters";
  }
  if (const std::string* v = r.text("GESSO_LOG_LEVEL")) {
    if (*v != "debug" && *v != "info" && *v != "warn" && *v != "error") {
      return "GESSO_LOG_LEVEL=" + *v + ": expected debug, info, warn or error";
    }
    c.log_level = *v;
  }
  return {};
}

std::string read_addresses(const reader& r, config& c) {
  if (const std::string* v = r.text("GESSO_LISTEN")) {
    if (auto listen = parse_listen("GESSO_LISTEN", *v, c.listen_host, c.listen_port); !listen) {
      return listen.error().reason;
    }
  }
  for (const std::string& error : {
           r.address("GESSO_ADMIN_LISTEN", c.admin_listen_host, c.admin_listen_port),
           r.address("GESSO_WORKER_LISTEN", c.worker_listen_host, c.worker_listen_port),
       }) {
    if (!error.empty()) {
      return error;
    }
  }
  return {};
}

// Every number, with the range it must fall in: a table.
std::string read_numbers(const reader& r, config& c) {
  for (const std::string& error : {
           r.number("GESSO_IO_THREADS", c.io_threads, 0, 256),
           r.number("GESSO_DB_POOL_SIZE", c.db_pool_size, 1, 1024),
           r.number("GESSO_DB_QUEUE_LIMIT", c.db_queue_limit, 0, 1'000'000),
           r.duration("GESSO_DB_CONNECT_TIMEOUT_MS", c.db_connect_timeout, 1000, 600'000),
           r.duration("GESSO_DB_STATEMENT_TIMEOUT_MS", c.db_statement_timeout, 100, 3'600'000),
           r.duration("GESSO_IDLE_TIMEOUT_MS", c.idle_timeout, 100, 3'600'000),
           r.duration("GESSO_READ_TIMEOUT_MS", c.read_timeout, 100, 3'600'000),
           r.duration("GESSO_WRITE_TIMEOUT_MS", c.write_timeout, 100, 3'600'000),
           r.number("GESSO_MAX_BODY_BYTES", c.max_body_bytes, 1024, 1024LL * 1024 * 1024),
           r.number("GESSO_MAX_HEADER_BYTES", c.max_header_bytes, 1024, 1024 * 1024),
           r.number("GESSO_MAX_CONNECTIONS", c.max_connections, 1, 1'000'000),
           r.number("GESSO_BODY_MEMORY_BYTES", c.body_memory_bytes, 1024 * 1024, 1LL << 40),
           r.duration("GESSO_DRAIN_GRACE_MS", c.drain_grace, 0, 600'000),
           r.duration("GESSO_MEDIA_URL_TTL_S", c.media_url_ttl, 60, 365LL * 24 * 3600),
           r.duration("GESSO_MEDIA_RETENTION_HOURS", c.media_retention, 1, 24 * 3650),
           r.duration("GESSO_NOTIFY_WINDOW_MS", c.notify_window, 1, 10'000),
           r.number("GESSO_RATE_LIMIT_RPS", c.rate_limit_rps, 0, 1'000'000),
           r.number("GESSO_RATE_LIMIT_BURST", c.rate_limit_burst, 0, 10'000'000),
           r.number("GESSO_MAX_CONCURRENT_TASKS", c.max_concurrent_tasks, 0, 1'000'000),
           r.number("GESSO_WORKER_CONCURRENCY", c.worker_concurrency, 1, 100'000),
           r.number("GESSO_WORKER_RENDER_THREADS", c.worker_render_threads, 0, 256),
           r.duration("GESSO_WORKER_LEASE_MS", c.worker_lease, 500, 3'600'000),
           r.duration("GESSO_WORKER_POLL_MS", c.worker_poll, 10, 600'000),
           r.duration("GESSO_WORKER_RESCUE_MS", c.worker_rescue_interval, 100, 3'600'000),
       }) {
    if (!error.empty()) {
      return error;
    }
  }
  return {};
}

}  // namespace

config_result load_config(std::span<const char* const> environment) {
  const auto vars = gesso_variables(environment);
  if (!vars) {
    return vars.error();
  }
  const reader r(*vars);
  config c;
  for (auto step : {read_texts, read_addresses, read_numbers}) {
    if (std::string error = step(r, c); !error.empty()) {
      return refusal{std::move(error)};
    }
  }
  return c;
}

}  // namespace gesso
