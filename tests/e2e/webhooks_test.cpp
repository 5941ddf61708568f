// Webhooks (docs/api.md#webhooks): a task created with a callback_url is POSTed, once final, to a
// receiver that verifies every Standard Webhooks signature; a failed delivery is retried, a rotation
// signs with both secrets, a worker killed mid-delivery leaves a delivery that still arrives with the
// same webhook-id, and a bad callback_url is refused at create.

#include "core/base64.hpp"
#include "core/hmac.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string hook_catalog = R"({"models":{
  "vendor4-2": {"task_type":"image","price":6},
  "fails": {"task_type":"image","price":7,"engine_settings":{"failure_rate":1}}
}})";

env_map hook_env(env_map extra = {}) {
  static const std::string path = temporary_file(hook_catalog, ".json");
  extra["GESSO_CATALOG"] = path;
  extra["GESSO_WEBHOOK_HTTP_HOSTS"] = "127.0.0.1";
  return extra;
}

std::string create(const http_client& client, const test_account& account, const std::string& model,
                   const std::string& callback) {
  const auto reply = client.create(
      account.key,
      json::serialize(json::object{{"model_id", model}, {"prompt", "p"}, {"callback_url", callback}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

// The signatures of a delivery, checked the way a receiver would, independently of Gesso's own code:
// every "v1,<base64>" entry is HMAC-SHA256 over "id.timestamp.body" with one of `secrets`.
int verified_signatures(const received_request& r, const std::vector<std::string>& secrets) {
  const std::string content =
      r.headers.at("webhook-id") + "." + r.headers.at("webhook-timestamp") + "." + r.body;
  int verified = 0;
  std::string header = r.headers.at("webhook-signature");
  std::size_t start = 0;
  while (start < header.size()) {
    const auto space = header.find(' ', start);
    const std::string entry =
        header.substr(start, space == std::string::npos ? std::string::npos : space - start);
    for (const std::string& secret : secrets) {
      const std::string key = gesso::decode_base64(secret.substr(6)).value();
      if (entry == "v1," + gesso::encode_base64(gesso::hmac_sha256(key, content))) {
        ++verified;
      }
    }
    start = space == std::string::npos ? header.size() : space + 1;
  }
  return verified;
}

std::vector<received_request> wait_for_requests(const test_http_server& receiver, std::size_t n,
                                                std::chrono::seconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (receiver.received().size() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  return receiver.received();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(webhooks)

BOOST_AUTO_TEST_CASE(a_final_task_is_posted_signed_and_a_failed_delivery_retried) {
  test_http_server receiver;
  receiver.route("/hook", {.status = 204});
  receiver.route("/flaky", {.status = 200, .fail_first = 1});
  server_process server(hook_env());
  worker_process worker(hook_env());
  const auto client = server.client();
  const auto account = make_account("hooks", 100);
  BOOST_TEST(account.webhook_secret.starts_with("whsec_"));
  const std::string ok = create(client, account, "vendor4-2", receiver.url("/hook"));
  const std::string failed = create(client, account, "fails", receiver.url("/hook"));
  const auto seen = wait_for_requests(receiver, 2);
  BOOST_TEST_REQUIRE(seen.size() == 2U);
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  for (const auto& r : seen) {
    BOOST_TEST(r.method == "POST");
    BOOST_TEST(r.target == "/hook");
    BOOST_TEST(r.headers.at("content-type") == "application/json");
    BOOST_TEST(r.headers.at("webhook-id").starts_with("msg_"));
    BOOST_TEST(std::abs(std::stoll(r.headers.at("webhook-timestamp")) - now.count()) < 60);
    BOOST_TEST(verified_signatures(r, {account.webhook_secret}) == 1, r.headers.at("webhook-signature"));
    const json::value body = json::parse(r.body);
    const std::string id(body.at("task_id").as_string());
    BOOST_TEST((id == ok || id == failed));
    // The query's data object, as the query shows it.
    const json::value queried = client.query(account.key, id).json().at("data");
    BOOST_TEST(body.at("task_status") == queried.at("task_status"));
    BOOST_TEST(body.at("error") == queried.at("error"));
    BOOST_TEST(body.at("task_status").as_int64() == (id == ok ? 3 : 4));
  }
  BOOST_TEST(seen[0].headers.at("webhook-id") != seen[1].headers.at("webhook-id"));
  // The delivery shows on the task.
  for (int i = 0;
       i < 100 && client.query(account.key, ok).json().at("data").at("webhook").at("status") != "delivered";
       ++i) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(client.query(account.key, ok).json().at("data").at("webhook") ==
             json::parse(R"({"status":"delivered","attempts":1,"last_status_code":204})"));
  BOOST_TEST(gesso_cli({"task", "show", ok}).out.find("webhook_deliveries") != std::string::npos);

  // A 500 is retried (after about 5 s), with the same webhook-id, until a 2xx.
  const std::string flaky = create(client, account, "vendor4-2", receiver.url("/flaky"));
  const auto all = wait_for_requests(receiver, 4, 30s);
  BOOST_TEST_REQUIRE(all.size() == 4U);
  BOOST_TEST(all[2].target == "/flaky");
  BOOST_TEST(all[3].headers.at("webhook-id") == all[2].headers.at("webhook-id"));
  for (int i = 0; i < 100 && client.query(account.key, flaky).json().at("data").at("webhook").at("status") !=
                                 "delivered";
       ++i) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(client.query(account.key, flaky).json().at("data").at("webhook") ==
             json::parse(R"({"status":"delivered","attempts":2,"last_status_code":200})"));
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_rotation_signs_with_both_secrets_for_a_day) {
  test_http_server receiver;
  receiver.route("/hook", {.status = 200});
  server_process server(hook_env());
  worker_process worker(hook_env());
  const auto account = make_account("hooks-rotate", 100);
  const auto rotated = gesso_cli({"webhook", "rotate", "--account", std::to_string(account.id), "--json"});
  BOOST_TEST_REQUIRE(rotated.exit_code == 0, rotated.err);
  const std::string fresh(json::parse(rotated.out).at("webhook_secret").as_string());
  BOOST_TEST(fresh != account.webhook_secret);
  create(server.client(), account, "vendor4-2", receiver.url("/hook"));
  const auto seen = wait_for_requests(receiver, 1);
  BOOST_TEST_REQUIRE(seen.size() == 1U);
  BOOST_TEST(verified_signatures(seen[0], {fresh}) == 1);
  BOOST_TEST(verified_signatures(seen[0], {account.webhook_secret}) == 1);
  // Once the old secret's day is over, only the new one signs.
  cluster().psql(
      "UPDATE webhook_secrets SET expires_at = now() - interval '1 second' WHERE expires_at IS NOT NULL "
      "AND account_id = " +
      std::to_string(account.id));
  create(server.client(), account, "vendor4-2", receiver.url("/hook"));
  const auto later = wait_for_requests(receiver, 2);
  BOOST_TEST_REQUIRE(later.size() == 2U);
  BOOST_TEST(verified_signatures(later[1], {fresh, account.webhook_secret}) == 1);
  BOOST_TEST(later[1].headers.at("webhook-signature").find(' ') == std::string::npos);
  BOOST_TEST(gesso_cli({"webhook", "rotate", "--account", "999999999"}).exit_code == 1);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_worker_killed_mid_delivery_leaves_it_to_another_with_the_same_id) {
  test_http_server receiver;
  receiver.route("/slow", {.status = 200, .delay = 2500ms});
  const env_map env = hook_env();  // the delivery is due again 15 s after the dead worker claimed it
  server_process server(env);
  auto first = std::make_unique<worker_process>(env);
  const auto account = make_account("hooks-kill", 100);
  const std::string id = create(server.client(), account, "vendor4-2", receiver.url("/slow"));
  BOOST_TEST_REQUIRE(wait_for_requests(receiver, 1).size() == 1U);  // the worker waits for the answer
  first->kill();
  first.reset();
  worker_process second(env);
  const auto seen = wait_for_requests(receiver, 2, 40s);
  BOOST_TEST_REQUIRE(seen.size() >= 2U);
  BOOST_TEST(seen[1].headers.at("webhook-id") ==
             seen[0].headers.at("webhook-id"));  // a duplicate, recognisable
  BOOST_TEST(seen[1].body.find(id) != std::string::npos);
  BOOST_TEST(verified_signatures(seen[1], {account.webhook_secret}) == 1);
  for (int i = 0;
       i < 200 &&
       server.client().query(account.key, id).json().at("data").at("webhook").at("status") != "delivered";
       ++i) {
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(server.client().query(account.key, id).json().at("data").at("webhook").at("status") ==
             "delivered");
  BOOST_TEST(second.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_callback_urls_are_refused_and_write_nothing) {
  server_process server(hook_env());
  const auto client = server.client();
  const auto account = make_account("hooks-bad", 100);
  struct bad {
    json::value callback;
    std::string message;
  };
  const bad cases[] = {
      {"http://example.com/hook",
       "callback_url must use https (plain http only to hosts the operator allows)"},
      {"ftp://example.com/hook", "callback_url must use https"},
      {"https://", "callback_url has no host"},
      {"not a url", "callback_url is not a valid absolute URL"},
      {"https://user:secret@example.com/hook", "callback_url must not carry a user name or password"},
      {"https://10.0.0.1/hook", "callback_url points to 10.0.0.1"},
      {"https://169.254.169.254/latest", "callback_url points to 169.254.169.254"},
      {json::value(json::string("https://example.com/" + std::string(2048, 'x'))),
       "callback_url is longer than 2048 characters"},
      {42, "field \"callback_url\" must be a URL string, not a number"},
      {json::array{"https://example.com"}, "field \"callback_url\" must be a URL string, not an array"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(json::serialize(c.callback).substr(0, 80)) {
      const auto reply = client.create(
          account.key, json::serialize(json::object{
                           {"model_id", "vendor4-2"}, {"prompt", "p"}, {"callback_url", c.callback}}));
      BOOST_TEST(reply.status == 400);
      const std::string msg(reply.json().at("msg").as_string());
      BOOST_TEST(msg.find(c.message) != std::string::npos, msg);
    }
  }
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 100);
  BOOST_TEST(account_show(account.id).at("tasks").at("queued").as_int64() == 0);
  // null is no webhook; an https URL is accepted; neither shows a delivery before the task is final.
  const auto none =
      client.create(account.key, R"({"model_id":"vendor4-2","prompt":"p","callback_url":null})");
  BOOST_TEST(none.status == 200);
  BOOST_TEST(client.query(account.key, std::string(none.json().at("data").at("task_id").as_string()))
                 .json()
                 .at("data")
                 .at("webhook")
                 .is_null());
  const std::string hooked = create(client, account, "vendor4-2", "https://hooks.example.com/gesso");
  BOOST_TEST(client.query(account.key, hooked).json().at("data").at("webhook") ==
             json::parse(R"({"status":"waiting","attempts":0,"last_status_code":null})"));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
