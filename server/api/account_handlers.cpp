#include "server/api/account_handlers.hpp"

#include "core/ids.hpp"
#include "core/task_listing.hpp"
#include "server/api/api_response.hpp"
#include "server/api/query_params.hpp"
#include "server/api/request_headers.hpp"
#include "server/api/task_json.hpp"
#include "storage/task_listing.hpp"

#include <boost/json.hpp>

namespace gesso::api {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// Unix seconds a client may name: from the epoch to the year 9999.
constexpr std::int64_t latest_time = 253'402'300'799;

outcome<task_filter> read_filter(const query_params& params) {
  task_filter f;
  const auto status = params.integer("status", 1, 4);
  const auto after = params.integer("created_after", 0, latest_time);
  const auto before = params.integer("created_before", 0, latest_time);
  const auto limit = params.integer("limit", 1, 100);
  for (const auto* read : {&status, &after, &before, &limit}) {
    if (!*read) {
      return read->error();
    }
  }
  if (status->has_value()) {
    f.status = static_cast<task_status>(**status);
  }
  f.created_after = *after;
  f.created_before = *before;
  f.limit = static_cast<int>(limit->value_or(20));
  if (f.created_after && f.created_before && *f.created_after >= *f.created_before) {
    return fail(errc::invalid_field, "created_after must be earlier than created_before");
  }
  if (const auto model = params.get("model_id")) {
    if (model->empty() || model->size() > 200) {
      return fail(errc::invalid_field, "model_id must be 1 to 200 characters long");
    }
    f.model_id = std::string(*model);
  }
  if (const auto cursor = params.get("cursor")) {
    f.after = decode_cursor(*cursor);
    if (!f.after) {
      return fail(errc::invalid_field, "cursor is not one this API issued; pass next_cursor from a listing");
    }
  }
  return f;
}

}  // namespace

awaitable<response> list_tasks(api_context* ctx, request_context* rc) {
  const std::string& request_id = rc->request_id;
  auto key = bearer_key(rc->req);
  if (!key) {
    co_return problem_response(key.error(), request_id);
  }
  const auto params = query_params::parse(
      rc->req.target(), {"status", "model_id", "created_after", "created_before", "limit", "cursor"});
  if (!params) {
    co_return problem_response(params.error(), request_id);
  }
  const auto filter = read_filter(*params);
  if (!filter) {
    co_return problem_response(filter.error(), request_id);
  }
  const std::string key_hash = hash_api_key(*key);
  storage::connection_pool* connections = ctx->connections;
  auto work = [connections, &key_hash, f = &*filter] { return storage::list_tasks(*connections, key_hash, *f); };
  const outcome<storage::task_page> page = co_await ctx->database_calls->run(std::move(work));
  if (!page) {
    co_return problem_response(page.error(), request_id);
  }
  json::array tasks;
  for (const task_record& t : page->tasks) {
    tasks.push_back(task_json(t, *ctx->links));
  }
  co_return success_response(
      "ok",
      json::object{{"tasks", std::move(tasks)},
                   {"has_more", page->next.has_value()},
                   {"next_cursor", page->next ? json::value(encode_cursor(*page->next)) : json::value(nullptr)}},
      request_id);
}

}  // namespace gesso::api
