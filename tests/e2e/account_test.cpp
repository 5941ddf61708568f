// GET /api/v1/account and /api/v1/account/usage (docs/api.md#account): the caller's balance and limits
// (the configuration's defaults until `gesso account limits` sets its own), and usage computed from the
// ledger, by model or by day; bad parameters answer 400 naming the problem.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace gesso::testing;
namespace json = boost::json;

namespace {

http_reply get(const http_client& client, const test_account& account, const std::string& target) {
  return client.request("GET", target, "", {{"Authorization", "Bearer " + account.key}});
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(account)

BOOST_AUTO_TEST_CASE(the_account_shows_its_balance_and_the_limits_that_hold) {
  server_process server(env_map{{"GESSO_RATE_LIMIT_RPS", "50"}, {"GESSO_MAX_CONCURRENT_TASKS", "0"}});
  const auto client = server.client();
  const auto account = make_account("acct-show", 100);
  BOOST_TEST(client.create(account.key, R"({"model_id":"vendor4-2","prompt":"p"})").status == 200);
  const auto shown = get(client, account, "/api/v1/account");
  BOOST_TEST_REQUIRE(shown.status == 200, shown.body);
  const json::value data = shown.json().at("data");
  BOOST_TEST(data.at("account_id").as_int64() == account.id);
  BOOST_TEST(data.at("name").as_string() == "acct-show");
  BOOST_TEST(data.at("balance").as_int64() == 94);
  BOOST_TEST(data.at("limits") ==
             json::parse(R"({"requests_per_second":50,"burst":100,"max_concurrent_tasks":null})"));

  // The operator sets the account's own limits; "default" gives one back to the configuration.
  const auto set = gesso_cli({"account", "limits", "--account", std::to_string(account.id), "--rate", "5",
                              "--burst", "7", "--max-concurrent", "3", "--json"});
  BOOST_TEST(set.exit_code == 0, set.err);
  BOOST_TEST(json::parse(set.out).at("max_concurrent_tasks").as_int64() == 3);
  BOOST_TEST(get(client, account, "/api/v1/account").json().at("data").at("limits") ==
             json::parse(R"({"requests_per_second":5,"burst":7,"max_concurrent_tasks":3})"));
  BOOST_TEST(gesso_cli({"account", "limits", "--account", std::to_string(account.id), "--rate", "default",
                        "--max-concurrent", "0"})
                 .exit_code == 0);
  BOOST_TEST(get(client, account, "/api/v1/account").json().at("data").at("limits") ==
             json::parse(R"({"requests_per_second":50,"burst":7,"max_concurrent_tasks":null})"));

  // Bad operator input changes nothing.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--rate", "-1"}, {"--burst", "many"}, {"--max-concurrent", "99999999999"}}) {
    std::vector<std::string> args{"account", "limits", "--account", std::to_string(account.id)};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto refused = gesso_cli(args);
    BOOST_TEST(refused.exit_code == 2, bad[0]);
    BOOST_TEST(refused.err.find(bad[0] + " must be a whole number") != std::string::npos, refused.err);
  }
  BOOST_TEST(gesso_cli({"account", "limits", "--account", "999999999"}).exit_code == 1);
  BOOST_TEST(get(client, account, "/api/v1/account").json().at("data").at("limits").at("burst").as_int64() ==
             7);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(usage_comes_from_the_ledger_by_model_and_by_day) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("acct-usage", 1000);
  const auto other = make_account("acct-usage-other", 1000);
  std::vector<std::string> ids;
  for (const std::string model : {"vendor4-2", "vendor4-2", "vendor3-image-2"}) {
    const auto r = client.create(account.key, R"({"model_id":")" + model + R"(","prompt":"p"})");
    ids.emplace_back(r.json().at("data").at("task_id").as_string());
  }
  BOOST_TEST(client.cancel(account.key, ids[1]).status == 200);  // one refund of 6
  BOOST_TEST(client.create(other.key, R"({"model_id":"vendor1-pro","prompt":"p"})").status == 200);

  const auto by_model = get(client, account, "/api/v1/account/usage?group_by=model");
  BOOST_TEST_REQUIRE(by_model.status == 200, by_model.body);
  const json::value data = by_model.json().at("data");
  BOOST_TEST(data.at("group_by").as_string() == "model");
  BOOST_TEST(data.at("groups") == json::parse(R"([
    {"model_id":"vendor3-image-2","tasks":1,"charged":8,"refunds":0,"refunded":0,"net":8},
    {"model_id":"vendor4-2","tasks":2,"charged":12,"refunds":1,"refunded":6,"net":6}])"));
  BOOST_TEST(data.at("totals") ==
             json::parse(R"({"tasks":3,"charged":20,"refunds":1,"refunded":6,"net":14})"));
  BOOST_TEST(data.at("to").as_int64() - data.at("from").as_int64() == 30 * 86400);  // the default window

  const auto by_day = get(client, account, "/api/v1/account/usage?group_by=day").json().at("data");
  BOOST_TEST(by_day.at("groups").as_array().size() == 1U);
  BOOST_TEST(by_day.at("groups").at(0).at("tasks").as_int64() == 3);
  BOOST_TEST(by_day.at("groups").at(0).at("day").as_string().size() == 10U);  // YYYY-MM-DD

  // A window that ends before the tasks were made holds none of them; `from` alone runs to now.
  const std::int64_t now = unix_now();
  const auto before =
      get(client, account,
          "/api/v1/account/usage?from=" + std::to_string(now - 86400) + "&to=" + std::to_string(now - 3600));
  BOOST_TEST(before.json().at("data").at("groups").as_array().empty());
  const auto recent = get(client, account, "/api/v1/account/usage?from=" + std::to_string(now - 600));
  BOOST_TEST(recent.json().at("data").at("totals").at("tasks").as_int64() == 3);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_account_requests_answer_with_the_problem) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("acct-bad", 100);
  struct bad {
    std::string target;
    int status;
    std::string message;
  };
  const bad cases[] = {
      {"/api/v1/account?verbose=1", 400,
       "unknown parameter \"verbose\"; this endpoint accepts no parameters"},
      {"/api/v1/account/usage?group_by=week", 400, "group_by must be \"model\" or \"day\""},
      {"/api/v1/account/usage?group_by=", 400, "group_by must be \"model\" or \"day\""},
      {"/api/v1/account/usage?from=yesterday", 400, "from must be an integer"},
      {"/api/v1/account/usage?to=-5", 400, "to must be from 0 to"},
      {"/api/v1/account/usage?from=2000&to=1000", 400, "from must be earlier than to"},
      {"/api/v1/account/usage?from=0&to=100000000", 400, "at most 366 days apart"},
      {"/api/v1/account/usage?from=1&from=2", 400, "given more than once"},
      {"/api/v1/account/usage?model_id=x", 400,
       "unknown parameter \"model_id\"; accepted parameters are from, to, group_by"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.target) {
      const auto reply = get(client, account, c.target);
      BOOST_TEST(reply.status == c.status, reply.body);
      const std::string msg(reply.json().at("msg").as_string());
      BOOST_TEST(msg.find(c.message) != std::string::npos, msg);
    }
  }
  BOOST_TEST(client.request("GET", "/api/v1/account").status == 401);
  BOOST_TEST(client.request("GET", "/api/v1/account/usage").status == 401);
  const auto post =
      client.request("POST", "/api/v1/account", "", {{"Authorization", "Bearer " + account.key}});
  BOOST_TEST(post.status == 405);
  BOOST_TEST(post.header("allow") == "GET");
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
