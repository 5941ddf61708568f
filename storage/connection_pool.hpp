#pragma once
// A bounded set of PostgreSQL connections, opened on demand and dropped when they break, so the
// processes reconnect by themselves after a database restart.

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace gesso::storage {

/// The database cannot be reached, the connection broke, or a statement timed out: callers answer
/// 503 and may retry. Every other database exception is a bug and answers 500.
class unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How to reach the database.
struct pool_settings {
  std::string url;            ///< libpq connection string or URI
  std::size_t max_idle = 16;  ///< connections kept open between uses
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds statement_timeout{5000};
  std::string application_name = "gesso";
};

namespace detail {
struct session;
struct pool_access;
}  // namespace detail

/// Thread-safe; each call borrows one connection for its duration.
class connection_pool {
 public:
  explicit connection_pool(pool_settings settings);
  ~connection_pool();
  connection_pool(const connection_pool&) = delete;
  connection_pool& operator=(const connection_pool&) = delete;

  /// Opens (or borrows) a connection and runs `SELECT 1`; throws unavailable when that fails.
  void ping();

  struct impl;  ///< defined in connection_pool.cpp

 private:
  friend struct detail::pool_access;
  std::unique_ptr<impl> impl_;
};

}  // namespace gesso::storage
