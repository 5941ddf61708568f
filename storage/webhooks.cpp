#include "storage/webhooks.hpp"

#include "storage/pool_internal.hpp"
#include "storage/task_rows.hpp"

namespace gesso::storage {
namespace {

// next_attempt_at doubles as the lease, as run_after does for tasks.
const detail::statement claim_statement{"claim_deliveries", R"sql(
UPDATE webhook_deliveries d
SET attempts = d.attempts + 1, next_attempt_at = now() + $2::bigint * interval '1 millisecond'
WHERE d.id IN (SELECT id FROM webhook_deliveries
               WHERE status = 'pending' AND next_attempt_at <= now()
               ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING d.id, d.task_id, d.url, d.attempts, floor(extract(epoch FROM now() - d.created_at))::bigint
)sql"};

const detail::statement content_statement{
    "delivery_task",
    "SELECT t.account_id, " + std::string(detail::task_columns) + " FROM tasks t WHERE t.id = $1"};

const detail::statement secrets_statement{"delivery_secrets", R"sql(
SELECT secret FROM webhook_secrets
WHERE account_id = $1 AND (expires_at IS NULL OR expires_at > now())
ORDER BY created_at DESC, id DESC
)sql"};

// $3: 1 delivered, 0 retry at $6 ms, -1 failed for good.
const detail::statement end_statement{"end_delivery", R"sql(
UPDATE webhook_deliveries
SET status = CASE $3::int WHEN 1 THEN 'delivered' WHEN 0 THEN 'pending' ELSE 'failed' END,
    last_status_code = $4::integer, last_error = nullif($5::text, ''),
    next_attempt_at = CASE WHEN $3::int = 0 THEN now() + $6::bigint * interval '1 millisecond'
                           ELSE next_attempt_at END,
    finished_at = CASE WHEN $3::int <> 0 THEN now() END
WHERE id = $1 AND attempts = $2 AND status = 'pending'
RETURNING id
)sql"};

const detail::statement rotate_old_statement{"rotate_secret_old", R"sql(
UPDATE webhook_secrets SET expires_at = now() + interval '24 hours'
WHERE account_id = $1 AND expires_at IS NULL
)sql"};
const detail::statement rotate_new_statement{"rotate_secret_new",
                                             "INSERT INTO webhook_secrets (account_id, secret) SELECT id, $2 "
                                             "FROM accounts WHERE id = $1 RETURNING id"};

}  // namespace

std::vector<webhook_delivery> claim_deliveries(connection_pool& pool, int limit,
                                               std::chrono::milliseconds lease) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    std::vector<webhook_delivery> out;
    for (const auto& row : tx.exec_prepared(claim_statement.name, limit, lease.count())) {
      out.push_back({row[0].c_str(), row[1].c_str(), row[2].c_str(), row[3].as<int>(),
                     std::chrono::seconds(row[4].as<std::int64_t>())});
    }
    return out;
  });
}

std::optional<webhook_content> delivery_content(connection_pool& pool, std::string_view task_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> std::optional<webhook_content> {
    pqxx::nontransaction tx(c);
    const pqxx::result task = tx.exec_prepared(content_statement.name, std::string(task_id));
    if (task.empty()) {
      return std::nullopt;
    }
    webhook_content out{detail::read_task(task[0]), {}};
    for (const auto& row : tx.exec_prepared(secrets_statement.name, out.task.account_id)) {
      out.secrets.emplace_back(row[0].c_str());
    }
    return out;
  });
}

bool end_delivery(connection_pool& pool, std::string_view id, int attempt, const delivery_end& end) {
  const int how = end.delivered ? 1 : end.retry_in ? 0 : -1;
  const std::string code = end.status_code ? std::to_string(*end.status_code) : "";
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return !tx.exec_prepared(end_statement.name, std::string(id), attempt, how,
                             end.status_code ? code.c_str() : nullptr, end.error,
                             end.retry_in.value_or(std::chrono::milliseconds(0)).count())
                .empty();
  });
}

outcome<std::string> rotate_webhook_secret(connection_pool& pool, std::int64_t account_id,
                                           std::string_view new_secret) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<std::string> {
    pqxx::work tx(c);
    tx.exec_prepared(rotate_old_statement.name, account_id);
    if (tx.exec_prepared(rotate_new_statement.name, account_id, std::string(new_secret)).empty()) {
      return fail(errc::not_found, "no such account");
    }
    tx.commit();
    return std::string(new_secret);
  });
}

}  // namespace gesso::storage
