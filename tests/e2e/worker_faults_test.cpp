// Workers that fail, crash (kill -9) or drain (SIGTERM) lose nothing; their metrics.

#include "core/base64.hpp"
#include "core/catalog.hpp"
#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
#include "tests/e2e/worker_suites.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::worker_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(worker_faults)

BOOST_AUTO_TEST_CASE(sigterm_gives_back_tasks_it_has_not_started) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("give-back", 100);
  auto first = std::make_unique<worker_process>(with_catalog());
  const std::string id = create_task(client, account.key, "slow");  // 1.5 s of simulated latency
  for (int i = 0; i < 100 && account_show(account.id).at("tasks").at("running").as_int64() < 1; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(first->stop() == 0);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 1s));  // did not wait out the latency
  first.reset();
  const auto details = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
  BOOST_TEST(details.at("attempts").as_int64() == 0);  // the attempt was given back
  BOOST_TEST(details.at("lease_token").is_null());
  worker_process second(with_catalog());
  BOOST_TEST(poll_until_final(client, account.key, id).statuses.back() == 3);
  BOOST_TEST(second.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_killed_worker_loses_nothing) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("crash", 100);
  std::vector<std::string> ids;
  auto doomed = std::make_unique<worker_process>(with_catalog({{"GESSO_WORKER_LEASE_MS", "1000"}}));
  for (int i = 0; i < 6; ++i) {
    ids.push_back(create_task(client, account.key, "slow", "slow task " + std::to_string(i)));
  }
  // Wait until the doomed worker holds every task, then kill it mid-render.
  for (int i = 0; i < 200; ++i) {
    if (account_show(account.id).at("tasks").at("running").as_int64() == 6) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST_REQUIRE(account_show(account.id).at("tasks").at("running").as_int64() == 6);
  doomed->kill();
  doomed.reset();
  worker_process rescuer(with_catalog());
  for (const auto& id : ids) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(result.statuses.back() == 3);
    BOOST_TEST(never_goes_back(result.statuses));
    const auto details = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
    BOOST_TEST(details.at("attempts").as_int64() == 2);  // once by the dead worker, once by the rescuer
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("charged").as_int64() == 30);  // each task charged once
  BOOST_TEST(shown.at("refunded").as_int64() == 0);  // none refunded: they all succeeded
  BOOST_TEST(shown.at("balance").as_int64() == 70);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(rescuer.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_database_outage_pauses_workers_and_loses_nothing) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("outage-worker", 100);
  worker_process worker(with_catalog());
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(create_task(client, account.key, "slow", "outage task " + std::to_string(i)));
  }
  for (int i = 0; i < 200 && account_show(account.id).at("tasks").at("running").as_int64() < 4; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  // The renders finish while the database is away: finalizing waits for it, claiming pauses.
  cluster().stop("immediate");
  std::this_thread::sleep_for(2500ms);
  cluster().start();
  for (int i = 0; i < 100 && client.request("GET", "/readyz").status != 200; ++i) {
    std::this_thread::sleep_for(100ms);  // the server finds its old connections broken and reconnects
  }
  for (const auto& id : ids) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(result.statuses.back() == 3);
  }
  // Claiming resumed by itself.
  const auto after = poll_until_final(client, account.key, create_task(client, account.key, "vendor4-2"));
  BOOST_TEST(after.statuses.back() == 3);
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("charged").as_int64() == 4 * 5 + 6);  // each task charged once
  BOOST_TEST(shown.at("refunded").as_int64() == 0);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(worker.stop() == 0);  // it never exited on its own
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(worker_probes_follow_the_claim_loop_and_the_database) {
  worker_process worker(
      with_catalog({{"GESSO_WORKER_LISTEN", "127.0.0.1:0"}, {"GESSO_WORKER_POLL_MS", "200"}}));
  BOOST_TEST_REQUIRE(worker.probe_port() != 0);
  const http_client probes("127.0.0.1", worker.probe_port(), 5s);
  auto status_of = [&](const std::string& path) { return probes.request("GET", path).status; };
  auto wait_for = [&](const std::string& path, int expected) {
    for (int i = 0; i < 100 && status_of(path) != expected; ++i) {
      std::this_thread::sleep_for(100ms);
    }
    return status_of(path);
  };
  BOOST_TEST(status_of("/healthz") == 200);
  BOOST_TEST(wait_for("/readyz", 200) == 200);
  cluster().stop("fast");
  BOOST_TEST(wait_for("/readyz", 503) == 503);  // the next claim could not reach the database
  BOOST_TEST(probes.request("GET", "/readyz").json().at("status") == "database unavailable");
  BOOST_TEST(status_of("/healthz") == 200);  // alive all the same: nothing should restart it
  cluster().start();
  BOOST_TEST(wait_for("/readyz", 200) == 200);
  BOOST_TEST(probes.request("POST", "/healthz", "x").status == 405);
  BOOST_TEST(status_of("/metrics-or-anything") == 404);
  BOOST_TEST(worker.stop() == 0);
}

