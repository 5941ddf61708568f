// GET /api/v1/tasks/{id}?wait=N (docs/api.md#waiting): answers as soon as the task is final, woken by the
// notification of the statement that finalized it, or after N seconds with the task as it is; bad values
// answer 400; other parameters are ignored as they always were on this endpoint.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <future>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string wait_catalog = R"({"models":{
  "vendor4-2": {"task_type":"image","price":6},
  "slow": {"task_type":"image","price":5,"engine_settings":{"latency_ms":1500}},
  "fails": {"task_type":"image","price":7,"engine_settings":{"latency_ms":800,"failure_rate":1}}
}})";

env_map with_wait_catalog() {
  static const std::string path = temporary_file(wait_catalog, ".json");
  return {{"GESSO_CATALOG", path}};
}

std::string create(const http_client& client, const test_account& account, const std::string& model) {
  const auto reply =
      client.create(account.key, json::serialize(json::object{{"model_id", model}, {"prompt", "p"}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

http_reply wait_for(const http_client& client, const test_account& account, const std::string& id,
                    const std::string& query) {
  return client.request("GET", "/api/v1/tasks/" + id + query, "",
                        {{"Authorization", "Bearer " + account.key}});
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(waiting)

BOOST_AUTO_TEST_CASE(a_wait_answers_when_the_task_is_final) {
  server_process server(with_wait_catalog());
  worker_process worker(with_wait_catalog());
  const auto client = server.client();
  const auto account = make_account("wait-final", 100);
  for (const std::string model : {"slow", "fails"}) {
    BOOST_TEST_CONTEXT(model) {
      const std::string id = create(client, account, model);
      const auto started = std::chrono::steady_clock::now();
      const auto reply = wait_for(client, account, id, "?wait=20");
      const double took = seconds_since(started);
      BOOST_TEST(reply.status == 200, reply.body);
      const std::int64_t status = reply.json().at("data").at("task_status").as_int64();
      BOOST_TEST(status == (model == "slow" ? 3 : 4));
      BOOST_TEST(took >= 0.7);  // it did wait for the render
      BOOST_TEST(took < 5.0);   // and was woken, not timed out
    }
  }
  // Many waiters on one task wake together; a final task answers at once.
  const std::string id = create(client, account, "slow");
  std::vector<std::future<http_reply>> waiting;
  for (int i = 0; i < 20; ++i) {
    waiting.push_back(
        std::async(std::launch::async, [&] { return wait_for(client, account, id, "?wait=30"); }));
  }
  for (auto& w : waiting) {
    BOOST_TEST(w.get().json().at("data").at("task_status").as_int64() == 3);
  }
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(wait_for(client, account, id, "?wait=60").status == 200);
  BOOST_TEST(seconds_since(started) < 1.0);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_wait_ends_after_n_seconds_with_the_task_as_it_is) {
  server_process server(with_wait_catalog());  // no worker: the task stays queued
  const auto client = server.client();
  const auto account = make_account("wait-timeout", 100);
  const std::string id = create(client, account, "vendor4-2");
  const auto started = std::chrono::steady_clock::now();
  const auto reply = wait_for(client, account, id, "?wait=1");
  const double took = seconds_since(started);
  BOOST_TEST(reply.status == 200);
  BOOST_TEST(reply.json().at("data").at("task_status").as_int64() == 1);
  BOOST_TEST(took >= 0.95);
  BOOST_TEST(took < 3.0);
  BOOST_TEST(reply.header("x-request-id").starts_with("req_"));
  BOOST_TEST(reply.header("ratelimit-policy").empty());  // no limit, no header: the spec's answer
  // The answer of a wait is built after the handler's frames are gone (finish_wait): it keeps the
  // headers the router put on the request, the rate limit's included.
  BOOST_TEST(
      gesso_cli({"account", "limits", "--account", std::to_string(account.id), "--rate", "50"}).exit_code ==
      0);
  std::this_thread::sleep_for(1100ms);  // limits hold on every server within a second
  const auto limited = wait_for(client, account, id, "?wait=1");
  BOOST_TEST(limited.status == 200);
  BOOST_TEST(limited.json().at("data").at("task_status").as_int64() == 1);
  BOOST_TEST(limited.header("ratelimit-policy") == "\"per-key\";q=50;w=1");
  BOOST_TEST(limited.header("ratelimit").starts_with("\"per-key\";r="));
  // A cancel makes it final: a waiter wakes at once.
  auto waiting = std::async(std::launch::async, [&] { return wait_for(client, account, id, "?wait=30"); });
  std::this_thread::sleep_for(300ms);
  const auto cancel_started = std::chrono::steady_clock::now();
  BOOST_TEST(client.cancel(account.key, id).status == 200);
  BOOST_TEST(waiting.get().json().at("data").at("task_status").as_int64() == 4);
  BOOST_TEST(seconds_since(cancel_started) < 2.0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_waits_answer_400_and_other_parameters_are_ignored) {
  server_process server(with_wait_catalog());
  const auto client = server.client();
  const auto account = make_account("wait-bad", 100);
  const auto other = make_account("wait-other", 100);
  const std::string id = create(client, account, "vendor4-2");
  struct bad {
    std::string query;
    std::string message;
  };
  const bad cases[] = {
      {"?wait=61", "wait must be from 0 to 60 (it is 61)"},
      {"?wait=-1", "wait must be from 0 to 60 (it is -1)"},
      {"?wait=soon", "wait must be an integer from 0 to 60"},
      {"?wait=1.5", "wait must be an integer from 0 to 60"},
      {"?wait=", "wait must be an integer from 0 to 60"},
      {"?wait=1&wait=2", "parameter \"wait\" is given more than once"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.query) {
      const auto reply = wait_for(client, account, id, c.query);
      BOOST_TEST(reply.status == 400);
      const std::string msg(reply.json().at("msg").as_string());
      BOOST_TEST(msg.find(c.message) != std::string::npos, msg);
    }
  }
  BOOST_TEST(wait_for(client, account, id, "?_=1700000000").status == 200);  // a cache-buster, as always
  BOOST_TEST(wait_for(client, account, id, "?x=%zz&%=1").status == 200);     // ignored, however malformed
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(wait_for(client, account, id, "?wait=0").status == 200);
  BOOST_TEST(seconds_since(started) < 1.0);
  // Another account's task is not found, at once, whatever the wait.
  const auto theirs = wait_for(client, other, id, "?wait=30");
  BOOST_TEST(theirs.status == 404);
  BOOST_TEST(seconds_since(started) < 2.0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_drain_answers_the_waiting_requests) {
  server_process server(env_map{{"GESSO_DRAIN_GRACE_MS", "200"}});
  const auto client = server.client();
  const auto account = make_account("wait-drain", 100);
  const std::string id = create(client, account, "vendor4-2");
  auto waiting = std::async(std::launch::async, [&] { return wait_for(client, account, id, "?wait=60"); });
  std::this_thread::sleep_for(300ms);
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(server.stop() == 0);
  const auto reply = waiting.get();
  BOOST_TEST(reply.status == 200);
  BOOST_TEST(reply.json().at("data").at("task_status").as_int64() == 1);
  BOOST_TEST(seconds_since(started) < 5.0);  // not the 60 s of the wait
}

BOOST_AUTO_TEST_SUITE_END()
