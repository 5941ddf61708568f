#pragma once
// storage-internal: a task as the API shows it, read the same way by every statement that returns one
// (the query, the listing, the cancel, a webhook), and the key lookup of every statement that answers a key.

#include "core/error.hpp"
#include "core/task.hpp"

#include <pqxx/pqxx>

#include <cstdint>
#include <string_view>

namespace gesso::storage::detail {

/// The columns read_task reads, after the account id in column 0; the table is aliased `t`.
inline constexpr const char* task_columns = R"sql(t.id, t.model_id, t.task_type, t.status, t.credits,
       floor(extract(epoch FROM t.created_at))::bigint, t.image_object, t.video_object, t.audio_object, t.error,
       t.error_kind, t.progress, floor(extract(epoch FROM t.finished_at))::bigint,
       t.cancel_requested_at IS NOT NULL, t.callback_url IS NOT NULL,
       (SELECT d.status || ':' || d.attempts || ':' || coalesce(d.last_status_code::text, '')
        FROM webhook_deliveries d WHERE d.task_id = t.id))sql";

/// The one reader of rows that select the account id and then task_columns (17 columns).
task_record read_task(const pqxx::row& row);

/// How every statement refuses a missing, unknown or revoked key.
extern const problem bad_key;

/// The account of an active key, or errc::unauthorized ("invalid or revoked API key").
outcome<std::int64_t> account_of_key(pqxx::transaction_base& tx, std::string_view key_hash);

}  // namespace gesso::storage::detail
