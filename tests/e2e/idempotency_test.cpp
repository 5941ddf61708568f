// Idempotency-Key on create (docs/api.md#idempotency): a retry with the same key and body gets the first
// answer and pays once; a different body is refused; concurrent creates with one key make one task.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

using namespace gesso::testing;
namespace json = boost::json;

namespace {

const std::string fox = R"({"model_id":"vendor4-2","prompt":"a fox"})";

http_reply create_with_key(const http_client& client, const test_account& account, const std::string& body,
                           const std::string& idempotency_key) {
  return client.request("POST", "/api/v1/tasks/create", body,
                        {{"Authorization", "Bearer " + account.key},
                         {"Content-Type", "application/json"},
                         {"Idempotency-Key", idempotency_key}});
}

std::int64_t tasks_of(const test_account& account) {
  return std::stoll(
      cluster().psql("SELECT count(*) FROM tasks WHERE account_id = " + std::to_string(account.id)));
}

std::int64_t keys_of(const test_account& account) {
  return std::stoll(cluster().psql("SELECT count(*) FROM idempotency_keys WHERE account_id = " +
                                   std::to_string(account.id)));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(idempotency)

BOOST_AUTO_TEST_CASE(a_retry_with_the_same_key_replays_the_first_answer_and_pays_once) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("idem-replay", 100);
  const auto first = create_with_key(client, account, fox, "order-1");
  BOOST_TEST_REQUIRE(first.status == 200, first.body);
  BOOST_TEST(first.header("idempotent-replayed").empty());
  // The same request, written differently (members in another order, the default ratio spelled out).
  const auto again = create_with_key(
      client, account, R"({"prompt":"a fox","aspect_ratio":"1:1","model_id":"vendor4-2"})", "order-1");
  BOOST_TEST_REQUIRE(again.status == 200, again.body);
  BOOST_TEST(again.header("idempotent-replayed") == "true");
  BOOST_TEST(again.json().at("data") == first.json().at("data"));  // task_id, request_id, credits
  BOOST_TEST(again.json().at("msg") == first.json().at("msg"));
  BOOST_TEST(again.header("x-request-id") != first.header("x-request-id"));  // this request's own id
  BOOST_TEST(tasks_of(account) == 1);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 94);

