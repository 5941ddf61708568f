#pragma once
// storage-internal: borrowing a libpqxx connection from the pool. Never included outside storage/.

#include "storage/connection_pool.hpp"

#include <pqxx/pqxx>

#include <memory>
#include <optional>
#include <string>

namespace gesso::storage::detail {

struct session {
  std::unique_ptr<pqxx::connection> connection;
};

struct pool_access {
  static std::unique_ptr<session> acquire(connection_pool& pool);
  static void release(connection_pool& pool, std::unique_ptr<session> s);
  /// Closes every idle connection: after one broke, the others are likely broken too.
  static void drop_idle(connection_pool& pool);
};

/// A prepared statement: its name is written once, beside its SQL, and used both to prepare it on
/// every new connection and to run it. Every statement registers itself when it is constructed (they
/// are namespace-scope constants), so a new connection prepares all of them and none can be left out
/// of a hand-kept list.
struct statement {
  statement(const char* name, std::string sql);
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  const char* name;
  std::string sql;
};

/// Prepares every registered statement on a fresh connection.
void prepare_all(pqxx::connection& c);

/// A nullable text column.
inline std::optional<std::string> optional_text(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str());
}

/// Whether an SQLSTATE means "the database is unavailable right now" rather than a bug.
bool is_unavailable_state(const std::string& sqlstate);

/// Runs `work(pqxx::connection&)` on a pooled connection. Connection loss, shutdown and statement
/// timeouts become `unavailable`; other exceptions pass through unchanged.
template <class Work>
auto with_connection(connection_pool& pool, Work&& work)
    -> decltype(work(std::declval<pqxx::connection&>())) {
  std::unique_ptr<session> s = pool_access::acquire(pool);
  try {
    auto result = work(*s->connection);
    pool_access::release(pool, std::move(s));
    return result;
  } catch (const pqxx::broken_connection& e) {
    pool_access::drop_idle(pool);
    throw unavailable(std::string("database connection lost: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    if (is_unavailable_state(e.sqlstate())) {
      pool_access::drop_idle(pool);
      throw unavailable(std::string("database unavailable: ") + e.what());
    }
    pool_access::release(pool, std::move(s));
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    throw unavailable(std::string("database commit outcome unknown: ") + e.what());
  } catch (const pqxx::transaction_rollback& e) {
    pool_access::release(pool, std::move(s));
    throw unavailable(std::string("database transaction rolled back: ") + e.what());
  }
}

}  // namespace gesso::storage::detail
