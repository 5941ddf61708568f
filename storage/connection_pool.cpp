#include "storage/connection_pool.hpp"

#include "storage/pool_internal.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace gesso::storage {

struct connection_pool::impl {
  pool_settings settings;
  std::string conninfo;
  std::mutex mutex;
  std::vector<std::unique_ptr<detail::session>> idle;
};

namespace {

// libpq takes connect_timeout in whole seconds (minimum 2); keepalives notice a vanished server.
std::string with_client_options(const pool_settings& s) {
  const auto seconds = std::max<long long>(2, (s.connect_timeout.count() + 999) / 1000);
  const std::string options = "connect_timeout=" + std::to_string(seconds) +
                              " keepalives=1 keepalives_idle=10 keepalives_interval=5 keepalives_count=3";
  const bool is_uri = s.url.starts_with("postgres://") || s.url.starts_with("postgresql://");
  if (!is_uri) {
    return s.url + " " + options + " application_name=" + s.application_name;
  }
  std::string uri_options = options;
  std::replace(uri_options.begin(), uri_options.end(), ' ', '&');
  return s.url + (s.url.find('?') == std::string::npos ? "?" : "&") + uri_options +
         "&application_name=" + s.application_name;
}

std::unique_ptr<detail::session> connect(const connection_pool::impl& p) {
  auto s = std::make_unique<detail::session>();
  try {
    s->connection = std::make_unique<pqxx::connection>(p.conninfo);
    pqxx::nontransaction setup(*s->connection);
    setup.exec("SET statement_timeout = " + std::to_string(p.settings.statement_timeout.count()));
    setup.commit();
    detail::prepare_all(*s->connection);
  } catch (const pqxx::broken_connection& e) {
    throw unavailable(std::string("database unreachable: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    if (detail::is_unavailable_state(e.sqlstate())) {
      throw unavailable(std::string("database unavailable: ") + e.what());
    }
    throw;
  }
  return s;
}

}  // namespace

connection_pool::connection_pool(pool_settings settings) : impl_(std::make_unique<impl>()) {
  impl_->settings = std::move(settings);
  impl_->conninfo = with_client_options(impl_->settings);
}

connection_pool::~connection_pool() = default;

void connection_pool::ping() {
  detail::with_connection(*this, [](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    tx.exec("SELECT 1");
    return true;
  });
}

namespace detail {
namespace {
std::vector<const statement*>& registered() {
  static std::vector<const statement*> all;  // filled during static initialisation, read-only after
  return all;
}
}  // namespace

statement::statement(const char* statement_name, std::string statement_sql)
    : name(statement_name), sql(std::move(statement_sql)) {
  registered().push_back(this);
}

void prepare_all(pqxx::connection& c) {
  for (const statement* s : registered()) {
    c.prepare(s->name, s->sql);
  }
}

std::unique_ptr<session> pool_access::acquire(connection_pool& pool) {
  {
    std::lock_guard lock(pool.impl_->mutex);
    if (!pool.impl_->idle.empty()) {
      auto s = std::move(pool.impl_->idle.back());
      pool.impl_->idle.pop_back();
      return s;
    }
  }
  return connect(*pool.impl_);
}

void pool_access::release(connection_pool& pool, std::unique_ptr<session> s) {
  if (!s->connection->is_open()) {
    return;
  }
  std::lock_guard lock(pool.impl_->mutex);
  if (pool.impl_->idle.size() < pool.impl_->settings.max_idle) {
    pool.impl_->idle.push_back(std::move(s));
  }
}

void pool_access::drop_idle(connection_pool& pool) {
  std::vector<std::unique_ptr<session>> dropped;
  {
    std::lock_guard lock(pool.impl_->mutex);
    dropped.swap(pool.impl_->idle);
  }
}

bool is_unavailable_state(const std::string& sqlstate) {
  return sqlstate.starts_with("08") ||  // connection exception
         sqlstate == "57P01" ||         // admin_shutdown
         sqlstate == "57P02" ||         // crash_shutdown
         sqlstate == "57P03" ||         // cannot_connect_now (starting up, in recovery)
         sqlstate == "53300" ||         // too_many_connections
         sqlstate == "57014" ||         // query_canceled: statement_timeout
         sqlstate == "25006";           // read_only_sql_transaction: a standby during failover
}

}  // namespace detail
}  // namespace gesso::storage
