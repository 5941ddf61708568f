#include "storage/tasks.hpp"

#include "storage/pool_internal.hpp"

#include <boost/json.hpp>

namespace gesso::storage {
namespace {

const problem bad_key{errc::unauthorized, "invalid or revoked API key"};

// One statement is one transaction: authentication, the guarded debit, the task and its ledger
// charge commit together or not at all. The outer SELECT always returns one row so that a missing
// key (account_id NULL) and insufficient credits (created_at NULL) can be told apart.
const detail::statement create_statement{"create_task", R"sql(
WITH key AS (
    SELECT account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL
), debit AS (
    UPDATE accounts a SET balance = a.balance - $9::bigint
    FROM key WHERE a.id = key.account_id AND a.balance >= $9::bigint
    RETURNING a.id
), task AS (
    INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, image_urls,
                       credits, engine, max_attempts, deadline_at)
    SELECT $2, debit.id, $3, $4, $5, $6, $7, $8::jsonb, $9::bigint, $10, $11::integer,
           now() + $12::integer * interval '1 second'
    FROM debit
    RETURNING id, account_id, created_at
), charge AS (
    INSERT INTO ledger (account_id, task_id, kind, amount)
    SELECT account_id, id, 'charge', $9::bigint FROM task
)
SELECT (SELECT account_id FROM key),
       (SELECT floor(extract(epoch FROM created_at))::bigint FROM task)
)sql"};

// Columns as read_task reads them.
const detail::statement find_statement{"find_task", R"sql(
SELECT k.account_id, t.id, t.model_id, t.task_type, t.status, t.credits,
       floor(extract(epoch FROM t.created_at))::bigint, t.image_object, t.video_object, t.audio_object, t.error,
       t.error_kind, t.progress, floor(extract(epoch FROM t.finished_at))::bigint
FROM api_keys k
LEFT JOIN tasks t ON t.id = $2 AND t.account_id = k.account_id
WHERE k.key_hash = $1 AND k.revoked_at IS NULL
)sql"};

const detail::statement authenticate_statement{
    "authenticate", "SELECT account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL"};

const detail::statement details_statement{"task_details",
                                          "SELECT row_to_json(t)::text FROM tasks t WHERE id = $1"};

// The one reader of find_statement's rows.
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
  return t;
}

}  // namespace

namespace detail {
void prepare_task_statements(pqxx::connection& c) {
  for (const statement* s :
       {&create_statement, &find_statement, &authenticate_statement, &details_statement}) {
    prepare(c, *s);
  }
}
}  // namespace detail

outcome<created_task> create_task(connection_pool& pool, std::string_view key_hash,
                                  const create_request& request, std::string_view task_id,
                                  std::string_view request_id) {
  const model_spec& model = *request.model;
  boost::json::array urls;
  for (const auto& url : request.image_urls) {
    urls.emplace_back(url);
  }
  const std::string urls_json = boost::json::serialize(urls);
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<created_task> {
    pqxx::nontransaction tx(c);  // a single statement commits atomically on its own
    const pqxx::result r = tx.exec_prepared(
        create_statement.name, std::string(key_hash), std::string(task_id), std::string(request_id), model.id,
        std::string(to_string(model.type)), request.prompt, request.aspect_ratio, urls_json, model.price,
        model.engine, model.max_attempts, model.deadline_seconds);
    if (r[0][0].is_null()) {
      return bad_key;
    }
    if (r[0][1].is_null()) {
      return fail(errc::insufficient_credits, "insufficient credits: " + model.id + " costs " +
                                                  std::to_string(model.price) + " credits per task");
    }
    return created_task{std::string(task_id), model.price, r[0][1].as<std::int64_t>()};
  });
}

outcome<task_record> find_task(connection_pool& pool, std::string_view key_hash, std::string_view task_id) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<task_record> {
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec_prepared(find_statement.name, std::string(key_hash), std::string(task_id));
    if (r.empty()) {
      return bad_key;
    }
    const pqxx::row row = r[0];
    if (row[1].is_null()) {
      return fail(errc::not_found, "task not found");
    }
    return read_task(row);
  });
}

outcome<std::int64_t> authenticate(connection_pool& pool, std::string_view key_hash) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<std::int64_t> {
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec_prepared(authenticate_statement.name, std::string(key_hash));
    if (r.empty()) {
      return bad_key;
    }
    return r[0][0].as<std::int64_t>();
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