  // A different body under the same key: 422, nothing written.
  const auto different =
      create_with_key(client, account, R"({"model_id":"vendor4-2","prompt":"a cat"})", "order-1");
  BOOST_TEST(different.status == 422, different.body);
  BOOST_TEST(different.json().at("code").as_int64() == 0);
  BOOST_TEST(std::string(different.json().at("msg").as_string()).find("different request") !=
             std::string::npos);
  BOOST_TEST(tasks_of(account) == 1);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 94);

  // Another key, and no key, make new tasks; the same key on another account is that account's own.
  BOOST_TEST(create_with_key(client, account, fox, "order-2").json().at("data").at("task_id") !=
             first.json().at("data").at("task_id"));
  BOOST_TEST(client.create(account.key, fox).status == 200);
  const auto other = make_account("idem-other", 100);
  const auto theirs = create_with_key(client, other, fox, "order-1");
  BOOST_TEST(theirs.status == 200);
  BOOST_TEST(theirs.header("idempotent-replayed").empty());
  BOOST_TEST(theirs.json().at("data").at("task_id") != first.json().at("data").at("task_id"));
  BOOST_TEST(tasks_of(account) == 3);
  BOOST_TEST(account_show(account.id).at("consistent").as_bool());
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(fifty_concurrent_creates_with_one_key_make_one_task_and_one_charge) {
  server_process server(env_map{{"GESSO_LOG_LEVEL", "warn"}});
  const auto client = server.client();
  const auto account = make_account("idem-race", 1000);
  constexpr int creates = 50;
  std::vector<http_reply> replies(creates);
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (int i = 0; i < creates; ++i) {
    threads.emplace_back([&, i] {
      while (!go) {
        std::this_thread::yield();
      }
      replies[i] = create_with_key(client, account, fox, "the-one-key");
    });
  }
  go = true;
  for (auto& t : threads) {
    t.join();
  }
  std::set<std::string> task_ids;
  int made = 0;
  int replayed = 0;
  int in_flight = 0;
  for (const auto& r : replies) {
    BOOST_TEST((r.status == 200 || r.status == 409), r.status << " " << r.body);
    if (r.status == 200) {
      task_ids.insert(std::string(r.json().at("data").at("task_id").as_string()));
      (r.header("idempotent-replayed") == "true" ? replayed : made)++;
    } else {
      ++in_flight;
    }
  }
  BOOST_TEST_MESSAGE("made " << made << ", replayed " << replayed << ", 409 " << in_flight);
  BOOST_TEST(made == 1);
  BOOST_TEST(task_ids.size() == 1U);
  BOOST_TEST(tasks_of(account) == 1);
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 1000 - 6);
  BOOST_TEST(shown.at("charged").as_int64() == 6);
  BOOST_TEST(shown.at("consistent").as_bool());
  // A 409 is an answer to retry: the retry gets the task.
  const auto retried = create_with_key(client, account, fox, "the-one-key");
  BOOST_TEST(retried.status == 200);
  BOOST_TEST(retried.header("idempotent-replayed") == "true");
  BOOST_TEST(task_ids.contains(std::string(retried.json().at("data").at("task_id").as_string())));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_key_is_kept_24_hours_then_makes_a_new_task) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("idem-expiry", 100);
  const auto first = create_with_key(client, account, fox, "daily");
  BOOST_TEST_REQUIRE(first.status == 200);
  cluster().psql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE account_id = " +
                 std::to_string(account.id));
  const auto later =
      create_with_key(client, account, R"({"model_id":"vendor4-2","prompt":"another"})", "daily");
  BOOST_TEST(later.status == 200, later.body);
  BOOST_TEST(later.header("idempotent-replayed").empty());
  BOOST_TEST(later.json().at("data").at("task_id") != first.json().at("data").at("task_id"));
  BOOST_TEST(keys_of(account) == 1);  // the expired row made way for the new one
  BOOST_TEST(tasks_of(account) == 2);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 88);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_worker_forgets_keys_past_their_24_hours) {
  server_process server;
  const auto account = make_account("idem-purge", 100);
  const auto client = server.client();
  BOOST_TEST(create_with_key(client, account, fox, "old").status == 200);
  BOOST_TEST(create_with_key(client, account, fox, "new").status == 200);
  cluster().psql(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old' AND "
      "account_id = " +
      std::to_string(account.id));
  worker_process worker(env_map{{"GESSO_WORKER_RESCUE_MS", "200"}});
  for (int i = 0; i < 100 && keys_of(account) != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::ifstream log_file(worker.log_path());
  const std::string log(std::istreambuf_iterator<char>(log_file), {});
  BOOST_TEST(cluster().psql("SELECT key FROM idempotency_keys WHERE account_id = " +
                            std::to_string(account.id)) == "new\n");
  // Every round of upkeep ran whole (a statement missing from the prepared set once failed each round
  // before it reached the media retention sweep).
  BOOST_TEST(log.find("housekeeping_failed") == std::string::npos, log);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_keys_are_refused_before_anything_is_written) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("idem-bad", 100);
  struct bad {
    std::string name;
    std::string header_lines;  // raw, so that empty, repeated and non-ASCII values reach the server as sent
    std::string message;
  };
  const bad cases[] = {
      {"empty", "Idempotency-Key: \r\n", "1 to 255 characters"},
      {"too long", "Idempotency-Key: " + std::string(256, 'k') + "\r\n",
       "1 to 255 characters long (it is 256)"},
      {"non-ASCII", "Idempotency-Key: caf\xc3\xa9\r\n", "printable ASCII"},
      // Control characters are not allowed in any header value (RFC 9110 §5.5): the parser refuses them.
      {"control character",
       "Idempotency-Key: a\x01"
       "b\r\n",
       "malformed HTTP request"},
      {"DEL", "Idempotency-Key: a\x7f\r\n", "malformed HTTP request"},
      {"sent twice", "Idempotency-Key: one\r\nIdempotency-Key: one\r\n", "more than once"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const std::string reply =
          client.raw("POST /api/v1/tasks/create HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + account.key +
                     "\r\nContent-Type: application/json\r\n" + c.header_lines +
                     "Content-Length: " + std::to_string(fox.size()) + "\r\nConnection: close\r\n\r\n" + fox);
      BOOST_TEST(reply.starts_with("HTTP/1.1 400"), reply);
      BOOST_TEST(reply.find(c.message) != std::string::npos, reply);
    }
  }
  // 255 printable characters, spaces and punctuation included, are a key.
  std::string longest(255, 'x');
  longest.replace(0, 12, "a b~!@#$%^&*");
  BOOST_TEST(create_with_key(client, account, fox, longest).status == 200);
  BOOST_TEST(tasks_of(account) == 1);
  BOOST_TEST(keys_of(account) == 1);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 94);
  // A bad body with a good key writes no key: the same key then works with a good body.
  BOOST_TEST(create_with_key(client, account, R"({"model_id":"vendor4-2"})", "fresh").status == 400);
  const auto poor = make_account("idem-poor", 1);
  BOOST_TEST(create_with_key(client, poor, fox, "fresh").status == 402);
  BOOST_TEST(keys_of(poor) == 0);
  BOOST_TEST(create_with_key(client, account, fox, "fresh").header("idempotent-replayed").empty());
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
