#include "server/api/parked_waits.hpp"

#include "server/api/api_response.hpp"
#include "server/runtime/asio_helpers.hpp"
#include "storage/tasks.hpp"

#include <boost/asio/this_coro.hpp>

#include <exception>
#include <memory>

namespace gesso::api {
using boost::asio::awaitable;
namespace {

// Reads the task for a waiter that woke: many wake at once when many tasks end together, so a full
// database queue is waited out (a few milliseconds at a time, jittered) instead of answered with 503.
awaitable<outcome<task_record>> read_after_wake(api_context* ctx, const std::string* key_hash,
                                                const std::string* task_id,
                                                boost::asio::steady_timer* pause) {
  storage::connection_pool* connections = ctx->connections;
  for (int tries = 0;; ++tries) {
    auto read = [connections, key_hash, task_id] {
      return storage::find_task(*connections, *key_hash, *task_id);
    };
    bool overloaded = false;
    try {
      co_return co_await ctx->database_calls->run(std::move(read));
    } catch (const runtime::overloaded&) {
      if (tries >= 500) {
        throw;
      }
      overloaded = true;
    }
    if (overloaded) {  // no co_await inside a catch block
      co_await runtime::sleep_for(pause, std::chrono::milliseconds(5 + (tries * 7919) % 20));
    }
  }
}

// The answer of a parked query once it woke: the task as it is now.
awaitable<response> answer_parked(api_context* ctx, request_context* rc) {
  const parked_wait* p = rc->parked.get();
  const outcome<task_record> task =
      co_await read_after_wake(ctx, &p->key_hash, &p->task_id, &p->waiter->timer);
  co_return task_answer(task, *ctx->links, rc->request_id);
}

}  // namespace

response task_answer(const outcome<task_record>& task, const media_links& links,
                     const std::string& request_id) {
  if (!task) {
    return problem_response(task.error(), request_id);
  }
  return success_response("ok", task_json(*task, links), request_id);
}

awaitable<std::optional<outcome<task_record>>> park_until_final(api_context* ctx, request_context* rc,
                                                                const std::string* key_hash,
                                                                std::string_view task_id,
                                                                std::int64_t seconds) {
  const auto executor = co_await boost::asio::this_coro::executor;
  auto parked = std::make_unique<parked_wait>();
  parked->task_id = task_id;
  parked->key_hash = *key_hash;
  parked->seconds = std::chrono::seconds(seconds);
  parked->waiter = std::make_shared<task_waiters::waiter>(executor);
  storage::connection_pool* connections = ctx->connections;
  auto read = [connections, p = parked.get()] {
    return storage::find_task(*connections, p->key_hash, p->task_id);
  };
  if (!ctx->waiters->add(parked->task_id, parked->waiter)) {
    co_return co_await ctx->database_calls->run(read);
  }
  outcome<task_record> task;
  std::exception_ptr failure;
  try {
    task = co_await ctx->database_calls->run(read);
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure && task && !is_final(task->status)) {
    rc->parked = std::move(parked);
    co_return std::nullopt;
  }
  // Final, not the caller's, or the read failed (overloaded, unavailable): the waiter leaves the
  // registry before the answer.
  ctx->waiters->remove(parked->task_id, parked->waiter);
  if (failure) {
    std::rethrow_exception(failure);
  }
  co_return task;
}

awaitable<void> finish_wait(api_context* ctx, request_context* rc, response* res) {
  parked_wait* p = rc->parked.get();
  if (!p->waiter->woken) {  // the task may have been announced final while it was read
    co_await runtime::sleep_for(&p->waiter->timer, p->seconds);
  }
  ctx->waiters->remove(p->task_id, p->waiter);
  response answer;
  std::exception_ptr failure;
  try {
    answer = co_await answer_parked(ctx, rc);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    answer = exception_response(failure, rc->request_id);
  }
  for (const auto& field : *res) {  // the parked response holds only what the router added
    answer.set(field.name_string(), field.value());
  }
  *res = std::move(answer);
  rc->parked.reset();
}

void give_up_wait(api_context* ctx, request_context* rc) {
  if (rc->parked) {
    ctx->waiters->remove(rc->parked->task_id, rc->parked->waiter);
    rc->parked.reset();
  }
}

}  // namespace gesso::api
