#include "server/worker/webhook_sender.hpp"

#include "core/task_json.hpp"
#include "core/webhook_signature.hpp"
#include "server/engines/fetcher.hpp"
#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/log.hpp"
#include "storage/webhooks.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <random>

namespace gesso::worker {
using asio::awaitable;
using namespace std::chrono_literals;

namespace {

constexpr int max_in_flight = 16;
constexpr auto send_timeout = 10s;
// A claimed delivery is due again after this: longer than any attempt (the send's timeout, the reads
// around it), so a live worker never loses one; a dead worker's delivery is retried this long after.
constexpr auto delivery_lease = 15s;

double jitter() {
  static thread_local std::mt19937 random{std::random_device{}()};
  return std::uniform_real_distribution<double>(0, 1)(random);
}

// One attempt, on an engine thread: the task's data as the query shows it now, signed with every secret
// of its account that has not expired.
storage::delivery_end attempt(service::impl* w, const storage::webhook_delivery& d) {
  const auto content = storage::delivery_content(w->connections, d.task_id);
  if (!content || content->secrets.empty()) {
    return {.error = content ? "the account has no webhook secret" : "the task no longer exists"};
  }
  const std::string body = boost::json::serialize(task_json(content->task, w->settings.links));
  const std::string timestamp = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  const auto signature = webhook_signature(content->secrets, d.id, timestamp, body);
  if (!signature) {
    return {.error = "a webhook secret of the account is malformed"};
  }
  const engines::http_call call{.method = "POST",
                                .url = d.url,
                                .headers = {{"Content-Type", "application/json"},
                                            {"User-Agent", "Gesso-Webhooks/1"},
                                            {"webhook-id", d.id},
                                            {"webhook-timestamp", timestamp},
                                            {"webhook-signature", *signature}},
                                .body = body};
  const auto answer = engines::http_request(call, 64 * 1024, send_timeout, w->settings.webhook_policy);
  if (!answer) {
    return {.error = answer.error().reason};
  }
  if (answer->status >= 200 && answer->status < 300) {
    return {.delivered = true, .status_code = static_cast<int>(answer->status)};
  }
  return {.status_code = static_cast<int>(answer->status),
          .error = "the receiver answered HTTP " + std::to_string(answer->status)};
}

awaitable<void> deliver(service::impl* w, std::shared_ptr<storage::webhook_delivery> d, int* in_flight) {
  storage::delivery_end end;
  try {
    auto send = [w, d = d.get()] { return attempt(w, *d); };
    end = co_await w->engine_threads.run(std::move(send));
  } catch (const std::exception& e) {
    end = {.error = std::string("the delivery failed inside the worker: ") + e.what()};
  }
  if (!end.delivered) {
    end.retry_in = webhook_retry_in(d->attempt, d->age, jitter());
  }
  try {
    auto finish = [w, d = d.get(), e = &end] {
      return storage::end_delivery(w->connections, d->id, d->attempt, *e);
    };
    co_await w->database_calls.run(std::move(finish));
    log::write(
        end.delivered ? log::level::info : log::level::warn,
        end.delivered ? "webhook_delivered" : "webhook_not_delivered",
        {{"webhook_id", d->id}, {"task_id", d->task_id}, {"attempt", d->attempt}, {"reason", end.error}});
  } catch (const std::exception& e) {
    // The lease runs out and another attempt follows, with the same webhook-id.
    log::write(log::level::warn, "webhook_end_failed", {{"webhook_id", d->id}, {"reason", e.what()}});
  }
  --*in_flight;
}

}  // namespace

std::optional<std::chrono::milliseconds> webhook_retry_in(int attempt, std::chrono::seconds age,
                                                          double jitter) {
  if (age >= 24h) {
    return std::nullopt;
  }
  const std::int64_t base = std::min<std::int64_t>(3'600'000, 5000LL << std::clamp(attempt - 1, 0, 20));
  const double spread = (std::clamp(jitter, 0.0, 1.0) * 0.4 - 0.2) * static_cast<double>(base);
  return std::chrono::milliseconds(base + static_cast<std::int64_t>(spread));
}

awaitable<void> send_webhooks(service::impl* w) {
  asio::steady_timer pause(w->ioc);
  int in_flight = 0;  // on the I/O thread only
  while (!w->stopping) {
    const int free = max_in_flight - in_flight;
    std::vector<storage::webhook_delivery> due;
    if (free > 0) {
      try {
        auto claim = [w, free] { return storage::claim_deliveries(w->connections, free, delivery_lease); };
        due = co_await w->database_calls.run(std::move(claim));
      } catch (const std::exception& e) {
        log::write(log::level::warn, "webhook_claim_failed", {{"reason", e.what()}});
      }
    }
    for (auto& d : due) {
      ++in_flight;
      asio::co_spawn(w->ioc,
                     deliver(w, std::make_shared<storage::webhook_delivery>(std::move(d)), &in_flight),
                     asio::detached);
    }
    co_await runtime::sleep_for(&pause, due.empty() ? 500ms : 50ms);
  }
  while (in_flight > 0) {  // a drain lets the deliveries under way end (each is bounded by its timeout)
    co_await runtime::sleep_for(&pause, 50ms);
  }
}

}  // namespace gesso::worker
