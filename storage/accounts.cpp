#include "storage/accounts.hpp"

#include "core/webhook_signature.hpp"
#include "storage/pool_internal.hpp"

#include <algorithm>

namespace gesso::storage {
namespace {

const detail::statement summary_statement{"account_summary", R"sql(
SELECT a.id, a.name, a.balance,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'grant'), 0)::bigint,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'charge'), 0)::bigint,
       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'refund'), 0)::bigint,
       (SELECT count(*) FROM tasks t WHERE t.account_id = a.id AND t.status = 1),
       (SELECT count(*) FROM tasks t WHERE t.account_id = a.id AND t.status = 2),
       (SELECT count(*) FROM tasks t WHERE t.account_id = a.id AND t.status = 3),
       (SELECT count(*) FROM tasks t WHERE t.account_id = a.id AND t.status = 4)
FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
WHERE a.id = $1
GROUP BY a.id
)sql"};

constexpr const char* key_columns =
    "id, account_id, display_prefix, to_char(created_at AT TIME ZONE 'UTC', "
    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
    "to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

const detail::statement keys_statement{
    "account_keys",
    std::string("SELECT ") + key_columns + " FROM api_keys WHERE account_id = $1 ORDER BY id"};
const detail::statement insert_account_statement{
    "insert_account", "INSERT INTO accounts (name, balance) VALUES ($1, $2::bigint) RETURNING id"};
const detail::statement insert_grant_statement{
    "insert_grant",
    "INSERT INTO ledger (account_id, kind, amount, note) VALUES ($1::bigint, 'grant', $2::bigint, $3)"};
const detail::statement insert_key_statement{
    "insert_key", std::string("INSERT INTO api_keys (account_id, key_hash, display_prefix) "
                              "SELECT id, $2, $3 FROM accounts WHERE id = $1::bigint RETURNING ") +
                      key_columns};
const detail::statement revoke_key_statement{
    "revoke_key", std::string("UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
                              "WHERE id = $1::bigint RETURNING ") +
                      key_columns};
const detail::statement revoke_key_by_hash_statement{
    "revoke_key_by_hash", std::string("UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) "
                                      "WHERE key_hash = $1 RETURNING ") +
                              key_columns};
const detail::statement insert_secret_statement{
    "insert_webhook_secret", "INSERT INTO webhook_secrets (account_id, secret) VALUES ($1::bigint, $2)"};
const detail::statement add_balance_statement{
    "add_balance", "UPDATE accounts SET balance = balance + $2::bigint WHERE id = $1::bigint RETURNING id"};
const detail::statement ledger_mismatches_statement{"ledger_mismatches", R"sql(
SELECT a.id FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
GROUP BY a.id
HAVING a.balance <> coalesce(sum(CASE l.kind WHEN 'charge' THEN -l.amount ELSE l.amount END), 0)
ORDER BY a.id
)sql"};
const detail::statement books_statement{"books_of_tasks", R"sql(
SELECT t.id, t.status, t.credits,
       count(l.id) FILTER (WHERE l.kind = 'charge'), coalesce(sum(l.amount) FILTER (WHERE l.kind = 'charge'), 0),
       count(l.id) FILTER (WHERE l.kind = 'refund'), coalesce(sum(l.amount) FILTER (WHERE l.kind = 'refund'), 0)
FROM tasks t LEFT JOIN ledger l ON l.task_id = t.id
WHERE t.id = ANY (string_to_array($1, ','))
GROUP BY t.id
)sql"};

key_info read_key(const pqxx::row& row) {
  key_info k;
  k.id = row[0].as<std::int64_t>();
  k.account_id = row[1].as<std::int64_t>();
  k.display_prefix = row[2].c_str();
  k.created_at = row[3].c_str();
  if (!row[4].is_null()) {
    k.revoked_at = row[4].c_str();
  }
  return k;
}

std::optional<account_summary> read_summary(pqxx::transaction_base& tx, std::int64_t account_id) {
  const pqxx::result r = tx.exec_prepared(summary_statement.name, account_id);
  if (r.empty()) {
    return std::nullopt;
  }
  const pqxx::row row = r[0];
  account_summary s;
  s.id = row[0].as<std::int64_t>();
  s.name = row[1].c_str();
  s.balance = row[2].as<std::int64_t>();
  s.granted = row[3].as<std::int64_t>();
  s.charged = row[4].as<std::int64_t>();
  s.refunded = row[5].as<std::int64_t>();
  for (std::size_t i = 0; i < 4; ++i) {
    s.tasks_by_status[i] = row[static_cast<int>(6 + i)].as<std::int64_t>();
  }
  for (const auto& key_row : tx.exec_prepared(keys_statement.name, account_id)) {
    s.keys.push_back(read_key(key_row));
  }
  return s;
}

