// Database trouble: an outage answers 503 within the connect timeout and the server recovers by itself.

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

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(database_outage)

BOOST_AUTO_TEST_CASE(outage_answers_503_then_recovers_without_restart) {
  server_process server(env_map{{"GESSO_LOG_LEVEL", "warn"}});
  const auto client = server.client();
  const auto account = make_account("outage", 1000);
  const auto before = client.create(account.key, good_body);
  BOOST_TEST_REQUIRE(before.status == 200);
  const std::string task_id(before.json().at("data").at("task_id").as_string());

  for (const std::string mode : {"fast", "immediate"}) {
    BOOST_TEST_CONTEXT("shutdown mode " << mode) {
      cluster().stop(mode);
      for (int i = 0; i < 3; ++i) {
        const auto started = std::chrono::steady_clock::now();
        const auto create = client.create(account.key, good_body);
        const auto query = client.query(account.key, task_id);
        BOOST_TEST(seconds_since(started) < 10.0);
        BOOST_TEST(create.status == 503, create.body);
        BOOST_TEST(query.status == 503, query.body);
        BOOST_TEST(create.header("retry-after") == "1");
        BOOST_TEST(create.json().at("code").as_int64() == 0);
      }
      // Not ready while the database is away; alive all the same (nothing should restart it).
      const auto readiness = client.request("GET", "/readyz");
      BOOST_TEST(readiness.status == 503);
      BOOST_TEST(readiness.json().at("status") == "database unavailable");
      BOOST_TEST(client.request("GET", "/healthz").status == 200);
      cluster().start();
      int recovered_after = -1;
      for (int i = 0; i < 50 && recovered_after < 0; ++i) {
        if (client.query(account.key, task_id).status == 200) {
          recovered_after = i;
        } else {
          std::this_thread::sleep_for(100ms);
        }
      }
      BOOST_TEST(recovered_after >= 0);
      BOOST_TEST(client.create(account.key, good_body).status == 200);
      BOOST_TEST(client.request("GET", "/readyz").status == 200);
    }
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(shown.at("balance").as_int64() == 1000 - 3 * 6);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
