#include "server/api/account_handlers.hpp"

#include "core/ids.hpp"
#include "core/task_listing.hpp"
#include "server/api/api_response.hpp"
#include "server/api/query_params.hpp"
#include "server/api/request_headers.hpp"
#include "storage/account_view.hpp"
#include "storage/task_listing.hpp"

#include <boost/json.hpp>

#include <chrono>

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
  const auto keyed = read_keyed_request(
      rc->req, {"status", "model_id", "created_after", "created_before", "limit", "cursor"});
  if (!keyed) {
    co_return problem_response(keyed.error(), request_id);
  }
  const auto filter = read_filter(keyed->params);
  if (!filter) {
    co_return problem_response(filter.error(), request_id);
  }
  const std::string& key_hash = keyed->key_hash;
  storage::connection_pool* connections = ctx->connections;
  auto work = [connections, &key_hash, f = &*filter] {
    return storage::list_tasks(*connections, key_hash, *f);
  };
  const outcome<storage::task_page> page = co_await ctx->database_calls->run(std::move(work));
  if (!page) {
    co_return problem_response(page.error(), request_id);
  }
  json::array tasks;
  for (const task_record& t : page->tasks) {
    tasks.push_back(task_json(t, *ctx->links));
  }
  co_return success_response("ok",
                             json::object{{"tasks", std::move(tasks)},
                                          {"has_more", page->next.has_value()},
                                          {"next_cursor", page->next ? json::value(encode_cursor(*page->next))
                                                                     : json::value(nullptr)}},
                             request_id);
}

namespace {

json::value optional_json(std::optional<int> v) {
  return v ? json::value(*v) : json::value(nullptr);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

awaitable<response> show_account(api_context* ctx, request_context* rc) {
  const std::string& request_id = rc->request_id;
  const auto keyed = read_keyed_request(rc->req, {});
  if (!keyed) {
    co_return problem_response(keyed.error(), request_id);
  }
  const std::string& key_hash = keyed->key_hash;
  storage::connection_pool* connections = ctx->connections;
  auto work = [connections, &key_hash] { return storage::view_account(*connections, key_hash); };
  const outcome<storage::account_view> account = co_await ctx->database_calls->run(std::move(work));
  if (!account) {
    co_return problem_response(account.error(), request_id);
  }
  const effective_limits limits = resolve_limits(account->limits, ctx->limit_defaults);
  co_return success_response(
      "ok",
      json::object{{"account_id", account->id},
                   {"name", account->name},
                   {"balance", account->balance},
                   {"limits",
                    {{"requests_per_second", optional_json(limits.rate_per_second)},
                     {"burst", optional_json(limits.burst)},
                     {"max_concurrent_tasks", optional_json(limits.max_concurrent_tasks)}}}},
      request_id);
}

awaitable<response> show_usage(api_context* ctx, request_context* rc) {
  const std::string& request_id = rc->request_id;
  const auto keyed = read_keyed_request(rc->req, {"from", "to", "group_by"});
  if (!keyed) {
    co_return problem_response(keyed.error(), request_id);
  }
  const query_params* params = &keyed->params;
  const std::int64_t now = unix_now();
  const auto from = params->integer("from", 0, latest_time);
  const auto to = params->integer("to", 0, latest_time);
  for (const auto* read : {&from, &to}) {
    if (!*read) {
      co_return problem_response(read->error(), request_id);
    }
  }
  const std::int64_t end = to->value_or(now + 1);  // to is exclusive: the current second is in
  const std::int64_t start = from->value_or(end - 30 * 86400);
  if (start >= end) {
    co_return problem_response({errc::invalid_field, "from must be earlier than to"}, request_id);
  }
  if (end - start > 366 * 86400) {
    co_return problem_response({errc::invalid_field, "from and to may be at most 366 days apart"},
                               request_id);
  }
  const std::string_view group_by = params->get("group_by").value_or("model");
  if (group_by != "model" && group_by != "day") {
    co_return problem_response({errc::invalid_field, "group_by must be \"model\" or \"day\""}, request_id);
  }
  const auto grouping = group_by == "model" ? storage::usage_grouping::model : storage::usage_grouping::day;
  const std::string& key_hash = keyed->key_hash;
  storage::connection_pool* connections = ctx->connections;
  auto work = [connections, &key_hash, start, end, grouping] {
    return storage::account_usage(*connections, key_hash, start, end, grouping);
  };
  const outcome<std::vector<storage::usage_group>> usage = co_await ctx->database_calls->run(std::move(work));
  if (!usage) {
    co_return problem_response(usage.error(), request_id);
  }
  json::array groups;
  storage::usage_group total;
  for (const storage::usage_group& g : *usage) {
    groups.push_back({{group_by == "model" ? "model_id" : "day", g.key},
                      {"tasks", g.tasks},
                      {"charged", g.charged},
                      {"refunds", g.refunds},
                      {"refunded", g.refunded},
                      {"net", g.charged - g.refunded}});
    total.tasks += g.tasks;
    total.charged += g.charged;
    total.refunds += g.refunds;
    total.refunded += g.refunded;
  }
  co_return success_response("ok",
                             json::object{{"from", start},
                                          {"to", end},
                                          {"group_by", group_by},
                                          {"groups", std::move(groups)},
                                          {"totals",
                                           {{"tasks", total.tasks},
                                            {"charged", total.charged},
                                            {"refunds", total.refunds},
                                            {"refunded", total.refunded},
                                            {"net", total.charged - total.refunded}}}},
                             request_id);
}

}  // namespace gesso::api
