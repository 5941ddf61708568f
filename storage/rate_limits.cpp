#include "storage/rate_limits.hpp"

#include "storage/pool_internal.hpp"

namespace gesso::storage {
namespace {

const detail::statement take_statement{
    "take_rate_tokens", "SELECT granted, available, rate, burst FROM take_rate_tokens($1, $2, $3, $4)"};

}  // namespace

rate_tokens take_rate_tokens(connection_pool& pool, std::string_view key_hash, int default_rate,
                             int default_burst, int want) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    const pqxx::row row =
        tx.exec_prepared1(take_statement.name, std::string(key_hash), default_rate, default_burst, want);
    return rate_tokens{row[0].as<int>(), row[1].as<double>(), row[2].as<int>(), row[3].as<int>()};
  });
}

}  // namespace gesso::storage
