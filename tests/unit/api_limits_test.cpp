// The pure parts of the limits and webhooks: effective limits from account settings and defaults, the
// per-key rate limiter's local decisions, and the webhook retry schedule.

#include "core/limits.hpp"
#include "server/api/rate_limiter.hpp"
#include "server/worker/webhook_sender.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(api_limits)

BOOST_AUTO_TEST_CASE(an_accounts_own_limits_win_and_zero_is_unlimited) {
  const limit_settings defaults{10, 0, 4};
  const auto plain = resolve_limits({}, defaults);
  BOOST_TEST(plain.rate_per_second.value_or(-1) == 10);
  BOOST_TEST(plain.burst.value_or(-1) == 20);  // twice the rate
  BOOST_TEST(plain.max_concurrent_tasks.value_or(-1) == 4);
  const auto own = resolve_limits({3, 5, 0}, defaults);
  BOOST_TEST(own.rate_per_second.value_or(-1) == 3);
  BOOST_TEST(own.burst.value_or(-1) == 5);
  BOOST_TEST(!own.max_concurrent_tasks);  // 0: unlimited, whatever the default
  const auto none = resolve_limits({0, std::nullopt, std::nullopt}, {});
  BOOST_TEST(!none.rate_per_second);
  BOOST_TEST(!none.burst);
  BOOST_TEST(!none.max_concurrent_tasks);
}

BOOST_AUTO_TEST_CASE(the_rate_limiter_spends_its_batch_then_asks_and_remembers_a_refusal) {
  api::rate_limiter limiter;
  const auto t0 = api::rate_limiter::clock::now();
  BOOST_TEST(!limiter.try_local("k", t0));  // nothing known: take from the bucket
  BOOST_TEST(limiter.batch_size("k") == 1);
  auto v = limiter.after_take("k", {.granted = 3, .available = 7.5, .rate = 100, .burst = 20}, t0);
  BOOST_TEST(v.allowed);
  BOOST_TEST(v.limited);
  BOOST_TEST(v.remaining == 2 + 7);
  BOOST_TEST(limiter.batch_size("k") == 5);  // a twentieth of the rate
  BOOST_TEST(limiter.try_local("k", t0)->allowed);
  BOOST_TEST(limiter.try_local("k", t0)->allowed);
  BOOST_TEST(!limiter.try_local("k", t0));  // the batch is spent
  v = limiter.after_take("k", {.granted = 0, .available = 0.5, .rate = 100, .burst = 20}, t0);
  BOOST_TEST(!v.allowed);
  BOOST_TEST(v.retry_after_s == 1);
  const auto refused = limiter.try_local("k", t0 + 2ms);  // still refused, without asking
  BOOST_TEST_REQUIRE(refused.has_value());
  BOOST_TEST(!refused->allowed);
  BOOST_TEST(!limiter.try_local("k", t0 + 10ms));  // the bucket has a token again: ask
  // An unlimited key is admitted for a second without asking, with no headers.
  v = limiter.after_take("free", {.rate = 0}, t0);
  BOOST_TEST(v.allowed);
  BOOST_TEST(!v.limited);
  BOOST_TEST(!limiter.try_local("free", t0 + 500ms)->limited);
  BOOST_TEST(!limiter.try_local("free", t0 + 1100ms));
}

BOOST_AUTO_TEST_CASE(webhooks_back_off_for_a_day) {
  BOOST_TEST(worker::webhook_retry_in(1, 0s, 0.5).value().count() == 5000);
  BOOST_TEST(worker::webhook_retry_in(2, 0s, 0.5).value().count() == 10000);
  BOOST_TEST(worker::webhook_retry_in(1, 0s, 0.0).value().count() == 4000);        // -20 %
  BOOST_TEST(worker::webhook_retry_in(1, 0s, 1.0).value().count() == 6000);        // +20 %
  BOOST_TEST(worker::webhook_retry_in(30, 0s, 0.5).value().count() == 3'600'000);  // at most an hour
  BOOST_TEST(!worker::webhook_retry_in(3, 24h, 0.5));
  BOOST_TEST(worker::webhook_retry_in(3, 23h, 0.5).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