const problem no_account{errc::not_found, "no such account"};
const problem no_key{errc::not_found, "no such API key"};

}  // namespace

account_summary create_account(connection_pool& pool, std::string_view name, std::int64_t credits,
                               std::string_view key_hash, std::string_view key_prefix) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::work tx(c);
    const auto id =
        tx.exec_prepared1(insert_account_statement.name, std::string(name), credits)[0].as<std::int64_t>();
    if (credits > 0) {
      tx.exec_prepared0(insert_grant_statement.name, id, credits, "initial credits");
    }
    tx.exec_prepared1(insert_key_statement.name, id, std::string(key_hash), std::string(key_prefix));
    const std::string secret = new_webhook_secret();
    tx.exec_prepared0(insert_secret_statement.name, id, secret);
    account_summary s = read_summary(tx, id).value();
    tx.commit();
    s.webhook_secret = secret;
    return s;
  });
}

outcome<key_info> create_key(connection_pool& pool, std::int64_t account_id, std::string_view key_hash,
                             std::string_view key_prefix) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<key_info> {
    pqxx::work tx(c);
    const pqxx::result r = tx.exec_prepared(insert_key_statement.name, account_id, std::string(key_hash),
                                            std::string(key_prefix));
    if (r.empty()) {
      return no_account;
    }
    tx.commit();
    return read_key(r[0]);
  });
}

// Runs one of the two revoke statements (by id or by hash) with its single argument.
template <class Argument>
outcome<key_info> revoke(connection_pool& pool, const char* statement, const Argument& argument) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<key_info> {
    pqxx::work tx(c);
    const pqxx::result r = tx.exec_prepared(statement, argument);
    if (r.empty()) {
      return no_key;
    }
    tx.commit();
    return read_key(r[0]);
  });
}

outcome<key_info> revoke_key(connection_pool& pool, std::int64_t key_id) {
  return revoke(pool, revoke_key_statement.name, key_id);
}

outcome<key_info> revoke_key_by_hash(connection_pool& pool, std::string_view key_hash) {
  return revoke(pool, revoke_key_by_hash_statement.name, std::string(key_hash));
}

outcome<account_summary> grant_credits(connection_pool& pool, std::int64_t account_id, std::int64_t amount,
                                       std::string_view note) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<account_summary> {
    pqxx::work tx(c);
    if (tx.exec_prepared(add_balance_statement.name, account_id, amount).empty()) {
      return no_account;
    }
    tx.exec_prepared0(insert_grant_statement.name, account_id, amount, std::string(note));
    account_summary s = read_summary(tx, account_id).value();
    tx.commit();
    return s;
  });
}

outcome<account_summary> show_account(connection_pool& pool, std::int64_t account_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<account_summary> {
    pqxx::work tx(c, "show_account");
    auto s = read_summary(tx, account_id);
    if (!s) {
      return no_account;
    }
    return *s;
  });
}

std::vector<account_summary> ledger_mismatches(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::work tx(c);
    std::vector<account_summary> out;
    for (const auto& row : tx.exec_prepared(ledger_mismatches_statement.name)) {
      if (auto s = read_summary(tx, row[0].as<std::int64_t>())) {
        out.push_back(std::move(*s));
      }
    }
    return out;
  });
}

std::vector<task_books> books_of_tasks(connection_pool& pool, const std::vector<std::string>& task_ids) {
  std::vector<task_books> out;
  constexpr std::size_t chunk = 5000;
  for (std::size_t from = 0; from < task_ids.size(); from += chunk) {
    std::string list;  // task ids are base32 and '_' (core/ids), so a comma separates them safely
    for (std::size_t i = from; i < std::min(task_ids.size(), from + chunk); ++i) {
      list += (list.empty() ? "" : ",") + task_ids[i];
    }
    detail::with_connection(pool, [&](pqxx::connection& c) {
      pqxx::read_transaction tx(c);
      for (const auto& row : tx.exec_prepared(books_statement.name, list)) {
        out.push_back(task_books{row[0].as<std::string>(), row[1].as<int>(), row[2].as<std::int64_t>(),
                                 row[3].as<int>(), row[4].as<std::int64_t>(), row[5].as<int>(),
                                 row[6].as<std::int64_t>()});
      }
      return 0;
    });
  }
  return out;
}

}  // namespace gesso::storage
