#pragma once
// Ordered schema migrations from sql/, embedded at build time and applied by `gesso migrate`.

#include "storage/connection_pool.hpp"

#include <string>
#include <vector>

namespace gesso::storage {

/// One sql/NNN_name.sql file.
struct migration {
  int version;
  const char* name;
  const char* sql;
};

/// Every migration in sql/, in version order.
const std::vector<migration>& embedded_migrations();

/// What `migrate` did.
struct migrate_report {
  std::vector<std::string> applied;  ///< names applied by this call
  int current_version = 0;           ///< highest version in the database afterwards
};

/// Applies pending migrations in order, in one transaction under an advisory lock, so that several
/// nodes may run it at once: one applies, the others wait and then find nothing to do. Throws if an
/// already-applied migration's text changed.
migrate_report migrate(connection_pool& pool);

}  // namespace gesso::storage
