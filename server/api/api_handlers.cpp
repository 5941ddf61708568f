#include "server/api/api_handlers.hpp"

#include "core/client_error.hpp"
#include "core/create_request.hpp"
#include "core/ids.hpp"
#include "core/media_url.hpp"
#include "server/api/account_handlers.hpp"
#include "server/api/api_response.hpp"
#include "server/api/media_handler.hpp"
#include "server/api/openapi_document.hpp"
#include "server/api/parked_waits.hpp"
#include "server/api/query_params.hpp"
#include "server/api/request_headers.hpp"
#include "server/api/routes.hpp"
#include "storage/rate_limits.hpp"
#include "storage/task_cancel.hpp"
#include "storage/tasks.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>

#include <array>

namespace gesso::api {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

awaitable<response> create_task(api_context* ctx, request_context* rc) {
  const request& req = rc->req;
  const std::string& request_id = rc->request_id;
  auto key = bearer_key(req);
  if (!key) {
    co_return problem_response(key.error(), request_id);
  }
  if (!is_json_content(req)) {
    co_return problem_response({errc::unsupported_media_type, "Content-Type must be application/json"},
                               request_id);
  }
  auto idempotency_header = idempotency_key(req);
  if (!idempotency_header) {
    co_return problem_response(idempotency_header.error(), request_id);
  }
  auto parsed = parse_create_request(req.body(), *ctx->models, *ctx->fetching);
  if (!parsed) {
    co_return problem_response(parsed.error(), request_id);
  }
  const std::string key_hash = hash_api_key(*key);
  const std::string task_id = new_task_id();
  storage::connection_pool* connections = ctx->connections;
  const create_request& create = *parsed;
  std::optional<storage::idempotency> idem;
  if (*idempotency_header) {
    idem = storage::idempotency{**idempotency_header, request_fingerprint(create)};
  }
  auto work = [connections, &key_hash, &create, &task_id, &request_id, &idem] {
    return storage::create_task(*connections, key_hash, create, task_id, request_id, idem);
  };
  const outcome<storage::created_task> created = co_await ctx->database_calls->run(std::move(work));
  if (!created) {
    co_return problem_response(created.error(), request_id);
  }
  if (!created->replayed) {
    ctx->wake_workers->poke();
    if (ctx->metrics != nullptr) {
      ctx->metrics->tasks_created.add({create.model->id});
      ctx->metrics->credits_charged.add({create.model->id}, static_cast<std::uint64_t>(created->credits));
    }
  }
  response res = success_response(
      create_success_message,
      json::object{
          {"task_id", created->id}, {"request_id", created->request_id}, {"credits", created->credits}},
      request_id);
  if (created->replayed) {
    res.set("Idempotent-Replayed", "true");
  }
  co_return res;
}

awaitable<response> query_task(api_context* ctx, request_context* rc, std::string_view task_id) {
  const request& req = rc->req;
  const std::string& request_id = rc->request_id;
  // Other parameters are ignored, as they always were on this endpoint of the specification.
  const auto keyed = read_keyed_request(req, {"wait"}, query_params::unknown::ignored);
  if (!keyed) {
    co_return problem_response(keyed.error(), request_id);
  }
  const auto wait = keyed->params.integer("wait", 0, 60);
  if (!wait) {
    co_return problem_response(wait.error(), request_id);
  }
  const std::string& key_hash = keyed->key_hash;
  storage::connection_pool* connections = ctx->connections;
  if (!is_task_id(task_id)) {
    // Not an id we could have issued: authenticate, then answer exactly as for an unknown id.
    auto work = [connections, &key_hash] { return storage::authenticate(*connections, key_hash); };
    const outcome<std::int64_t> account = co_await ctx->database_calls->run(std::move(work));
    co_return account ? problem_response({errc::not_found, "task not found"}, request_id)
                      : problem_response(account.error(), request_id);
  }
  outcome<task_record> task;
  if (wait->value_or(0) > 0 && ctx->waiters != nullptr) {
    std::optional<outcome<task_record>> now = co_await park_until_final(ctx, rc, &key_hash, task_id, **wait);
    if (!now) {
      co_return response{};  // parked: finish_wait answers, with the headers the router adds to this one
    }
    task = std::move(*now);
  } else {
    auto work = [connections, &key_hash, task_id] {
      return storage::find_task(*connections, key_hash, task_id);
    };
    task = co_await ctx->database_calls->run(std::move(work));
  }
  co_return task_answer(task, *ctx->links, request_id);
}

// POST /api/v1/tasks/{id}/cancel (docs/api.md#cancel): the task as a query shows it after the cancel;
// the message says whether it was canceled (and refunded) or a worker has been asked to stop it.
awaitable<response> cancel_task(api_context* ctx, request_context* rc, std::string_view task_id) {
  const std::string& request_id = rc->request_id;
  const auto keyed = read_keyed_request(rc->req, {});
  if (!keyed) {
    co_return problem_response(keyed.error(), request_id);
  }
  const std::string& key_hash = keyed->key_hash;
  storage::connection_pool* connections = ctx->connections;
  const std::string id(is_task_id(task_id) ? task_id : "");  // any other shape: not found, after auth
  auto work = [connections, &key_hash, &id]() -> outcome<std::pair<storage::cancel_effect, task_record>> {
    auto effect = storage::cancel_task(*connections, key_hash, id);
    if (!effect) {
      return effect.error();
    }
    auto task = storage::find_task(*connections, key_hash, id);
    if (!task) {
      return task.error();
    }
    return std::pair{*effect, std::move(*task)};
  };
  const auto canceled = co_await ctx->database_calls->run(std::move(work));
  if (!canceled) {
    co_return problem_response(canceled.error(), request_id);
  }
  if (ctx->wake_workers != nullptr && canceled->first == storage::cancel_effect::requested) {
    ctx->wake_workers->poke();
  }
  co_return success_response(canceled->first == storage::cancel_effect::canceled
                                 ? "canceled; the task's credits were refunded"
                                 : "cancel requested; the task is refunded if it ends failed",
                             task_json(canceled->second, *ctx->links), request_id);
}

// Ready: not draining, and the database answers. A load balancer or Kubernetes stops sending traffic
// when it fails; /healthz (liveness) never looks at the database, so an outage restarts nothing.
awaitable<response> readiness(api_context* ctx, const std::string& request_id) {
  if (ctx->drain_started != nullptr && ctx->drain_started->load()) {
    co_return json_response(http::status::service_unavailable, json::object{{"status", "draining"}},
                            request_id);
  }
  storage::connection_pool* connections = ctx->connections;
  auto work = [connections] {
    try {
      connections->ping();
      return true;
    } catch (const storage::unavailable&) {
      return false;
    }
  };
  bool reachable = false;
  try {
    reachable = co_await ctx->database_calls->run(std::move(work));
  } catch (const runtime::overloaded&) {
    co_return json_response(http::status::service_unavailable, json::object{{"status", "overloaded"}},
                            request_id);
  }
  if (!reachable) {
    co_return json_response(http::status::service_unavailable,
                            json::object{{"status", "database unavailable"}}, request_id);
  }
  co_return json_response(http::status::ok, json::object{{"status", "ready"}}, request_id);
}

// docs/openapi.yaml as JSON: no key, and cacheable, since it changes only with the server's version.
response openapi_response(const std::string& request_id) {
  response res(http::status::ok, 11);
  res.set(http::field::content_type, "application/json; charset=utf-8");
  res.set(http::field::cache_control, "public, max-age=300");
  res.set("X-Request-Id", request_id);
  res.body() = std::string(openapi_document());
  res.prepare_payload();
  return res;
}

// The endpoints that take an API key, and so count against its rate limit.
bool is_keyed(endpoint e) {
  return e == endpoint::create || e == endpoint::query || e == endpoint::cancel || e == endpoint::list ||
         e == endpoint::account || e == endpoint::usage;
}

void set_rate_headers(response& res, const rate_limiter::verdict& v) {
  res.set("RateLimit-Policy", "\"per-key\";q=" + std::to_string(v.rate) + ";w=1");
  res.set("RateLimit", "\"per-key\";r=" + std::to_string(v.remaining) + ";t=" + std::to_string(v.reset_s));
}

// The key's rate limit (docs/api.md#limits): nullopt when the request may go on (`verdict` then says
// which headers its response carries), else the 429. A malformed key is left to the handler's 401.
awaitable<std::optional<response>> rate_limit(api_context* ctx, request_context* rc,
                                              rate_limiter::verdict* verdict) {
  auto key = bearer_key(rc->req);
  if (ctx->limiter == nullptr || !key) {
    co_return std::nullopt;
  }
  const std::string key_hash = hash_api_key(*key);
  const auto now = rate_limiter::clock::now();
  if (auto local = ctx->limiter->try_local(key_hash, now)) {
    *verdict = *local;
  } else {
    storage::connection_pool* connections = ctx->connections;
    const limit_settings& defaults = ctx->limit_defaults;
    const int want = ctx->limiter->batch_size(key_hash);
    auto take = [connections, &key_hash, &defaults, want] {
      return storage::take_rate_tokens(*connections, key_hash, defaults.rate_per_second.value_or(0),
                                       defaults.burst.value_or(0), want);
    };
    const storage::rate_tokens taken = co_await ctx->database_calls->run(std::move(take));
    *verdict = ctx->limiter->after_take(key_hash, taken, rate_limiter::clock::now());
  }
  if (verdict->allowed) {
    co_return std::nullopt;
  }
  response res = problem_response(
      {errc::rate_limited, "rate limit exceeded: this API key may send " + std::to_string(verdict->rate) +
                               " requests per second with a burst of " + std::to_string(verdict->burst) +
                               "; retry after " + std::to_string(verdict->retry_after_s) + " s"},
      rc->request_id);
  res.set(http::field::retry_after, std::to_string(verdict->retry_after_s));
  set_rate_headers(res, *verdict);
  co_return res;
}

awaitable<response> dispatch(api_context* ctx, request_context* rc, const matched_route& m) {
  const request& req = rc->req;
  const std::string& request_id = rc->request_id;
  switch (m.entry->id) {
    case endpoint::create:
      co_return co_await create_task(ctx, rc);
    case endpoint::query:
      co_return co_await query_task(ctx, rc, m.param);
    case endpoint::cancel:
      co_return co_await cancel_task(ctx, rc, m.param);
    case endpoint::list:
      co_return co_await list_tasks(ctx, rc);
    case endpoint::account:
      co_return co_await show_account(ctx, rc);
    case endpoint::usage:
      co_return co_await show_usage(ctx, rc);
    case endpoint::media: {
      const std::string_view target = req.target();
      const std::string_view query = target.size() > m.path.size() ? target.substr(m.path.size() + 1) : "";
      co_return co_await serve_media(ctx, rc, m.param, query);
    }
    case endpoint::readyz:
      co_return co_await readiness(ctx, request_id);
    case endpoint::healthz:
      co_return json_response(http::status::ok, json::object{{"status", "ok"}}, request_id);
    case endpoint::openapi:
      co_return openapi_response(request_id);
  }
  co_return problem_response({errc::not_found, "no such endpoint"}, request_id);  // not reached
}

awaitable<response> route(api_context* ctx, request_context* rc) {
  const matched_route m = match_route(rc->req.target());
  if (auto refused = route_refusal(m, rc->req.method(), rc)) {
    co_return std::move(*refused);
  }
  if (!is_keyed(m.entry->id)) {
    co_return co_await dispatch(ctx, rc, m);
  }
  rate_limiter::verdict verdict;
  if (auto refused = co_await rate_limit(ctx, rc, &verdict)) {
    co_return std::move(*refused);
  }
  response res = co_await dispatch(ctx, rc, m);
  if (verdict.limited) {
    set_rate_headers(res, verdict);
  }
  co_return res;
}

}  // namespace

