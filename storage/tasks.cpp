#include "storage/tasks.hpp"

#include "storage/pool_internal.hpp"
#include "storage/task_rows.hpp"

#include <boost/json.hpp>

namespace gesso::storage {
namespace {

// One statement is one transaction: authentication, the guarded debit, the task, its ledger charge and,
// with an Idempotency-Key, the key's row commit together or not at all. The outer SELECT always returns
// one row so that a missing key (account_id NULL), a key in another create's hands (turn false), a key
// already used (fresh 0) and insufficient credits (created_at NULL) can be told apart. A key's turn is
// an advisory lock that is tried, never waited for; a create that raced past the NOT EXISTS fails on
// the primary key of idempotency_keys and writes nothing.
const detail::statement create_statement{"create_task", R"sql(
WITH key AS (
    SELECT account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL
), turn AS (
    SELECT account_id, CASE WHEN $13::text IS NULL THEN true
                            ELSE pg_try_advisory_xact_lock(hashtextextended(account_id || ':' || $13::text, 0))
                       END AS ours
    FROM key
), fresh AS (
    SELECT account_id FROM turn
    WHERE ours AND ($13::text IS NULL OR NOT EXISTS (
        SELECT 1 FROM idempotency_keys i WHERE i.account_id = turn.account_id AND i.key = $13::text))
), debit AS (
    UPDATE accounts a SET balance = a.balance - $9::bigint
    FROM fresh WHERE a.id = fresh.account_id AND a.balance >= $9::bigint
    RETURNING a.id
), task AS (
    INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, image_urls,
                       credits, engine, max_attempts, deadline_at, callback_url)
    SELECT $2, debit.id, $3, $4, $5, $6, $7, $8::jsonb, $9::bigint, $10, $11::integer,
           now() + $12::integer * interval '1 second', $15::text
    FROM debit
    RETURNING id, account_id, created_at
), charge AS (
    INSERT INTO ledger (account_id, task_id, kind, amount)
    SELECT account_id, id, 'charge', $9::bigint FROM task
), remembered AS (
    INSERT INTO idempotency_keys (account_id, key, request_hash, task_id)
    SELECT account_id, $13::text, $14::text, id FROM task WHERE $13::text IS NOT NULL
)
SELECT (SELECT account_id FROM key),
       (SELECT floor(extract(epoch FROM created_at))::bigint FROM task),
       (SELECT ours FROM turn),
       (SELECT count(*) FROM fresh)
)sql"};

// The create a key was first used for, while its 24 hours last.
const detail::statement remembered_statement{"remembered_create", R"sql(
SELECT i.request_hash, t.id, t.request_id, t.credits
FROM idempotency_keys i JOIN tasks t ON t.id = i.task_id
WHERE i.account_id = $1 AND i.key = $2 AND i.created_at > now() - interval '24 hours'
)sql"};

// A key past its 24 hours is free again: its row goes before the key is used anew.
const detail::statement forget_expired_statement{"forget_expired_key", R"sql(
DELETE FROM idempotency_keys
WHERE account_id = $1 AND key = $2 AND created_at <= now() - interval '24 hours'
)sql"};

// Upkeep: keys past their 24 hours, oldest first, a batch at a time (idempotency_keys_created).
const detail::statement purge_keys_statement{"purge_idempotency_keys", R"sql(
DELETE FROM idempotency_keys
WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys
                            WHERE created_at <= now() - interval '24 hours'
                            ORDER BY created_at LIMIT $1)
)sql"};

const detail::statement find_statement{"find_task",
                                       "SELECT k.account_id, " + std::string(detail::task_columns) + R"sql(
FROM api_keys k
LEFT JOIN tasks t ON t.id = $2 AND t.account_id = k.account_id
WHERE k.key_hash = $1 AND k.revoked_at IS NULL
)sql"};

const detail::statement authenticate_statement{
    "authenticate", "SELECT account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL"};

// Every column of the task, and its webhook deliveries (sql/012) as one more member.
const detail::statement details_statement{"task_details", R"sql(
SELECT (to_jsonb(t) || jsonb_build_object('webhook_deliveries',
            (SELECT coalesce(jsonb_agg(to_jsonb(d) - 'task_id'), '[]'::jsonb)
             FROM webhook_deliveries d WHERE d.task_id = t.id)))::text
FROM tasks t WHERE id = $1
)sql"};

}  // namespace

namespace detail {

const problem bad_key{errc::unauthorized, "invalid or revoked API key"};

outcome<std::int64_t> account_of_key(pqxx::transaction_base& tx, std::string_view key_hash) {
  const pqxx::result r = tx.exec_prepared(authenticate_statement.name, std::string(key_hash));
  if (r.empty()) {
    return bad_key;
  }
  return r[0][0].as<std::int64_t>();
}

task_record read_task(const pqxx::row& row) {
  task_record t;
  t.account_id = row[0].as<std::int64_t>();
  t.id = row[1].c_str();
  t.model_id = row[2].c_str();
  t.type = parse_task_type(row[3].c_str()).value_or(task_type::image);
  t.status = static_cast<task_status>(row[4].as<int>());
  t.credits = row[5].as<std::int64_t>();
  t.created_at = row[6].as<std::int64_t>();
  t.image_object = detail::optional_text(row[7]);
  t.video_object = detail::optional_text(row[8]);
  t.audio_object = detail::optional_text(row[9]);
  t.error = detail::optional_text(row[10]);
  t.error_kind = detail::optional_text(row[11]);
  if (!row[12].is_null()) {
    t.progress = row[12].as<int>();
  }
  if (!row[13].is_null()) {
    t.finished_at = row[13].as<std::int64_t>();
  }
  t.cancel_requested = row[14].as<bool>();
  if (row[15].as<bool>()) {
    task_webhook w;
    if (!row[16].is_null()) {  // "status:attempts:code"
      const std::string text = row[16].c_str();
      const auto first = text.find(':');
      const auto second = text.find(':', first + 1);
      w.status = text.substr(0, first);
      w.attempts = std::stoi(text.substr(first + 1, second - first - 1));
      if (second + 1 < text.size()) {
        w.last_status_code = std::stoi(text.substr(second + 1));
      }
    }
    t.webhook = std::move(w);
  }
  return t;
}

}  // namespace detail

