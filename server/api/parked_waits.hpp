#pragma once
// Queries that wait for their task (GET /api/v1/tasks/{id}?wait=N, docs/api.md#waiting). The query
// handler parks the request (park_until_final) and returns; the connection's own coroutine then waits
// in finish_wait, so a waiting request holds its connection, a timer and one small frame — not the
// handler's frames (docs/benchmarks.md#waiting-testsbenchwait_benchsh).

#include "server/api/api_handlers.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gesso::api {

/// Registers the wait and reads the task once (registered first, so a task that becomes final in
/// between is not waited for): the task when it is final already or not the caller's; otherwise
/// nullopt, with rc->parked set for finish_wait.
boost::asio::awaitable<std::optional<outcome<task_record>>> park_until_final(api_context* ctx,
                                                                             request_context* rc,
                                                                             const std::string* key_hash,
                                                                             std::string_view task_id,
                                                                             std::int64_t seconds);

/// Waits out rc->parked (until its task is final or its time is up) and replaces `res` with the
/// query's answer, keeping every header the router put on it. Never throws.
boost::asio::awaitable<void> finish_wait(api_context* ctx, request_context* rc, response* res);

/// Drops rc->parked, if any, from the waiters (a parked request answered some other way).
void give_up_wait(api_context* ctx, request_context* rc);

/// The query's answer for a task it read: the task, or the refusal the read gave.
response task_answer(const outcome<task_record>& task, const media_links& links,
                     const std::string& request_id);

}  // namespace gesso::api
