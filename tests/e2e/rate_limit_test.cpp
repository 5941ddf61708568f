// The per-key rate limit (docs/api.md#limits): one bucket per key shared by every server, 429 with
// Retry-After and the IETF RateLimit headers past it, per-account settings over the configuration's
// defaults, and no headers at all for a key without a limit.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(rate_limit)

BOOST_AUTO_TEST_CASE(a_key_past_its_rate_gets_429_on_every_server) {
  const env_map limited{{"GESSO_RATE_LIMIT_RPS", "5"}, {"GESSO_RATE_LIMIT_BURST", "10"}};
  server_process first(limited);
  server_process second(limited);
  const auto account = make_account("rate-limited", 1000);
  const auto other = make_account("rate-other", 1000);
  const std::string task = std::string(first.client()
                                           .create(account.key, R"({"model_id":"vendor4-2","prompt":"p"})")
                                           .json()
                                           .at("data")
                                           .at("task_id")
                                           .as_string());
  int admitted = 1;  // the create
  int refused = 0;
  http_reply last_refusal;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) {  // alternating between the servers, as a load balancer would
    const auto reply = (i % 2 == 0 ? first : second).client().query(account.key, task);
    if (reply.status == 200) {
      ++admitted;
      BOOST_TEST(reply.header("ratelimit-policy") == "\"per-key\";q=5;w=1");
      BOOST_TEST(reply.header("ratelimit").starts_with("\"per-key\";r="));
    } else {
      BOOST_TEST(reply.status == 429, reply.body);
      ++refused;
      last_refusal = reply;
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  BOOST_TEST_MESSAGE("admitted " << admitted << ", refused " << refused << " in " << elapsed << " s");
  // The burst, plus what the rate refilled meanwhile: never more, across both servers.
  BOOST_TEST(admitted <= 10 + static_cast<int>(5 * elapsed) + 1);
  BOOST_TEST(admitted >= 8);  // at most one server's unspent batch (a token) is lost per server
  BOOST_TEST_REQUIRE(refused > 0);
  BOOST_TEST(last_refusal.json().at("code").as_int64() == 0);
  BOOST_TEST(std::string(last_refusal.json().at("msg").as_string()).find("rate limit exceeded") !=
             std::string::npos);
  const int retry_after = std::stoi(last_refusal.header("retry-after"));
  BOOST_TEST(retry_after >= 1);
  BOOST_TEST(retry_after <= 2);
  BOOST_TEST(last_refusal.header("ratelimit") == "\"per-key\";r=0;t=2");
  BOOST_TEST(last_refusal.header("ratelimit-policy") == "\"per-key\";q=5;w=1");

  // Another key is untouched; the limited one is admitted again once the bucket refilled.
  BOOST_TEST(first.client().query(other.key, task).status == 404);  // its own answer, not 429
  std::this_thread::sleep_for(std::chrono::seconds(retry_after) + 300ms);
  BOOST_TEST(second.client().query(account.key, task).status == 200);

  // The account's own setting wins over the configuration: 0 is unlimited, and sends no headers.
  BOOST_TEST(
      gesso_cli({"account", "limits", "--account", std::to_string(account.id), "--rate", "0"}).exit_code ==
      0);
  std::this_thread::sleep_for(1100ms);  // the servers' batches expire within a second
  for (int i = 0; i < 30; ++i) {
    const auto reply = first.client().query(account.key, task);
    BOOST_TEST(reply.status == 200);
    BOOST_TEST(reply.header("ratelimit").empty());
  }
  BOOST_TEST(first.stop() == 0);
  BOOST_TEST(second.stop() == 0);
}

BOOST_AUTO_TEST_CASE(without_a_limit_no_header_changes) {
  server_process server;  // the default configuration: unlimited
  const auto account = make_account("rate-none", 100);
  const auto created = server.client().create(account.key, R"({"model_id":"vendor4-2","prompt":"p"})");
  BOOST_TEST(created.status == 200);
  BOOST_TEST(created.header("ratelimit").empty());
  BOOST_TEST(created.header("ratelimit-policy").empty());
  for (int i = 0; i < 50; ++i) {
    BOOST_TEST(server.client()
                   .query(account.key, std::string(created.json().at("data").at("task_id").as_string()))
                   .status == 200);
  }
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
