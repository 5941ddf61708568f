#include "storage/task_queue.hpp"

#include "storage/pool_internal.hpp"

#include <boost/json.hpp>

#include <set>

namespace gesso::storage {
namespace {

// run_after doubles as the lease expiry while a task is held, so "due" is one indexed predicate
// (tasks_due: run_after WHERE status IN (1, 2)) for new tasks, retries and abandoned leases alike.
constexpr const char* claim_sql = R"sql(
UPDATE tasks t
SET status = 2, lease_owner = $1, lease_token = gen_random_uuid(),
    lease_expires_at = now() + $2::bigint * interval '1 millisecond',
    run_after = now() + $2::bigint * interval '1 millisecond',
    attempts = t.attempts + 1, started_at = coalesce(t.started_at, now())
WHERE t.id IN (
    SELECT id FROM tasks
    WHERE status IN (1, 2) AND run_after <= now() AND attempts < max_attempts AND deadline_at > now()
    ORDER BY run_after
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
RETURNING t.id, t.lease_token::text, t.model_id, t.task_type, t.prompt, t.aspect_ratio, t.image_urls::text,
          t.engine, t.attempts, t.max_attempts, t.provider_job, t.error
)sql";

constexpr const char* extend_sql = R"sql(
UPDATE tasks SET lease_expires_at = now() + $3::bigint * interval '1 millisecond',
                 run_after = now() + $3::bigint * interval '1 millisecond'
WHERE id = $1 AND lease_token = $2::uuid AND status = 2
RETURNING id
)sql";

constexpr const char* succeed_sql = R"sql(
UPDATE tasks SET status = 3, image_object = $3, video_object = $4, audio_object = $5, error = NULL,
                 image_urls = without_inline_inputs(image_urls), finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_token = $2::uuid AND status = 2
RETURNING id
)sql";

// succeed_sql for a batch: the records arrive as five parallel arrays.
constexpr const char* succeed_many_sql = R"sql(
UPDATE tasks t SET status = 3, image_object = r.image, video_object = r.video, audio_object = r.audio,
                   error = NULL, image_urls = without_inline_inputs(t.image_urls), finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[]) AS r (id, token, image, video, audio)
WHERE t.id = r.id AND t.lease_token = r.token AND t.status = 2
RETURNING t.id
)sql";

// The refund row is the once-only guard: UNIQUE (task_id, kind) makes a second insert a no-op, and
// the balance moves only by the rows actually inserted.
constexpr const char* refund_cte = R"sql(
refund AS (
    INSERT INTO ledger (account_id, task_id, kind, amount)
    SELECT account_id, id, 'refund', credits FROM failed
    ON CONFLICT (task_id, kind) DO NOTHING
    RETURNING account_id, amount
), credit AS (
    -- Summed per account first: an UPDATE joined to several rows for one target row applies only one.
    UPDATE accounts a SET balance = a.balance + r.total
    FROM (SELECT account_id, sum(amount) AS total FROM refund GROUP BY account_id) r
    WHERE a.id = r.account_id
)
SELECT count(*) FROM failed
)sql";

constexpr const char* fail_head = R"sql(
WITH failed AS (
    UPDATE tasks SET status = 4, error = $3, finished_at = now(), image_urls = without_inline_inputs(image_urls),
                     lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND lease_token = $2::uuid AND status = 2
    RETURNING id, account_id, credits
),)sql";

constexpr const char* rescue_head = R"sql(
WITH overdue AS (
    SELECT id FROM tasks
    WHERE status IN (1, 2) AND run_after <= now() AND (deadline_at <= now() OR attempts >= max_attempts)
    ORDER BY run_after
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), failed AS (
    UPDATE tasks t
    SET status = 4, finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
        image_urls = without_inline_inputs(t.image_urls),
        error = CASE WHEN t.deadline_at <= now()
                     THEN 'the task did not finish before its deadline'
                     ELSE 'the task failed after ' || t.attempts || ' attempts'
                END || coalesce(': ' || t.error, '')
    FROM overdue WHERE t.id = overdue.id
    RETURNING t.id, t.account_id, t.credits
),)sql";

constexpr const char* retry_sql = R"sql(
UPDATE tasks SET run_after = now() + $4::bigint * interval '1 millisecond', error = $3,
                 lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_token = $2::uuid AND status = 2
RETURNING id
)sql";

constexpr const char* wait_sql = R"sql(
UPDATE tasks SET provider_job = $3, run_after = now() + $4::bigint * interval '1 millisecond',
                 attempts = attempts - 1, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_token = $2::uuid AND status = 2
RETURNING id
)sql";

constexpr const char* release_sql = R"sql(
UPDATE tasks SET run_after = now(), attempts = attempts - 1,
                 lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
WHERE id = $1 AND lease_token = $2::uuid AND status = 2
RETURNING id
)sql";

constexpr const char* count_due_sql = R"sql(
SELECT count(*) FROM tasks
WHERE status IN (1, 2) AND run_after <= now() AND attempts < max_attempts AND deadline_at > now()
)sql";

constexpr const char* queue_stats_sql = R"sql(
SELECT count(*) FILTER (WHERE due),
       coalesce(extract(epoch FROM now() - min(run_after) FILTER (WHERE due)), 0)::float8,
       count(*) FILTER (WHERE status = 2 AND provider_job IS NOT NULL)
