// Credits: charged exactly once at create, never below zero, and always equal to the ledger.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

using namespace gesso::testing;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(credits)

BOOST_AUTO_TEST_CASE(concurrent_creates_never_overdraw) {
  server_process server(env_map{{"GESSO_LOG_LEVEL", "warn"}});
  const auto client = server.client();
  constexpr int affordable = 10;
  constexpr int attempts = 64;
  const auto account = make_account("race", 60 * affordable);  // vendor1-pro costs 60
  std::atomic<int> ok{0};
  std::atomic<int> refused{0};
  std::atomic<int> other{0};
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (int i = 0; i < attempts; ++i) {
    threads.emplace_back([&] {
      while (!go) {
        std::this_thread::yield();
      }
      const auto r = client.create(account.key, R"({"model_id":"vendor1-pro","prompt":"race"})");
      (r.status == 200 ? ok : r.status == 402 ? refused : other)++;
    });
  }
  go = true;
  for (auto& t : threads) {
    t.join();
  }
  BOOST_TEST(ok.load() == affordable);
  BOOST_TEST(refused.load() == attempts - affordable);
  BOOST_TEST(other.load() == 0);
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 0);
  BOOST_TEST(shown.at("ledger_balance").as_int64() == 0);
  BOOST_TEST(shown.at("charged").as_int64() == 60 * affordable);
  BOOST_TEST(shown.at("tasks").at("queued").as_int64() == affordable);
  const std::string charges = cluster().psql(
      "SELECT count(*), count(DISTINCT task_id) FROM ledger WHERE kind = 'charge' AND account_id = " +
      std::to_string(account.id));
  BOOST_TEST(charges == "10|10\n");
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(insufficient_credits_write_nothing) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("poor", 5);
  const auto r = client.create(account.key, R"({"model_id":"vendor1-pro","prompt":"too expensive"})");
  BOOST_TEST(r.status == 402);
  BOOST_TEST(r.json().at("code").as_int64() == 0);
  BOOST_TEST(std::string(r.json().at("msg").as_string()).find("insufficient credits") != std::string::npos);
  auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 5);
  BOOST_TEST(shown.at("charged").as_int64() == 0);
  BOOST_TEST(shown.at("tasks").at("queued").as_int64() == 0);

  // A grant is a ledger row; afterwards the same create succeeds and the books still balance.
  const auto granted =
      gesso_cli({"credits", "grant", "--account", std::to_string(account.id), "--amount", "55"});
  BOOST_TEST(granted.exit_code == 0, granted.err);
  BOOST_TEST(client.create(account.key, R"({"model_id":"vendor1-pro","prompt":"now"})").status == 200);
  shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 0);
  BOOST_TEST(shown.at("granted").as_int64() == 60);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(gesso_cli({"ledger", "check"}).exit_code == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(ledger_is_append_only) {
  const auto account = make_account("append-only", 10);
  BOOST_CHECK_THROW(
      cluster().psql("UPDATE ledger SET amount = 0 WHERE account_id = " + std::to_string(account.id)),
      std::runtime_error);
  BOOST_CHECK_THROW(cluster().psql("DELETE FROM ledger WHERE account_id = " + std::to_string(account.id)),
                    std::runtime_error);
  BOOST_CHECK_THROW(
      cluster().psql("UPDATE accounts SET balance = -1 WHERE id = " + std::to_string(account.id)),
      std::runtime_error);
  BOOST_TEST(account_show(account.id).at("consistent").as_bool());
}

BOOST_AUTO_TEST_CASE(ledger_check_reports_a_tampered_balance) {
  const auto account = make_account("tampered", 10);
  cluster().psql("UPDATE accounts SET balance = 11 WHERE id = " + std::to_string(account.id));
  const auto check = gesso_cli({"ledger", "check", "--json"});
  BOOST_TEST(check.exit_code == 1);
  BOOST_TEST(check.out.find("\"account_id\":" + std::to_string(account.id)) != std::string::npos);
  cluster().psql("UPDATE accounts SET balance = 10 WHERE id = " + std::to_string(account.id));
  BOOST_TEST(gesso_cli({"ledger", "check"}).exit_code == 0);
}

BOOST_AUTO_TEST_SUITE_END()
