// Providers that throttle, drop connections, take a minute to answer, never finish, or whose keys are
// missing: 429s and drops are waited out, a minute-long synchronous call completes, a task past its
// deadline is cancelled at its provider, and a missing key variable stops the worker with one line.
#include "tests/e2e/provider_suites.hpp"

using namespace gesso::testing;
using namespace gesso::testing::provider_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_FIXTURE_TEST_SUITE(provider_faults, providers_fixture)

BOOST_AUTO_TEST_CASE(rate_limits_and_dropped_connections_are_waited_out) {
  const auto started = std::chrono::steady_clock::now();
  const std::string limited = create("fal-image", "[fake:429x2] patience");
  const std::string dropped = create("sdcpp-image", "[fake:drop] again");
  const std::string erring = create("replicate-image", "[fake:500] flaky");
  for (const std::string& id : {limited, dropped, erring}) {
    BOOST_TEST(finish(id).statuses.back() == 3, json::serialize(details(id)));
  }
  // Two 429s with Retry-After: 1 cost at least two seconds.
  BOOST_TEST((std::chrono::steady_clock::now() - started >= 2s));
  BOOST_TEST(details(limited).at("attempts").as_int64() == 3, json::serialize(details(limited)));
}

// OpenAI Images is synchronous: the HTTP call is the whole job, and one can take a minute.

// OpenAI Images is synchronous: the HTTP call is the whole job, and one can take a minute.
BOOST_AUTO_TEST_CASE(a_synchronous_call_of_a_minute_completes) {
  const auto started = std::chrono::steady_clock::now();
  const std::string id = create("openai-image", "[fake:slow=60] patience");
  BOOST_TEST(poll_until_final(server->client(), account.key, id, 150s).statuses.back() == 3,
             json::serialize(details(id)));
  BOOST_TEST((std::chrono::steady_clock::now() - started >= 60s));
  BOOST_TEST(details(id).at("attempts").as_int64() == 1);  // not cut off and retried
}

BOOST_AUTO_TEST_CASE(a_task_past_its_deadline_is_cancelled_at_its_provider) {
  const std::string id = create("slow-fal", "[fake:steps=100000] forever");
  BOOST_TEST(finish(id).statuses.back() == 4);
  BOOST_TEST(details(id).at("error_kind").as_string() == "deadline");
  int canceled = 0;
  for (int i = 0; i < 100 && canceled == 0; ++i) {  // the cancel is sent right after the rescue
    const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
    canceled = static_cast<int>(stats.at("fal").at("canceled").as_int64());
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(canceled == 1);
}

// A client's cancel of a task waiting at its provider: the next claim cancels it there and fails it as
// canceled, refunded once.
BOOST_AUTO_TEST_CASE(a_task_canceled_while_at_its_provider_is_canceled_there_and_refunded) {
  const std::string id = create("fal-image", "[fake:steps=100000] forever");
  for (int i = 0; i < 200 && !details(id).at("provider_job").is_string(); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST_REQUIRE(details(id).at("provider_job").is_string());  // submitted: waiting at fal
  const auto canceled = server->client().cancel(account.key, id);
  BOOST_TEST(canceled.status == 200, canceled.body);
  BOOST_TEST(canceled.json().at("msg").as_string() ==
             "cancel requested; the task is refunded if it ends failed");
  BOOST_TEST(canceled.json().at("data").at("task_status").as_int64() == 2);
  BOOST_TEST(canceled.json().at("data").at("cancel_requested").as_bool());
  const poll_result done = finish(id);
  BOOST_TEST(done.statuses.back() == 4);
  BOOST_TEST(done.data.at("error").at("kind").as_string() == "canceled");
  const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
  BOOST_TEST(stats.at("fal").at("canceled").as_int64() == 1);
  const json::object shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 10'000);  // refunded
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(server->client().cancel(account.key, id).status == 409);
}

// Kling made the task but its answer never arrived: the retry finds it by external_task_id instead of
// making (and paying for) a second one.
BOOST_AUTO_TEST_CASE(a_kling_submission_whose_answer_was_lost_is_found_not_sent_again) {
  const std::string id = create("kling-video", "[fake:lost] a lighthouse at dusk");
  BOOST_TEST(finish(id).statuses.back() == 3, json::serialize(details(id)));
  BOOST_TEST(details(id).at("attempts").as_int64() == 2);  // the lost answer cost one attempt
  const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
  BOOST_TEST(stats.at("kling").at("max_in_flight").as_int64() == 1);  // one task made at Kling, not two
  BOOST_TEST(stats.at("kling").at("in_flight").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(a_missing_key_variable_stops_the_worker_with_one_line) {
  env_map without = env;
  without["FAKE_REPLICATE_KEY"] = "";
  const auto started = run_command(GESSO_WORKER_BIN, {}, [&] {
    env_map all = shared_env();
    for (const auto& [k, v] : without) {
      all[k] = v;
    }
    return all;
  }());
  BOOST_TEST(started.exit_code == 2);
  BOOST_TEST(
      started.err.find(": routes[0] (replicate): settings.api_key_env: FAKE_REPLICATE_KEY is not set") !=
          std::string::npos,
      started.err);
  BOOST_TEST(std::count(started.err.begin(), started.err.end(), '\n') == 1);  // one line
}

BOOST_AUTO_TEST_SUITE_END()
