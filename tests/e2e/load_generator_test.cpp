// gesso-load, tested as operators run it: its open-loop pacing against the bare Beast server, a whole
// journey run against a real server and worker whose end check passes, and end checks that fail when
// tasks never finish or when the ledger disagrees with what the answers said.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <sstream>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// Small models, so a journey takes well under a second per task even under the sanitizers.
const std::string load_catalog = R"({"models":{
  "load-image": {"task_type":"image","price":6,"engine_settings":{"long_side":64}},
  "load-video": {"task_type":"video","price":9,"duration_seconds":1,"engine_settings":{"long_side":64,"fps":4}},
  "load-fails": {"task_type":"image","price":3,"engine_settings":{"failure_rate":1}}
}})";

env_map with_catalog() {
  static const std::string path = temporary_file(load_catalog, ".json");
  return env_map{{"GESSO_CATALOG", path}};
}

json::object read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str()).as_object();
}

// A gesso-bare-server on a free port, stopped with SIGTERM.
class bare_server {
 public:
  bare_server() : process_(GESSO_BARE_SERVER_BIN, {}, {}) {
    const std::string line = process_.read_line(10s);
    port_ = line.substr(line.rfind(':') + 1);
  }
  ~bare_server() {
    process_.send_signal(SIGTERM);
    process_.wait(10s);
  }
  std::string url() const { return "http://127.0.0.1:" + port_; }

 private:
  child_process process_;
  std::string port_;
};

