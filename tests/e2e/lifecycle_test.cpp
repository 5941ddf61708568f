// Process lifecycle: SIGTERM drains and exits 0, and a saturated database pool answers 503 at once.

#include "tests/support/gesso_env.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <future>
#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {
const std::string good_body = R"({"model_id":"vendor4-2","prompt":"a cat"})";

// Holds an exclusive lock on accounts for `hold`, so that creates wait on the database.
std::future<void> lock_accounts_for(std::chrono::milliseconds hold) {
  auto f = std::async(std::launch::async, [hold] {
    cluster().psql(
        "SET application_name = 'gesso-test-lock'; BEGIN; LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE; "
        "SELECT pg_sleep(" +
        std::to_string(static_cast<double>(hold.count()) / 1000.0) + "); COMMIT;");
  });
  // Returns once psql holds the lock: a fixed sleep is not enough on a loaded machine.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (cluster().psql(
             "SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid) "
             "WHERE application_name = 'gesso-test-lock' AND mode = 'AccessExclusiveLock' AND granted") !=
         "1\n") {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("psql did not take the lock on accounts within 30 s");
    }
    std::this_thread::sleep_for(20ms);
  }
  return f;
}

// Returns once the server runs a request's database work (the create waiting for the lock).
void wait_until_the_database_is_busy(const server_process& server) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  const http_client admin("127.0.0.1", server.admin_port());
  while (admin.request("GET", "/metrics").body.find("\ngesso_db_pool_in_use 1\n") == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("no request reached the database within 30 s");
    }
    std::this_thread::sleep_for(20ms);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(sigterm_closes_idle_connections_and_exits_zero) {
  server_process server;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket idle(ioc);
  idle.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(server.stop() == 0);
  BOOST_TEST(seconds_since(started) < 5.0);  // the idle keep-alive connection did not hold it up
}

BOOST_AUTO_TEST_CASE(sigterm_finishes_in_flight_requests) {
  server_process server(env_map{{"GESSO_ADMIN_LISTEN", "127.0.0.1:0"}});
  const auto account = make_account("drain", 100);
  auto lock = lock_accounts_for(1500ms);
  auto in_flight =
      std::async(std::launch::async, [&] { return server.client().create(account.key, good_body); });
  wait_until_the_database_is_busy(server);
  const int status = server.stop();  // SIGTERM while it waits
  const auto reply = in_flight.get();
  lock.get();
  BOOST_TEST(reply.status == 200, reply.body);
  BOOST_TEST(reply.header("connection") == "close");
  BOOST_TEST(status == 0);
}

BOOST_AUTO_TEST_CASE(sigterm_fails_readiness_first_and_stops_accepting_after_the_grace) {
  server_process server(env_map{{"GESSO_DRAIN_GRACE_MS", "1500"}});
  const auto client = server.client();
  const auto account = make_account("grace", 100);
  const auto ready = client.request("GET", "/readyz");
  BOOST_TEST(ready.status == 200);
  BOOST_TEST(ready.json().at("status") == "ready");
  const auto started = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  std::this_thread::sleep_for(200ms);
  // In the grace: not ready, still alive, still serving — and every answer closes its connection.
  const auto not_ready = client.request("GET", "/readyz");
  BOOST_TEST(not_ready.status == 503);
  BOOST_TEST(not_ready.json().at("status") == "draining");
  BOOST_TEST(client.request("GET", "/healthz").status == 200);
  const auto created = client.create(account.key, good_body);
  BOOST_TEST(created.status == 200, created.body);
  BOOST_TEST(created.header("connection") == "close");
  BOOST_TEST(seconds_since(started) < 1.5);
  // After it: no longer accepting, and the process exits 0.
  BOOST_TEST(server.wait_for_exit() == 0);
  BOOST_TEST(seconds_since(started) >= 1.5);
  BOOST_CHECK_THROW(client.request("GET", "/healthz"), std::exception);
}

BOOST_AUTO_TEST_CASE(a_second_signal_cuts_the_grace_short) {
  server_process server(env_map{{"GESSO_DRAIN_GRACE_MS", "60000"}});
  const auto started = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  std::this_thread::sleep_for(200ms);
  BOOST_TEST(server.client().request("GET", "/readyz").status == 503);
  server.signal(SIGTERM);
  BOOST_TEST(server.wait_for_exit() == 0);
  BOOST_TEST(seconds_since(started) < 10.0);
}

BOOST_AUTO_TEST_CASE(a_saturated_database_pool_answers_503_at_once) {
  server_process server(env_map{
      {"GESSO_DB_POOL_SIZE", "1"}, {"GESSO_DB_QUEUE_LIMIT", "0"}, {"GESSO_ADMIN_LISTEN", "127.0.0.1:0"}});
  const auto account = make_account("saturate", 100);
  auto lock = lock_accounts_for(2000ms);
  auto blocked =
      std::async(std::launch::async, [&] { return server.client().create(account.key, good_body); });
  wait_until_the_database_is_busy(server);
  const auto started = std::chrono::steady_clock::now();
  const auto refused = server.client().create(account.key, good_body);
  BOOST_TEST(seconds_since(started) < 0.5);
  BOOST_TEST(refused.status == 503);
  BOOST_TEST(refused.header("retry-after") == "1");
  BOOST_TEST(refused.json().at("code").as_int64() == 0);
  lock.get();
  BOOST_TEST(blocked.get().status == 200);
  BOOST_TEST(server.client().create(account.key, good_body).status == 200);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 100 - 2 * 6);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_configuration_is_refused_with_one_line) {
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"GESSO_LISTEN", "nonsense"},
                                                        {"GESSO_DB_POOL_SIZE", "0"},
                                                        {"GESSO_DATABASE_URL", ""},
                                                        {"GESSO_CATALOG", "/nonexistent/catalog.json"},
                                                        {"GESSO_LISTN", "x"}}) {
    env_map env{{"GESSO_DATABASE_URL", cluster().url()}, {"GESSO_LISTEN", "127.0.0.1:0"}};
    env[name] = value;
    const auto r = run_command(GESSO_SERVER_BIN, {}, env);
    BOOST_TEST(r.exit_code == 2, name);
    BOOST_TEST(r.err.find("gesso-server: ") == 0U, r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  }
}

BOOST_AUTO_TEST_SUITE_END()
