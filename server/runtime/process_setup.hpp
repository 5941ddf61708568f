#pragma once
// Start-up shared by the executables: configuration, catalog and database settings.

#include "core/catalog.hpp"
#include "core/config.hpp"
#include "storage/connection_pool.hpp"

#include <string_view>

namespace gesso::runtime {

/// The configuration from the environment; on a bad value prints "<program>: <reason>" and exits 2.
config load_config_or_exit(std::string_view program);

/// The catalog file named by GESSO_CATALOG, or the built-in catalog; exits 2 on a bad file.
catalog load_catalog_or_exit(std::string_view program, const config& cfg);

/// Raises this process's open-file limit to its hard limit and returns `wanted` connections, or fewer
/// when the limit cannot hold them beside the database connections and files (with a warning).
std::size_t connection_limit_within_open_files(std::size_t wanted);

/// Pool settings from the configuration; exits 2 when GESSO_DATABASE_URL is not set.
storage::pool_settings pool_settings_or_exit(std::string_view program, const config& cfg);

}  // namespace gesso::runtime