FROM (SELECT status, run_after, provider_job,
             run_after <= now() AND attempts < max_attempts AND deadline_at > now() AS due
      FROM tasks WHERE status IN (1, 2)) AS open
)sql";

// Runs a lease-guarded statement and reports whether it matched the held task.
template <class... Args>
bool guarded(connection_pool& pool, const char* statement, const Args&... args) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return !tx.exec_prepared(statement, args...).empty();
  });
}

}  // namespace

namespace detail {
void prepare_queue_statements(pqxx::connection& c) {
  c.prepare("claim_due", claim_sql);
  c.prepare("extend_lease", extend_sql);
  c.prepare("finalize_success", succeed_sql);
  c.prepare("finalize_successes", succeed_many_sql);
  c.prepare("finalize_failure", std::string(fail_head) + refund_cte);
  c.prepare("retry_later", retry_sql);
  c.prepare("wait_for_provider", wait_sql);
  c.prepare("rescue_overdue", std::string(rescue_head) + refund_cte);
  c.prepare("count_due", count_due_sql);
  c.prepare("queue_stats", queue_stats_sql);
  c.prepare("release_unstarted", release_sql);
}
}  // namespace detail

std::vector<claimed_task> claim_due(connection_pool& pool, std::string_view owner, int limit,
                                    std::chrono::milliseconds lease) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);  // one statement: the claim commits on its own, holding nothing
    std::vector<claimed_task> out;
    for (const auto& row : tx.exec_prepared("claim_due", std::string(owner), lease.count(), limit)) {
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
      out.push_back(std::move(t));
    }
    return out;
  });
}

bool extend_lease(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                  std::chrono::milliseconds lease) {
  return guarded(pool, "extend_lease", std::string(task_id), std::string(lease_token), lease.count());
}

bool finalize_success(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                      const task_outputs& outputs) {
  // libpqxx 6.4 sends a null for a null const char*.
  auto nullable = [](const std::optional<std::string>& s) { return s ? s->c_str() : nullptr; };
  return guarded(pool, "finalize_success", std::string(task_id), std::string(lease_token),
                 nullable(outputs.image), nullable(outputs.video), nullable(outputs.audio));
}

namespace {

// A PostgreSQL array literal of text: every element quoted (backslash and quote escaped), NULL bare.
template <class Element>
std::string array_literal(const std::vector<success_record>& records, Element element) {
  std::string out = "{";
  for (const success_record& r : records) {
    if (out.size() > 1) {
      out += ',';
    }
    const std::optional<std::string> value = element(r);
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

std::vector<bool> finalize_successes(connection_pool& pool, const std::vector<success_record>& records) {
  if (records.empty()) {
    return {};
  }
  const std::string ids =
      array_literal(records, [](const success_record& r) { return std::optional(r.task_id); });
  const std::string tokens =
      array_literal(records, [](const success_record& r) { return std::optional(r.lease_token); });
  const std::string images = array_literal(records, [](const success_record& r) { return r.outputs.image; });
  const std::string videos = array_literal(records, [](const success_record& r) { return r.outputs.video; });
  const std::string audios = array_literal(records, [](const success_record& r) { return r.outputs.audio; });
  const std::set<std::string> applied = detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);  // one statement: it commits on its own
    std::set<std::string> out;
    for (const auto& row : tx.exec_prepared("finalize_successes", ids, tokens, images, videos, audios)) {
      out.insert(row[0].c_str());
    }
    return out;
  });
  std::vector<bool> result;
  result.reserve(records.size());
  for (const success_record& r : records) {
    result.push_back(applied.contains(r.task_id));
  }
  return result;
}

bool finalize_failure(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                      std::string_view error) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx.exec_prepared1("finalize_failure", std::string(task_id), std::string(lease_token),
                             std::string(error))[0]
               .as<int>() == 1;
  });
}

bool retry_later(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                 std::string_view error, std::chrono::milliseconds delay) {
  return guarded(pool, "retry_later", std::string(task_id), std::string(lease_token), std::string(error),
                 delay.count());
}

bool wait_for_provider(connection_pool& pool, std::string_view task_id, std::string_view lease_token,
                       std::string_view provider_job, std::chrono::milliseconds delay) {
  return guarded(pool, "wait_for_provider", std::string(task_id), std::string(lease_token),
                 std::string(provider_job), delay.count());
}

bool release_unstarted(connection_pool& pool, std::string_view task_id, std::string_view lease_token) {
  return guarded(pool, "release_unstarted", std::string(task_id), std::string(lease_token));
}

int rescue_overdue(connection_pool& pool, int limit) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx.exec_prepared1("rescue_overdue", limit)[0].as<int>();
  });
}

queue_stats read_queue_stats(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    const auto row = tx.exec_prepared1("queue_stats");
    return queue_stats{row[0].as<std::int64_t>(), row[1].as<double>(), row[2].as<std::int64_t>()};
  });
}

std::int64_t count_due(connection_pool& pool) {
  return detail::with_connection(pool, [&](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx.exec_prepared1("count_due")[0].as<std::int64_t>();
  });
}

}  // namespace gesso::storage