command_result run_load(const std::vector<std::string>& args) {
  return run_command(GESSO_LOAD_BIN, args, {});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(load_generator)

BOOST_AUTO_TEST_CASE(open_loop_pacing_holds_the_requested_rate_second_by_second) {
  bare_server bare;
  const std::string keys = temporary_file("sk-pacing-key\n", ".keys");
  const std::string report = temporary_file("", ".json");
  const auto r = run_load({"--target", bare.url(), "--keys", keys, "--scenario", "query", "--rate", "500",
                           "--duration", "4", "--connections", "32", "--json", report, "--quiet"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out << r.err);
  const json::object o = read_json(report);
  BOOST_TEST(o.at("arrivals").to_number<std::uint64_t>() == 2000U);
  const json::object& query = o.at("requests").at("query").as_object();
  BOOST_TEST(query.at("count").to_number<std::uint64_t>() == 2000U);
  BOOST_TEST(query.at("ok").to_number<std::uint64_t>() == 2000U);
  // Arrivals are counted when actually sent, per wall-clock second: a pacer that bunched them up or
  // fell behind would show it here.
  const json::array& timeline = o.at("timeline").as_array();
  BOOST_TEST_REQUIRE(timeline.size() >= 4U);
  for (std::size_t second = 0; second < 4; ++second) {
    const auto arrivals = static_cast<double>(timeline[second].at("arrivals").to_number<std::uint64_t>());
    BOOST_TEST(arrivals >= 500 * 0.95, "second " << second << ": " << arrivals << " arrivals");
    BOOST_TEST(arrivals <= 500 * 1.05, "second " << second << ": " << arrivals << " arrivals");
  }
  BOOST_TEST(o.at("elapsed_s").as_double() < 4.0 + 1.0);
}

BOOST_AUTO_TEST_CASE(closed_loop_clients_send_back_to_back) {
  bare_server bare;
  const std::string keys = temporary_file("sk-closed-key\n", ".keys");
  const std::string report = temporary_file("", ".json");
  const auto r = run_load({"--target", bare.url(), "--keys", keys, "--mode", "closed", "--connections", "4",
                           "--scenario", "create", "--duration", "1", "--json", report, "--quiet"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out << r.err);
  const json::object o = read_json(report);
  const json::object& create = o.at("requests").at("create").as_object();
  BOOST_TEST(create.at("count").to_number<std::uint64_t>() == o.at("arrivals").to_number<std::uint64_t>());
  BOOST_TEST(create.at("count").to_number<std::uint64_t>() >
             100U);  // a bare server answers far faster than 100/s
  BOOST_TEST(o.at("connections_opened").as_int64() == 4);
  BOOST_TEST(r.out.find("end check passed") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(a_journey_run_against_the_service_passes_its_end_check) {
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const std::string report = temporary_file("", ".json");
  const std::string timeline = temporary_file("", ".tsv");
  const auto r = run_load({"--target",        "http://127.0.0.1:" + std::to_string(server.port()),
                           "--accounts",      "3",
                           "--database-url",  cluster().url(),
                           "--rate",          "8",
                           "--duration",      "2",
                           "--poll-interval", "100",
                           "--models",        "load-image:1,load-video:1,load-fails:2",
                           "--settle",        "60",
                           "--json",          report,
                           "--timeline",      timeline,
                           "--quiet"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out << r.err);
  const json::object o = read_json(report);
  const json::object& check = o.at("end_check").as_object();
  BOOST_TEST(check.at("passed").as_bool());
  BOOST_TEST(check.at("created").to_number<std::uint64_t>() == 16U);
  BOOST_TEST(check.at("not_final").to_number<std::uint64_t>() == 0U);
  BOOST_TEST(check.at("ledger_checked").as_bool());
  BOOST_TEST(check.at("ledger_charged").as_int64() == check.at("credits_charged").as_int64());
  BOOST_TEST(check.at("ledger_refunded").as_int64() == check.at("credits_refunded").as_int64());
  // Half the mix always fails: 16 tasks without one failure is a chance of 1 in 65,536 (with a weight of
  // one in four it was 1 in 100, and it happened once).
  BOOST_TEST(check.at("failed").to_number<std::uint64_t>() > 0U);
  BOOST_TEST(check.at("credits_refunded").as_int64() == 3 * check.at("failed").as_int64());
  const json::object& requests = o.at("requests").as_object();
  BOOST_TEST(requests.at("download").at("ok").to_number<std::uint64_t>() ==
             check.at("succeeded").to_number<std::uint64_t>());
  BOOST_TEST(o.at("task_end_to_end").at("count").to_number<std::uint64_t>() == 16U);
  BOOST_TEST(o.at("task_end_to_end").at("p99_ms").as_double() >=
             o.at("task_end_to_end").at("p50_ms").as_double());
  BOOST_TEST(r.out.find("end check passed") != std::string::npos, r.out);
  std::ifstream tsv(timeline);
  std::string header;
  std::getline(tsv, header);
  BOOST_TEST(header.rfind("# second\tarrivals\tcreate_done", 0) == 0U, header);
}

BOOST_AUTO_TEST_CASE(the_end_check_fails_when_tasks_never_become_final) {
  server_process server(with_catalog());  // and no worker
  const std::string report = temporary_file("", ".json");
  const auto r =
      run_load({"--target", "http://127.0.0.1:" + std::to_string(server.port()), "--accounts", "1",
                "--database-url", cluster().url(), "--scenario", "create", "--rate", "5", "--duration", "1",
                "--models", "load-image", "--settle", "1", "--json", report, "--quiet"});
  BOOST_TEST(r.exit_code == 1, r.out << r.err);
  const json::object o = read_json(report);
  const json::object& check = o.at("end_check").as_object();
  BOOST_TEST(!check.at("passed").as_bool());
  BOOST_TEST(check.at("not_final").to_number<std::uint64_t>() == 5U);
  BOOST_TEST(r.out.find("5 tasks were not final") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(the_end_check_catches_a_ledger_that_disagrees_with_the_answers) {
  // A fault planted in the database: every refund is recorded one credit short.
  cluster().psql(R"sql(
CREATE FUNCTION short_refund() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.amount := NEW.amount - 1; RETURN NEW; END $$;
CREATE TRIGGER short_refund BEFORE INSERT ON ledger FOR EACH ROW WHEN (NEW.kind = 'refund')
EXECUTE FUNCTION short_refund();)sql");
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const std::string report = temporary_file("", ".json");
  const auto r = run_load({"--target", "http://127.0.0.1:" + std::to_string(server.port()), "--accounts", "1",
                           "--database-url", cluster().url(), "--rate", "4", "--duration", "1",
                           "--poll-interval", "100", "--models", "load-fails", "--json", report, "--quiet"});
  cluster().psql("DROP TRIGGER short_refund ON ledger; DROP FUNCTION short_refund();");
  BOOST_TEST(r.exit_code == 1, r.out << r.err);
  const json::object o = read_json(report);
  const json::object& check = o.at("end_check").as_object();
  BOOST_TEST(!check.at("passed").as_bool());
  BOOST_TEST(check.at("failed").to_number<std::uint64_t>() == 4U);
  BOOST_TEST(check.at("ledger_refunded").as_int64() == 4 * 2);
  BOOST_TEST(r.out.find("1 refunds of 2 credits") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("END CHECK FAILED") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(bad_options_exit_2_naming_the_problem) {
  const auto r = run_load({"--keys", "k", "--rate", "lots"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("--rate wants a number, not \"lots\"") != std::string::npos, r.err);
  const auto unreachable = run_load({"--keys", "/nonexistent/keys"});
  BOOST_TEST(unreachable.exit_code == 2);
  BOOST_TEST(unreachable.err.find("cannot read --keys /nonexistent/keys") != std::string::npos,
             unreachable.err);
}

BOOST_AUTO_TEST_SUITE_END()
