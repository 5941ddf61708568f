#include "storage/task_queue.hpp"

#include "storage/ledger_sql.hpp"
#include "storage/pool_internal.hpp"

#include <boost/json.hpp>

#include <set>

namespace gesso::storage {
namespace {

// The fragments that more than one statement must agree on. A task is due for a claim when it is
// queued or its lease has run out (run_after), and it still has attempts and time left; a lease ends by
// clearing all three of its columns; a held task is changed only under its lease token.
const std::string due =
    "status IN (1, 2) AND run_after <= now() AND attempts < max_attempts AND deadline_at > now()";
const std::string lease_cleared = "lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL";
std::string held_under(std::string_view token) {
  return "lease_token = " + std::string(token) + " AND status = 2";
}

// run_after doubles as the lease expiry while a task is held, so "due" is one predicate for new tasks,
// retries and abandoned leases alike. The claim itself is claim_due_tasks (sql/011): fair between
// accounts, within each account's concurrency cap. Columns as read_claimed reads them.
const detail::statement claim_statement{"claim_due", R"sql(
SELECT t.id, t.lease_token::text, t.model_id, t.task_type, t.prompt, t.aspect_ratio, t.image_urls::text,
       t.engine, t.attempts, t.max_attempts, t.provider_job, t.error, t.cancel_requested_at IS NOT NULL
FROM claim_due_tasks($1, $2, $3, $4, $5) t
)sql"};

const detail::statement extend_statement{"extend_lease", R"sql(
UPDATE tasks SET lease_expires_at = now() + $3::bigint * interval '1 millisecond',
                 run_after = now() + $3::bigint * interval '1 millisecond'
WHERE id = $1 AND )sql" + held_under("$2::uuid") + R"sql(
RETURNING id
)sql"};

// Every lease end of a batch in one statement: the ends arrive as parallel arrays (kind as in
// lease_end::kind: 0 succeeded, 1 failed, 2 retry, 3 wait, 4 give back), each applied only while its
// task is held under its token. Final ends drop inline inputs (sql/002); failed ones are refunded below.
const std::string end_leases_head = R"sql(
WITH r AS (
    SELECT * FROM unnest($1::text[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
                         $8::bigint[], $9::text[], $10::text[], $11::int[])
           AS r (id, token, kind, image, video, audio, error, delay_ms, provider_job, failure, progress)
), ended AS (
    UPDATE tasks t SET
        status = CASE r.kind WHEN 0 THEN 3 WHEN 1 THEN 4 ELSE t.status END,
        image_object = CASE WHEN r.kind = 0 THEN r.image ELSE t.image_object END,
        video_object = CASE WHEN r.kind = 0 THEN r.video ELSE t.video_object END,
        audio_object = CASE WHEN r.kind = 0 THEN r.audio ELSE t.audio_object END,
        error = CASE r.kind WHEN 0 THEN NULL WHEN 1 THEN r.error WHEN 2 THEN r.error ELSE t.error END,
        finished_at = CASE WHEN r.kind IN (0, 1) THEN now() ELSE t.finished_at END,
        image_urls = CASE WHEN r.kind IN (0, 1) THEN without_inline_inputs(t.image_urls) ELSE t.image_urls END,
        -- A task whose cancel was asked for while it was held is due at once, to be canceled.
        run_after = CASE WHEN r.kind IN (2, 3) AND t.cancel_requested_at IS NOT NULL THEN now()
                         WHEN r.kind IN (2, 3) THEN now() + r.delay_ms * interval '1 millisecond'
                         WHEN r.kind = 4 THEN now() ELSE t.run_after END,
        attempts = CASE WHEN r.kind IN (3, 4) THEN t.attempts - 1 ELSE t.attempts END,
        error_kind = CASE r.kind WHEN 0 THEN NULL WHEN 1 THEN coalesce(nullif(r.failure, ''), 'internal')
                                 ELSE t.error_kind END,
        progress = CASE WHEN r.kind = 0 THEN 100 WHEN r.kind = 3 AND r.progress BETWEEN 0 AND 100 THEN r.progress
                        ELSE t.progress END,
        -- A wait with no job (a route at its max_concurrency) clears it: the next claim submits.
        provider_job = CASE WHEN r.kind = 3 THEN nullif(r.provider_job, '')
                            WHEN r.kind IN (0, 1) AND r.provider_job <> '' THEN r.provider_job
                            ELSE t.provider_job END,
        )sql" + lease_cleared + R"sql(
    FROM r
    WHERE t.id = r.id AND t.)sql" + held_under("r.token") +
                                    R"sql(
    RETURNING t.id, t.account_id, t.credits, r.kind
), failed AS (
    SELECT id, account_id, credits FROM ended WHERE kind = 1
), freed AS (
    -- Only a task waiting at its provider keeps its route slot (sql/004).
    DELETE FROM route_slots WHERE task_id IN (SELECT id FROM ended WHERE kind <> 3)
),)sql";

const std::string rescue_head = R"sql(
WITH overdue AS (
    SELECT id FROM tasks
    WHERE status IN (1, 2) AND run_after <= now() AND (deadline_at <= now() OR attempts >= max_attempts)
    ORDER BY run_after
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), failed AS (
    UPDATE tasks t
    SET status = 4, finished_at = now(), )sql" +
                                lease_cleared + R"sql(,
        image_urls = without_inline_inputs(t.image_urls),
        error = CASE WHEN t.deadline_at <= now()
                     THEN 'the task did not finish before its deadline'
                     ELSE 'the task failed after ' || t.attempts || ' attempts'
                END || coalesce(': ' || t.error, ''),
        -- Out of attempts here means the last one's lease ran out: its worker died.
        error_kind = CASE WHEN t.deadline_at <= now() THEN 'deadline' ELSE 'internal' END
    FROM overdue WHERE t.id = overdue.id
    RETURNING t.id, t.account_id, t.credits, t.model_id, t.provider_job
), freed AS (
    DELETE FROM route_slots WHERE task_id IN (SELECT id FROM failed)
),)sql";