api_metrics::api_metrics()
    : requests(registry.counter("gesso_http_requests_total", "HTTP requests answered, by route and status.",
                                {"route", "status"})),
      durations(
          registry.histogram("gesso_http_request_duration_seconds",
                             "Time from a request's first byte to its response being written, by route.",
                             {"route"}, runtime::metrics::latency_bounds())),
      tasks_created(
          registry.counter("gesso_tasks_created_total", "Tasks accepted by create, by model.", {"model"})),
      credits_charged(registry.counter("gesso_credits_charged_total", "Credits charged at create, by model.",
                                       {"model"})) {}

std::optional<response> refuse_before_body(const request& header, request_context* rc) {
  const matched_route m = match_route(header.target());
  if (auto refused = route_refusal(m, header.method(), rc)) {
    return refused;
  }
  if (m.entry->id == endpoint::create) {
    if (auto key = bearer_key(header); !key) {
      return problem_response(key.error(), rc->request_id);
    }
    if (!is_json_content(header)) {
      return problem_response({errc::unsupported_media_type, "Content-Type must be application/json"},
                              rc->request_id);
    }
    if (auto idem = idempotency_key(header); !idem) {
      return problem_response(idem.error(), rc->request_id);
    }
  }
  return std::nullopt;
}

awaitable<response> handle_request(api_context* ctx, request_context* rc) {
  std::exception_ptr failure;
  try {
    co_return co_await route(ctx, rc);
  } catch (...) {
    failure = std::current_exception();
  }
  give_up_wait(ctx, rc);  // a failure after parking is answered now
  co_return exception_response(failure, rc->request_id);
}

}  // namespace gesso::api