BOOST_AUTO_TEST_CASE(servers_and_workers_export_metrics) {
  server_process server(with_catalog({{"GESSO_ADMIN_LISTEN", "127.0.0.1:0"}}));
  worker_process worker(
      with_catalog({{"GESSO_WORKER_LISTEN", "127.0.0.1:0"}, {"GESSO_WORKER_RESCUE_MS", "200"}}));
  const auto client = server.client();
  const auto account = make_account("metrics", 100);
  const std::string ok = create_task(client, account.key, "vendor4-2");
  const std::string bad = create_task(client, account.key, "always-fails");
  BOOST_TEST(poll_until_final(client, account.key, ok).statuses.back() == 3);
  BOOST_TEST(poll_until_final(client, account.key, bad).statuses.back() == 4);
  BOOST_TEST(client.query(account.key, "task_" + std::string(32, 'z')).status == 404);
  std::this_thread::sleep_for(500ms);  // a housekeeping pass samples the queue

  // Metrics are served on the admin listener only: the public port does not know the path.
  BOOST_TEST(client.request("GET", "/metrics").status == 404);
  const auto scraped = http_client("127.0.0.1", server.admin_port(), 5s).request("GET", "/metrics");
  BOOST_TEST(scraped.status == 200);
  BOOST_TEST(scraped.header("content-type").find("text/plain; version=0.0.4") == 0);
  for (const std::string line : {
           "gesso_http_requests_total{route=\"create\",status=\"200\"} 2",
           "gesso_http_requests_total{route=\"query\",status=\"404\"} 1",
           "gesso_tasks_created_total{model=\"vendor4-2\"} 1",
           "gesso_tasks_created_total{model=\"always-fails\"} 1",
           "gesso_credits_charged_total{model=\"always-fails\"} 7",
           "gesso_http_request_duration_seconds_count{route=\"create\"} 2",
           "# TYPE gesso_db_pool_in_use gauge",
           "gesso_db_pool_threads 16",
       }) {
    BOOST_TEST(scraped.body.find(line + "\n") != std::string::npos, line << " in\n" << scraped.body);
  }
  const http_client probes("127.0.0.1", worker.probe_port(), 5s);
  const auto from_worker = probes.request("GET", "/metrics");
  BOOST_TEST(from_worker.status == 200);
  for (const std::string line : {
           "gesso_tasks_claimed_total{model=\"vendor4-2\"} 1",
           "gesso_tasks_finished_total{model=\"vendor4-2\",outcome=\"succeeded\"} 1",
           "gesso_tasks_finished_total{model=\"always-fails\",outcome=\"failed\"} 1",
           "gesso_tasks_refunded_total{model=\"always-fails\"} 1",
           "gesso_engine_duration_seconds_count{model=\"vendor4-2\"} 1",
           "gesso_tasks_held 0",
           "gesso_queue_due_tasks 0",
           "gesso_remote_tasks_in_flight 0",
       }) {
    BOOST_TEST(from_worker.body.find(line + "\n") != std::string::npos, line << " in\n" << from_worker.body);
  }
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(sigterm_finishes_tasks_being_rendered_then_exits_zero) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("drain-worker", 100);
  worker_process worker(with_catalog());
  const std::string a = create_task(client, account.key, "heavy");
  const std::string b = create_task(client, account.key, "heavy");
  for (int i = 0; i < 200 && account_show(account.id).at("tasks").at("running").as_int64() < 2; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  BOOST_TEST(worker.stop() == 0);  // waits for both renders and their finalization
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("tasks").at("succeeded").as_int64() == 2);
  BOOST_TEST(shown.at("tasks").at("running").as_int64() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