// Under the route's advisory lock (taken first, in the same transaction): a slot while fewer than the
// cap are held, or the task's own slot moved to this route.
const detail::statement lock_route_statement{"lock_route", "SELECT pg_advisory_xact_lock(hashtext($1))"};
const detail::statement take_slot_statement{"take_route_slot", R"sql(
INSERT INTO route_slots (task_id, route_key)
SELECT $2, $1
WHERE (SELECT count(*) FROM route_slots WHERE route_key = $1 AND task_id <> $2) < $3
ON CONFLICT (task_id) DO UPDATE SET route_key = excluded.route_key, acquired_at = now()
RETURNING task_id
)sql"};

// provider_job is JSON for provider engines and a bare id for task-api: the CASE keeps the cast away
// from the latter (a CASE's branches are evaluated only when taken).
const detail::statement route_in_flight_statement{"route_in_flight", R"sql(
SELECT model_id, route, count(*)
FROM (SELECT model_id, CASE WHEN provider_job LIKE '{%' THEN provider_job::jsonb ->> 'route' END AS route
      FROM tasks WHERE status = 2 AND provider_job IS NOT NULL) AS held
WHERE route IS NOT NULL
GROUP BY model_id, route
)sql"};

const detail::statement count_due_statement{"count_due", "SELECT count(*) FROM tasks WHERE " + due};

const detail::statement queue_stats_statement{"queue_stats", R"sql(
SELECT count(*) FILTER (WHERE due),
       coalesce(extract(epoch FROM now() - min(run_after) FILTER (WHERE due)), 0)::float8,
       count(*) FILTER (WHERE status = 2 AND provider_job IS NOT NULL)
FROM (SELECT status, run_after, provider_job,
             ()sql" + due + R"sql() AS due
      FROM tasks WHERE status IN (1, 2)) AS open
)sql"};

const detail::statement end_leases_statement{
    "end_leases", end_leases_head + detail::refund_cte +
                      ", finals AS (SELECT id FROM ended WHERE kind IN (0, 1)), " + detail::announce_cte +
                      "," + detail::outbox_cte + "SELECT id FROM ended, announced"};
const detail::statement rescue_statement{
    "rescue_overdue", rescue_head + detail::refund_cte + ", finals AS (SELECT id FROM failed), " +
                          detail::announce_cte + "," + detail::outbox_cte +
                          "SELECT id, model_id, provider_job FROM failed, announced"};

// The one reader of claim_statement's rows.
claimed_task read_claimed(const pqxx::row& row) {
  claimed_task t;
  t.id = row[0].c_str();
  t.lease_token = row[1].c_str();
  t.model_id = row[2].c_str();
  t.type = parse_task_type(row[3].c_str()).value_or(task_type::image);
  t.prompt = row[4].c_str();
  t.aspect_ratio = row[5].c_str();
  const boost::json::value urls = boost::json::parse(row[6].c_str());  // named: the loop borrows from it
  for (const auto& url : urls.as_array()) {
    t.image_urls.emplace_back(url.as_string());
  }
  t.engine = row[7].c_str();
  t.attempt = row[8].as<int>();
  t.max_attempts = row[9].as<int>();
  t.provider_job = detail::optional_text(row[10]);
  t.last_error = detail::optional_text(row[11]);
  t.cancel_requested = row[12].as<bool>();
  return t;
}

}  // namespace

std::vector<claimed_task> claim_due(connection_pool& pool, std::string_view owner, int limit,
                                    std::chrono::milliseconds lease, int default_cap) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);  // one statement: the claim commits on its own, holding nothing
    std::vector<claimed_task> out;
    for (const auto& row : tx.exec_prepared(claim_statement.name, std::string(owner), lease.count(), limit,
                                            default_cap, max_accounts_per_claim)) {
      out.push_back(read_claimed(row));
    }
    return out;
  });
}

bool extend_lease(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                  std::chrono::milliseconds lease) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return !tx.exec_prepared(extend_statement.name, std::string(task_id), std::string(lease_token),
                             lease.count())
                .empty();
  });
}