namespace {

// What one run of the create statement found.
struct create_attempt {
  std::optional<created_task> created = std::nullopt;  ///< the task, when this run made it
  std::optional<problem> refused =
      std::nullopt;             ///< a bad key, insufficient credits, the key in another create
  std::int64_t account_id = 0;  ///< set when the Idempotency-Key was already used (replay)
};

create_attempt run_create(pqxx::connection& c, std::string_view key_hash, const create_request& request,
                          std::string_view task_id, std::string_view request_id,
                          const std::optional<idempotency>& idem) {
  const model_spec& model = *request.model;
  boost::json::array urls;
  for (const auto& url : request.image_urls) {
    urls.emplace_back(url);
  }
  const std::string urls_json = boost::json::serialize(urls);
  pqxx::nontransaction tx(c);  // a single statement commits atomically on its own
  pqxx::result r;
  try {
    r = tx.exec_prepared(create_statement.name, std::string(key_hash), std::string(task_id),
                         std::string(request_id), model.id, std::string(to_string(model.type)),
                         request.prompt, request.aspect_ratio, urls_json, model.price, model.engine,
                         model.max_attempts, model.deadline_seconds, idem ? idem->key.c_str() : nullptr,
                         idem ? idem->request_hash.c_str() : nullptr,
                         request.callback_url ? request.callback_url->c_str() : nullptr);
  } catch (const pqxx::unique_violation&) {
    // Another create with this key committed after this statement's snapshot: nothing was written here.
    const auto account = detail::account_of_key(tx, key_hash);
    return {.account_id = account ? *account : 0};
  }
  const pqxx::row row = r[0];
  if (row[0].is_null()) {
    return {.refused = detail::bad_key};
  }
  if (!row[2].as<bool>()) {
    return {.refused = problem{errc::conflict,
                               "a create with this Idempotency-Key is in progress; retry it "
                               "in a moment to receive its answer"}};
  }
  if (row[3].as<std::int64_t>() == 0) {
    return {.account_id = row[0].as<std::int64_t>()};
  }
  if (row[1].is_null()) {
    return {.refused =
                problem{errc::insufficient_credits, "insufficient credits: " + model.id + " costs " +
                                                        std::to_string(model.price) + " credits per task"}};
  }
  return {.created = created_task{.id = std::string(task_id),
                                  .request_id = std::string(request_id),
                                  .credits = model.price,
                                  .created_at = row[1].as<std::int64_t>()}};
}

}  // namespace

outcome<created_task> create_task(connection_pool& pool, std::string_view key_hash,
                                  const create_request& request, std::string_view task_id,
                                  std::string_view request_id, const std::optional<idempotency>& idem) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<created_task> {
    // At most twice: the second run follows the removal of an expired key.
    for (int run = 0; run < 2; ++run) {
      create_attempt attempt = run_create(c, key_hash, request, task_id, request_id, idem);
      if (attempt.created) {
        return std::move(*attempt.created);
      }
      if (attempt.refused) {
        return std::move(*attempt.refused);
      }
      if (attempt.account_id == 0) {
        return detail::bad_key;
      }
      pqxx::nontransaction tx(c);
      const pqxx::result first = tx.exec_prepared(remembered_statement.name, attempt.account_id, idem->key);
      if (first.empty()) {
        tx.exec_prepared(forget_expired_statement.name, attempt.account_id, idem->key);
        continue;
      }
      if (first[0][0].c_str() != idem->request_hash) {
        return fail(errc::unprocessable,
                    "this Idempotency-Key was used for a different request in the last 24 hours; send the "
                    "same body to receive its answer, or use a new key");
      }
      return created_task{.id = first[0][1].c_str(),
                          .request_id = first[0][2].c_str(),
                          .credits = first[0][3].as<std::int64_t>(),
                          .replayed = true};
    }
    return fail(errc::conflict, "a create with this Idempotency-Key is in progress; retry it in a moment");
  });
}

std::int64_t purge_idempotency_keys(connection_pool& pool, int limit) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return static_cast<std::int64_t>(tx.exec_prepared(purge_keys_statement.name, limit).affected_rows());
  });
}

outcome<task_record> find_task(connection_pool& pool, std::string_view key_hash, std::string_view task_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<task_record> {
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec_prepared(find_statement.name, std::string(key_hash), std::string(task_id));
    if (r.empty()) {
      return detail::bad_key;
    }
    const pqxx::row row = r[0];
    if (row[1].is_null()) {
      return fail(errc::not_found, "task not found");
    }
    return detail::read_task(row);
  });
}

outcome<std::int64_t> authenticate(connection_pool& pool, std::string_view key_hash) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<std::int64_t> {
    pqxx::nontransaction tx(c);
    return detail::account_of_key(tx, key_hash);
  });
}

std::optional<std::string> task_details_json(connection_pool& pool, std::string_view task_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> std::optional<std::string> {
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec_prepared(details_statement.name, std::string(task_id));
    return r.empty() ? std::nullopt : std::optional<std::string>(r[0][0].c_str());
  });
}

}  // namespace gesso::storage
