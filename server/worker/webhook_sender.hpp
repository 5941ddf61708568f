#pragma once
// Sends the webhook outbox (docs/api.md#webhooks): claims due deliveries, POSTs each task's data signed
// the Standard Webhooks way through the SSRF-safe client (no redirects), and retries with backoff and
// jitter for 24 hours until a 2xx.

#include "server/worker/worker_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>

namespace gesso::worker {

/// The delivery loop of one worker; ends when the worker stops.
boost::asio::awaitable<void> send_webhooks(service::impl* w);

/// When to try again after `attempt` failed attempts of a delivery `age` old, with `jitter` in [0, 1]:
/// 5 s doubling to an hour, ±20 %; nullopt once 24 hours have passed.
std::optional<std::chrono::milliseconds> webhook_retry_in(int attempt, std::chrono::seconds age,
                                                          double jitter);

}  // namespace gesso::worker
