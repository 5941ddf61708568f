// Several servers behind HAProxy (deploy/local/cluster.sh): graceful restarts of two servers while
// gesso-load runs the journey profile (create → poll → download) on hundreds of connections through
// the load balancer. Nothing may fail and no create may go unanswered; the ledger must agree.

#include "tests/support/local_cluster.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <future>
#include <sstream>
#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

json::object read_report(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str()).as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(load_balancer)

BOOST_AUTO_TEST_CASE(graceful_restarts_under_load_fail_and_drop_no_request) {
  local_cluster cluster({.servers = 3, .workers = 2});
  const std::string report = cluster.dir() + "/restart-report.json";
  const std::string database = "host=" + cluster.dir() + " port=5432 user=gesso dbname=postgres";
  // The journey at a rate that keeps every one of 256 connections busy at some point.
  auto load = std::async(std::launch::async, [&] {
    return run_command(GESSO_LOAD_BIN,
                       {"--target",        "http://127.0.0.1:" + std::to_string(cluster.port()),
                        "--scenario",      "journey",
                        "--rate",          "60",
                        "--duration",      "16",
                        "--connections",   "256",
                        "--poll-interval", "100",
                        "--models",        "vendor4-2",
                        "--accounts",      "20",
                        "--database-url",  database,
                        "--settle",        "120",
                        "--timeout",       "30",
                        "--json",          report,
                        "--quiet"},
                       {});
  });
  std::this_thread::sleep_for(4s);
  cluster.run({"restart", "server", "2"});
  cluster.run({"restart", "server", "1"});
  const command_result result = load.get();
  BOOST_TEST_MESSAGE(result.out);
  BOOST_TEST(result.exit_code == 0, result.out << result.err);

  const json::object r = read_report(report);
  BOOST_TEST(r.at("connections_opened").as_int64() >= 200, r.at("connections_opened"));
  const json::object& kinds = r.at("requests").as_object();
  for (const auto& [name, kind] : kinds) {
    const json::object& k = kind.as_object();
    BOOST_TEST(k.at("count").as_int64() == k.at("ok").as_int64(),
               name << ": " << json::serialize(k.at("outcomes")));
    BOOST_TEST_MESSAGE(name << ": " << k.at("count") << " requests, " << k.at("retried") << " retried once");
  }
  const json::object& check = r.at("end_check").as_object();
  BOOST_TEST(check.at("unanswered_creates").as_int64() == 0);
  BOOST_TEST(check.at("ledger_checked").as_bool());
  BOOST_TEST(check.at("not_final").as_int64() == 0);
  BOOST_TEST(check.at("violations").as_array().empty(), json::serialize(check.at("violations")));

  // Every server took part again afterwards: all three are ready.
  const std::string status = cluster.run({"status"});
  for (int n = 1; n <= 3; ++n) {
    const std::string line = "server " + std::to_string(n) +
                             " (127.0.0.1:" + std::to_string(cluster.port() + n) + "): running, ready";
    BOOST_TEST(status.find(line) != std::string::npos, status);
  }
}

BOOST_AUTO_TEST_SUITE_END()