std::vector<route_in_flight> read_route_in_flight(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    std::vector<route_in_flight> out;
    for (const auto& row : tx.exec_prepared(route_in_flight_statement.name)) {
      out.push_back({row[0].c_str(), row[1].c_str(), row[2].as<std::int64_t>()});
    }
    return out;
  });
}

bool take_route_slot(connection_pool& pool, std::string_view route_key, std::string_view task_id, int cap) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::work tx(c);
    tx.exec_prepared(lock_route_statement.name, std::string(route_key));
    const bool taken =
        !tx.exec_prepared(take_slot_statement.name, std::string(route_key), std::string(task_id), cap)
             .empty();
    tx.commit();
    return taken;
  });
}

lease_end lease_end::succeeded(std::string task_id, std::string lease_token, task_outputs outputs) {
  return {.how = kind::succeeded,
          .task_id = std::move(task_id),
          .lease_token = std::move(lease_token),
          .outputs = std::move(outputs)};
}

lease_end lease_end::failed(std::string task_id, std::string lease_token, std::string error,
                            std::string failure) {
  return {.how = kind::failed,
          .task_id = std::move(task_id),
          .lease_token = std::move(lease_token),
          .error = std::move(error),
          .failure = std::move(failure)};
}

lease_end lease_end::retry(std::string task_id, std::string lease_token, std::string error,
                           std::chrono::milliseconds delay) {
  return {.how = kind::retry,
          .task_id = std::move(task_id),
          .lease_token = std::move(lease_token),
          .error = std::move(error),
          .delay = delay};
}

lease_end lease_end::wait(std::string task_id, std::string lease_token, std::string provider_job,
                          std::chrono::milliseconds delay, int progress) {
  return {.how = kind::wait,
          .task_id = std::move(task_id),
          .lease_token = std::move(lease_token),
          .delay = delay,
          .provider_job = std::move(provider_job),
          .progress = progress};
}

lease_end lease_end::give_back(std::string task_id, std::string lease_token) {
  return {.how = kind::give_back, .task_id = std::move(task_id), .lease_token = std::move(lease_token)};
}

namespace {

// A PostgreSQL array literal: every element quoted (backslash and quote escaped), NULL bare.
template <class Element>
std::string array_literal(const std::vector<lease_end>& ends, Element element) {
  std::string out = "{";
  for (const lease_end& e : ends) {
    if (out.size() > 1) {
      out += ',';
    }
    const std::optional<std::string> value = element(e);
    if (!value) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (const char ch : *value) {
      if (ch == '"' || ch == '\\') {
        out += '\\';
      }
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace

std::vector<bool> end_leases(connection_pool& pool, const std::vector<lease_end>& ends) {
  if (ends.empty()) {
    return {};
  }
  using text = std::optional<std::string>;
  const std::string ids = array_literal(ends, [](const lease_end& e) { return text(e.task_id); });
  const std::string tokens = array_literal(ends, [](const lease_end& e) { return text(e.lease_token); });
  const std::string kinds =
      array_literal(ends, [](const lease_end& e) { return text(std::to_string(static_cast<int>(e.how))); });
  const std::string images = array_literal(ends, [](const lease_end& e) { return e.outputs.image; });
  const std::string videos = array_literal(ends, [](const lease_end& e) { return e.outputs.video; });
  const std::string audios = array_literal(ends, [](const lease_end& e) { return e.outputs.audio; });
  const std::string errors = array_literal(ends, [](const lease_end& e) { return text(e.error); });
  const std::string delays =
      array_literal(ends, [](const lease_end& e) { return text(std::to_string(e.delay.count())); });
  const std::string jobs = array_literal(ends, [](const lease_end& e) { return text(e.provider_job); });
  const std::string failures = array_literal(ends, [](const lease_end& e) { return text(e.failure); });
  const std::string progress =
      array_literal(ends, [](const lease_end& e) { return text(std::to_string(e.progress)); });
  const std::set<std::string> applied = detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);  // one statement: it commits on its own
    std::set<std::string> out;
    for (const auto& row : tx.exec_prepared(end_leases_statement.name, ids, tokens, kinds, images, videos,
                                            audios, errors, delays, jobs, failures, progress)) {
      out.insert(row[0].c_str());
    }
    return out;
  });
  std::vector<bool> result;
  result.reserve(ends.size());
  for (const lease_end& e : ends) {
    result.push_back(applied.contains(e.task_id));
  }
  return result;
}

bool end_lease(connection_pool& pool, const lease_end& end) {
  return end_leases(pool, {end}).front();
}

std::vector<rescued_task> rescue_overdue(connection_pool& pool, int limit) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    std::vector<rescued_task> out;
    for (const auto& row : tx.exec_prepared(rescue_statement.name, limit)) {
      out.push_back({row[0].c_str(), row[1].c_str(), detail::optional_text(row[2])});
    }
    return out;
  });
}

queue_stats read_queue_stats(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    const auto row = tx.exec_prepared1(queue_stats_statement.name);
    return queue_stats{row[0].as<std::int64_t>(), row[1].as<double>(), row[2].as<std::int64_t>()};
  });
}

std::int64_t count_due(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx.exec_prepared1(count_due_statement.name)[0].as<std::int64_t>();
  });
}

}  // namespace gesso::storage
