// POST /api/v1/tasks/{id}/cancel (docs/api.md#cancel): a queued task fails as canceled and is refunded at
// once; a running one is stopped by its worker; a final one answers 409; and under every race of cancel
// against a worker finishing, failing, retrying or the rescuer's deadline, a task is refunded exactly
// once if it fails and never if it succeeds.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// Models that finish quickly, fail, retry, or pass a one-second deadline while rendering.
const std::string race_catalog = R"({"models":{
  "vendor4-2": {"task_type":"image","price":6},
  "quick": {"task_type":"image","price":5,"engine_settings":{"latency_ms":40}},
  "fails": {"task_type":"image","price":7,"engine_settings":{"latency_ms":30,"failure_rate":1}},
  "flaky": {"task_type":"image","price":9,"max_attempts":3,"engine_settings":{"latency_ms":20,"retry_rate":0.5}},
  "late": {"task_type":"image","price":4,"deadline_seconds":1,"engine_settings":{"latency_ms":950}}
}})";

env_map with_race_catalog(env_map env = {}) {
  static const std::string path = temporary_file(race_catalog, ".json");
  env["GESSO_CATALOG"] = path;
  return env;
}

std::string create(const http_client& client, const test_account& account, const std::string& model) {
  const auto reply =
      client.create(account.key, json::serialize(json::object{{"model_id", model}, {"prompt", "p"}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

std::string ledger_of(const test_account& account) {
  return cluster().psql("SELECT kind, count(*), sum(amount) FROM ledger WHERE account_id = " +
                        std::to_string(account.id) + " GROUP BY kind ORDER BY kind");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cancel)

BOOST_AUTO_TEST_CASE(a_queued_task_fails_as_canceled_and_is_refunded_at_once) {
  server_process server(with_race_catalog());  // no worker: the task stays queued
  const auto client = server.client();
  const auto account = make_account("cancel-queued", 100);
  const std::string id = create(client, account, "vendor4-2");
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 94);
  const auto canceled = client.cancel(account.key, id);
  BOOST_TEST_REQUIRE(canceled.status == 200, canceled.body);
  const json::value body = canceled.json();
  BOOST_TEST(body.at("code").as_int64() == 200);
  BOOST_TEST(body.at("msg").as_string() == "canceled; the task's credits were refunded");
  BOOST_TEST(body.at("data").at("task_id").as_string() == id);
  BOOST_TEST(body.at("data").at("task_status").as_int64() == 4);
  BOOST_TEST(body.at("data").at("error").at("kind").as_string() == "canceled");
  BOOST_TEST(body.at("data").at("finished_at").is_int64());
  BOOST_TEST(body.at("data").at("cancel_requested").as_bool());
  BOOST_TEST(client.query(account.key, id).json().at("data") == body.at("data"));
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 100);
  BOOST_TEST(ledger_of(account) == "charge|1|6\ngrant|1|100\nrefund|1|6\n");

  // Final now: a second cancel is refused and changes nothing.
  const auto again = client.cancel(account.key, id);
  BOOST_TEST(again.status == 409);
  BOOST_TEST(again.json().at("code").as_int64() == 0);
  BOOST_TEST(std::string(again.json().at("msg").as_string()).find("already final (task_status 4)") !=
             std::string::npos);
  BOOST_TEST(ledger_of(account) == "charge|1|6\ngrant|1|100\nrefund|1|6\n");
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_cancels_answer_with_the_problem_and_change_nothing) {
  server_process server(with_race_catalog());
  const auto client = server.client();
  const auto owner = make_account("cancel-owner", 100);
  const auto stranger = make_account("cancel-stranger", 100);
  const std::string id = create(client, owner, "vendor4-2");
  const std::string other_id = create(client, stranger, "vendor4-2");
  struct bad {
    std::string name;
    http_reply reply;
    int status;
    std::string message;
  };
  const std::string path = "/api/v1/tasks/" + id + "/cancel";
  const std::map<std::string, std::string> auth{{"Authorization", "Bearer " + owner.key}};
  const bad cases[] = {
      {"another account's task", client.cancel(owner.key, other_id), 404, "task not found"},
      {"unknown id", client.cancel(owner.key, "task_01aaaaaaaaaaaaaaaaaaaaaaaa"), 404, "task not found"},
      {"not an id", client.cancel(owner.key, "not-a-task"), 404, "task not found"},
      {"an id too long", client.cancel(owner.key, id + std::string(300, 'x')), 404, "task not found"},
      {"no key", client.request("POST", path), 401, "missing Authorization header"},
      {"a revoked-looking key", client.cancel("sk-" + std::string(43, 'A'), id), 401, "invalid or revoked"},
      {"GET", client.request("GET", path, "", auth), 405, "accepts POST"},
      {"a parameter", client.request("POST", path + "?force=true", "", auth), 400,
       "unknown parameter \"force\""},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      BOOST_TEST(c.reply.status == c.status, c.reply.body);
      const std::string msg(c.reply.json().at("msg").as_string());
      BOOST_TEST(msg.find(c.message) != std::string::npos, msg);
    }
  }
  BOOST_TEST(client.query(owner.key, id).json().at("data").at("task_status").as_int64() == 1);
  BOOST_TEST(client.query(stranger.key, other_id).json().at("data").at("task_status").as_int64() == 1);
  BOOST_TEST(!client.query(owner.key, id).json().at("data").at("cancel_requested").as_bool());
  BOOST_TEST(account_show(owner.id).at("balance").as_int64() == 94);
  BOOST_TEST(account_show(stranger.id).at("balance").as_int64() == 94);
  BOOST_TEST(server.stop() == 0);
}

// 100 tasks, each canceled at a random moment while two workers run it: before its claim, while it
// renders, between retries, as it fails, or as the rescuer fails it at its one-second deadline.
BOOST_AUTO_TEST_CASE(every_race_of_cancel_against_a_worker_refunds_exactly_once) {
  const env_map env = with_race_catalog({{"GESSO_LOG_LEVEL", "warn"}, {"GESSO_WORKER_RESCUE_MS", "100"}});
  server_process server(env);
  worker_process first(env);
  worker_process second(env);
  const auto client = server.client();
  const auto account = make_account("cancel-race", 10'000);
  const std::vector<std::string> models{"quick", "quick", "fails", "flaky", "late"};
  std::mt19937 random(20261123);
  std::vector<std::string> ids;
  std::vector<int> answers;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(create(client, account, models[i % models.size()]));
    const int delay_ms = std::uniform_int_distribution<int>(0, i % 5 == 4 ? 1200 : 80)(random);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    const auto reply = client.cancel(account.key, ids.back());
    BOOST_TEST((reply.status == 200 || reply.status == 409), reply.body);
    answers.push_back(reply.status);
  }
  int canceled = 0;
  int succeeded = 0;
  int failed = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const poll_result done = poll_until_final(client, account.key, ids[i], 30s);
    const int status = done.statuses.back();
    (status == 3 ? succeeded : failed)++;
    if (status == 4 && done.data.at("error").at("kind").as_string() == "canceled") {
      ++canceled;
    }
    if (answers[i] == 409) {  // final before the cancel arrived: never marked canceled
      const bool not_canceled =
          done.data.at("error").is_null() || done.data.at("error").at("kind").as_string() != "canceled";
      BOOST_TEST(not_canceled);
    }
  }
  BOOST_TEST_MESSAGE("canceled " << canceled << ", succeeded " << succeeded << ", failed otherwise "
                                 << failed - canceled);
  BOOST_TEST(canceled > 0);
  // Exactly one refund per failed task, none for a succeeded one, and the books balance.
  const std::string refunds = cluster().psql(
      "SELECT count(*) FILTER (WHERE t.status = 4 AND r.n = 1), count(*) FILTER (WHERE t.status = 4 AND r.n "
      "IS "
      "DISTINCT FROM 1), count(*) FILTER (WHERE t.status = 3 AND r.n IS NOT NULL) FROM tasks t LEFT JOIN "
      "(SELECT task_id, count(*) AS n FROM ledger WHERE kind = 'refund' GROUP BY task_id) r ON r.task_id = "
      "t.id "
      "WHERE t.account_id = " +
      std::to_string(account.id));
  BOOST_TEST(refunds == std::to_string(failed) + "|0|0\n");
  const json::object shown = account_show(account.id);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(gesso_cli({"ledger", "check"}).exit_code == 0);
  BOOST_TEST(first.stop() == 0);
  BOOST_TEST(second.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
