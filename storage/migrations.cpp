#include "storage/migrations.hpp"

#include "core/ids.hpp"
#include "storage/pool_internal.hpp"

#include <map>
#include <stdexcept>

namespace gesso::storage {
namespace {

// Arbitrary, fixed: every Gesso process agrees on it.
constexpr long long migration_lock_key = 0x6765'7373'6f00'0001;

}  // namespace

migrate_report migrate(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::work tx(c, "migrate");
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(migration_lock_key) + ")");
    tx.exec(R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer     PRIMARY KEY,
    name        text        NOT NULL,
    checksum    text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
))sql");
    std::map<int, std::string> applied;
    for (const auto& row : tx.exec("SELECT version, checksum FROM schema_migrations")) {
      applied.emplace(row[0].as<int>(), row[1].c_str());
    }
    migrate_report report;
    for (const migration& m : embedded_migrations()) {
      const std::string checksum = hash_api_key(m.sql);  // SHA-256 hex of the text
      if (const auto it = applied.find(m.version); it != applied.end()) {
        if (it->second != checksum) {
          throw std::runtime_error(std::string("migration ") + m.name +
                                   " was changed after it was applied; add a new migration instead");
        }
        continue;
      }
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)", m.version,
                     std::string(m.name), checksum);
      report.applied.emplace_back(m.name);
    }
    report.current_version = tx.exec1("SELECT coalesce(max(version), 0) FROM schema_migrations")[0].as<int>();
    tx.commit();
    return report;
  });
}

}  // namespace gesso::storage
