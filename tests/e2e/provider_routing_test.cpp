// Routing between providers: a dead primary fails over within the attempt, a failing primary's circuit
// opens and closes again, and a route's max_concurrency holds across workers.
#include "tests/e2e/provider_suites.hpp"

using namespace gesso::testing;
using namespace gesso::testing::provider_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_FIXTURE_TEST_SUITE(provider_routing, providers_fixture)

BOOST_AUTO_TEST_CASE(a_dead_primary_fails_over_to_the_next_route) {
  worker->stop();  // one worker, with its probes, so its metrics see the task
  env_map probed = env;
  probed["GESSO_WORKER_LISTEN"] = "127.0.0.1:0";
  worker = std::make_unique<worker_process>(probed);
  const std::string id = create("failover-image", "resilience");
  BOOST_TEST_REQUIRE(finish(id).statuses.back() == 3, json::serialize(details(id)));
  const json::value job = json::parse(details(id).at("provider_job").as_string());
  BOOST_TEST(job.at("engine").as_string() == "fal");
  BOOST_TEST(job.at("route").as_int64() == 1);
  const std::string metrics =
      fetch("http://127.0.0.1:" + std::to_string(worker->probe_port()) + "/metrics").body;
  for (
      const std::string line :
      {R"(gesso_provider_requests_total{model="failover-image",route="0",engine="openai-images",outcome="retry"} 1)",
       R"(gesso_provider_requests_total{model="failover-image",route="1",engine="fal",outcome="ok"})",
       R"(gesso_provider_request_duration_seconds_count{model="failover-image",route="1",engine="fal"})",
       R"(gesso_route_circuit_state{model="failover-image",route="0",engine="openai-images"} 0)"}) {
    BOOST_TEST(metrics.find(line) != std::string::npos, line);
  }
}

// The primary's circuit opens after five failures in a row (the route is skipped), lets one probe
// through after 30 s, and closes when the probe succeeds.

// The primary's circuit opens after five failures in a row (the route is skipped), lets one probe
// through after 30 s, and closes when the probe succeeds.
BOOST_AUTO_TEST_CASE(the_circuit_opens_after_five_failures_and_closes_after_a_good_probe) {
  worker->stop();
  env_map probed = env;
  probed["GESSO_WORKER_LISTEN"] = "127.0.0.1:0";
  worker = std::make_unique<worker_process>(probed);
  auto metric = [&](const std::string& series) -> std::string {
    const std::string metrics =
        fetch("http://127.0.0.1:" + std::to_string(worker->probe_port()) + "/metrics").body;
    const auto at = metrics.find(series + " ");
    return at == std::string::npos
               ? ""
               : metrics.substr(at + series.size() + 1, metrics.find('\n', at) - at - series.size() - 1);
  };
  const std::string primary = R"({model="circuit-image",route="0",engine="openai-images")";
  const std::string prompt = "[fake:500x5@openai] the same prompt every time";  // counted per prompt
  for (int i = 0; i < 6; ++i) {
    BOOST_TEST(finish(create("circuit-image", prompt)).statuses.back() == 3);  // the secondary serves
  }
  BOOST_TEST(metric("gesso_provider_requests_total" + primary + R"(,outcome="retry"})") ==
             "5");  // the sixth task skipped the primary
  BOOST_TEST(metric("gesso_route_circuit_state" + primary + "}") == "2");
  std::this_thread::sleep_for(31s);
  const std::string id = create("circuit-image", prompt);
  BOOST_TEST(finish(id).statuses.back() == 3);
  BOOST_TEST(json::parse(details(id).at("provider_job").as_string()).at("route").as_int64() ==
             0);  // the probe
  BOOST_TEST(metric("gesso_route_circuit_state" + primary + "}") == "0");
}

BOOST_AUTO_TEST_CASE(a_cap_of_two_holds_across_two_workers_with_twenty_tasks) {
  worker_process second(env);
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(create("capped-image", "[fake:steps=4] capped " + std::to_string(i)));
  }
  for (const std::string& id : ids) {
    BOOST_TEST(finish(id).statuses.back() == 3, json::serialize(details(id)));
  }
  const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
  BOOST_TEST(stats.at("fal").at("max_in_flight").as_int64() == 2);  // the cap, and reached
  BOOST_TEST(stats.at("fal").at("in_flight").as_int64() == 0);
  BOOST_TEST(cluster().psql("SELECT count(*) FROM route_slots") == "0\n");  // every slot freed
  for (const std::string& id : ids) {
    BOOST_TEST(details(id).at("attempts").as_int64() == 1);  // waiting for a slot spends no attempt
  }
  BOOST_TEST(second.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
