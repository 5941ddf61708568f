#include "storage/account_view.hpp"

#include "storage/pool_internal.hpp"
#include "storage/task_rows.hpp"

namespace gesso::storage {
namespace {

const detail::statement view_statement{"account_view", R"sql(
SELECT a.id, a.name, a.balance, a.rate_limit_per_second, a.rate_limit_burst, a.max_concurrent_tasks
FROM api_keys k JOIN accounts a ON a.id = k.account_id
WHERE k.key_hash = $1 AND k.revoked_at IS NULL
)sql"};

// The account's charge and refund rows in the window (ledger_account_created), grouped by $4: 'model'
// (through the task) or 'day' (UTC).
const detail::statement usage_statement{"account_usage", R"sql(
SELECT CASE $4::text WHEN 'model' THEN t.model_id
                     ELSE to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') END AS key,
       count(*) FILTER (WHERE l.kind = 'charge'),
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'charge'), 0)::bigint,
       count(*) FILTER (WHERE l.kind = 'refund'),
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'refund'), 0)::bigint
FROM ledger l JOIN tasks t ON t.id = l.task_id
WHERE l.account_id = $1 AND l.kind IN ('charge', 'refund')
  AND l.created_at >= to_timestamp($2::bigint) AND l.created_at < to_timestamp($3::bigint)
GROUP BY 1
ORDER BY 1
)sql"};

// $2, $4, $6 say whether to change each limit; $3, $5, $7 are the new values (NULL: the default).
const detail::statement set_limits_statement{"set_account_limits", R"sql(
UPDATE accounts
SET rate_limit_per_second = CASE WHEN $2::boolean THEN $3::integer ELSE rate_limit_per_second END,
    rate_limit_burst = CASE WHEN $4::boolean THEN $5::integer ELSE rate_limit_burst END,
    max_concurrent_tasks = CASE WHEN $6::boolean THEN $7::integer ELSE max_concurrent_tasks END
WHERE id = $1
RETURNING rate_limit_per_second, rate_limit_burst, max_concurrent_tasks
)sql"};

template <class T>
std::optional<T> optional_of(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<T>(f.as<T>());
}

}  // namespace

outcome<account_view> view_account(connection_pool& pool, std::string_view key_hash) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<account_view> {
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec_prepared(view_statement.name, std::string(key_hash));
    if (r.empty()) {
      return detail::bad_key;
    }
    const pqxx::row row = r[0];
    return account_view{.id = row[0].as<std::int64_t>(),
                        .name = row[1].c_str(),
                        .balance = row[2].as<std::int64_t>(),
                        .limits = {.rate_per_second = optional_of<int>(row[3]),
                                   .burst = optional_of<int>(row[4]),
                                   .max_concurrent_tasks = optional_of<int>(row[5])}};
  });
}

outcome<limit_settings> set_account_limits(connection_pool& pool, std::int64_t account_id, limit_change rate,
                                           limit_change burst, limit_change max_concurrent) {
  const auto text = [](const limit_change& c) {
    return c.value ? std::optional<std::string>(std::to_string(*c.value)) : std::nullopt;
  };
  const auto rate_text = text(rate);
  const auto burst_text = text(burst);
  const auto max_text = text(max_concurrent);
  const auto value = [](const std::optional<std::string>& t) { return t ? t->c_str() : nullptr; };
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<limit_settings> {
    pqxx::nontransaction tx(c);
    const pqxx::result r =
        tx.exec_prepared(set_limits_statement.name, account_id, rate.change, value(rate_text), burst.change,
                         value(burst_text), max_concurrent.change, value(max_text));
    if (r.empty()) {
      return fail(errc::not_found, "no such account");
    }
    return limit_settings{optional_of<int>(r[0][0]), optional_of<int>(r[0][1]), optional_of<int>(r[0][2])};
  });
}

outcome<std::vector<usage_group>> account_usage(connection_pool& pool, std::string_view key_hash,
                                                std::int64_t from, std::int64_t to, usage_grouping grouping) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<std::vector<usage_group>> {
    pqxx::nontransaction tx(c);
    const auto account = detail::account_of_key(tx, key_hash);
    if (!account) {
      return account.error();
    }
    std::vector<usage_group> out;
    for (const auto& row : tx.exec_prepared(usage_statement.name, *account, from, to,
                                            grouping == usage_grouping::model ? "model" : "day")) {
      out.push_back({row[0].c_str(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>(),
                     row[3].as<std::int64_t>(), row[4].as<std::int64_t>()});
    }
    return out;
  });
}

}  // namespace gesso::storage
