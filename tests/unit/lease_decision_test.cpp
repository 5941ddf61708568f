// How a held task's lease ends, decided from its engine's outcome (server/worker/lease_decision.hpp),
// and the backoff between attempts.

#include "server/worker/lease_decision.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;
using namespace gesso::worker;
using namespace std::chrono_literals;
using engines::engine_outcome;
using storage::lease_end;

namespace {

storage::claimed_task held(int attempt, int max_attempts = 3) {
  storage::claimed_task t;
  t.id = "task_1";
  t.lease_token = "token";
  t.attempt = attempt;
  t.max_attempts = max_attempts;
  return t;
}

engine_outcome ended(engine_outcome::kind how) {
  engine_outcome o;
  o.result = how;
  o.error = "upstream busy";
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lease_decision)

BOOST_AUTO_TEST_CASE(successes_and_failures_end_the_task) {
  engine_outcome ok = ended(engine_outcome::kind::succeeded);
  ok.image = "2026/11/22/task_1.png";
  const lease_end success = decide_lease_end(held(1), ok, 0.5);
  BOOST_TEST((success.how == lease_end::kind::succeeded));
  BOOST_TEST(success.outputs.image.value_or("") == "2026/11/22/task_1.png");
  BOOST_TEST(success.task_id == "task_1");
  BOOST_TEST(success.lease_token == "token");
  const lease_end failure = decide_lease_end(held(1), ended(engine_outcome::kind::failed), 0.5);
  BOOST_TEST((failure.how == lease_end::kind::failed));
  BOOST_TEST(failure.error == "upstream busy");
  BOOST_TEST(failure.failure == "internal");  // an engine that names no kind
}

BOOST_AUTO_TEST_CASE(a_failure_keeps_its_kind_and_where_it_ran) {
  engine_outcome refused = ended(engine_outcome::kind::failed);
  refused.failure = "content_policy";
  refused.provider_job = R"({"route":1,"engine":"fal","model":"fal-ai/flux/dev","job":"x"})";
  const lease_end failure = decide_lease_end(held(1), refused, 0.5);
  BOOST_TEST(failure.failure == "content_policy");
  BOOST_TEST(failure.provider_job == *refused.provider_job);
  engine_outcome busy = ended(engine_outcome::kind::retry);
  busy.failure = "provider_unavailable";
  BOOST_TEST(decide_lease_end(held(3), busy, 0.5).failure == "provider_unavailable");  // the last attempt
}

BOOST_AUTO_TEST_CASE(a_retry_waits_a_backoff_until_the_attempts_run_out) {
  const lease_end again = decide_lease_end(held(2), ended(engine_outcome::kind::retry), 0.0);
  BOOST_TEST((again.how == lease_end::kind::retry));
  BOOST_TEST(again.error == "upstream busy");
  BOOST_TEST(again.delay == retry_backoff(2, 0.0));
  engine_outcome throttled = ended(engine_outcome::kind::retry);
  throttled.delay = 20s;  // Retry-After: never sooner than the provider asked
  BOOST_TEST(decide_lease_end(held(2), throttled, 1.0).delay == 20s);
  const lease_end last = decide_lease_end(held(3), ended(engine_outcome::kind::retry), 0.0);
  BOOST_TEST((last.how == lease_end::kind::failed));
  BOOST_TEST(last.error == "the task failed after 3 attempts: upstream busy");
}

BOOST_AUTO_TEST_CASE(waiting_on_a_provider_records_its_job) {
  engine_outcome waiting = ended(engine_outcome::kind::waiting);
  waiting.provider_job = "job-9";
  waiting.delay = 2500ms;
  const lease_end poll = decide_lease_end(held(1), waiting, 0.5);
  BOOST_TEST((poll.how == lease_end::kind::wait));
  BOOST_TEST(poll.provider_job == "job-9");
  BOOST_TEST(poll.delay == 2500ms);
}

BOOST_AUTO_TEST_CASE(the_backoff_doubles_from_half_a_second_to_thirty_seconds_with_jitter_on_its_upper_half) {
  BOOST_TEST(retry_backoff(1, 0.0) == 250ms);
  BOOST_TEST(retry_backoff(1, 1.0) == 500ms);
  BOOST_TEST(retry_backoff(2, 0.0) == 500ms);
  BOOST_TEST(retry_backoff(3, 1.0) == 2000ms);
  BOOST_TEST(retry_backoff(7, 1.0) == 30000ms);   // 500 << 6 = 32 s, capped
  BOOST_TEST(retry_backoff(50, 1.0) == 30000ms);  // never more
  BOOST_TEST(retry_backoff(50, 0.0) == 15000ms);
  BOOST_TEST(retry_backoff(0, 0.0) == 250ms);  // a first attempt numbered 0 is treated as 1
  BOOST_TEST(retry_backoff(1, 7.0) == 500ms);  // jitter is clamped to 0..1
  for (int attempt = 1; attempt < 10; ++attempt) {
    BOOST_TEST(retry_backoff(attempt + 1, 0.5) >= retry_backoff(attempt, 0.5));
  }
}

BOOST_AUTO_TEST_SUITE_END()
