// docs/openapi.yaml against live processes (docs/testing.md#the-openapi-document): the document is valid
// OpenAPI 3.1, the server serves it unchanged, and every example in it is replayed against a real server
// and its answer validated against the schema of its status (tests/openapi/replay.mjs, Ajv); and the
// client examples of docs/examples (curl, Python, TypeScript) run against a real server and worker.

#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace gesso::testing;
namespace json = boost::json;

namespace {

const std::string openapi_dir = std::string(GESSO_SOURCE_DIR) + "/tests/openapi";

void install_npm_packages() {
  const auto installed = run_command(openapi_dir + "/install.sh", {}, {});
  BOOST_TEST_REQUIRE(installed.exit_code == 0, installed.out + installed.err);
}

std::string create(const http_client& client, const test_account& account, const std::string& body) {
  const auto r = client.create(account.key, body);
  BOOST_TEST_REQUIRE(r.status == 200, r.body);
  return std::string(r.json().at("data").at("task_id").as_string());
}

int final_status(const http_client& client, const test_account& account, const std::string& id) {
  return static_cast<int>(poll_until_final(client, account.key, id).data.at("task_status").as_int64());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openapi)

BOOST_AUTO_TEST_CASE(every_example_is_replayed_against_a_live_server_and_fits_its_schema) {
  install_npm_packages();
  server_process server;
  const auto client = server.client();
  const auto caller = make_account("openapi-caller", 100000);
  const auto other = make_account("openapi-other", 100);
  const auto poor = make_account("openapi-poor", 0);
  const auto limited = make_account("openapi-limited", 100);
  BOOST_TEST_REQUIRE(
      gesso_cli({"account", "limits", "--account", std::to_string(limited.id), "--rate", "1", "--burst", "1"})
          .exit_code == 0);

  // The tasks the examples stand for, made final by a worker that then stops: the tasks the replay
  // creates stay queued.
  json::object tasks;
  {
    worker_process worker;
    tasks["succeeded"] = create(client, caller, R"({"model_id":"vendor3-image-2","prompt":"a fox"})");
    tasks["video"] = create(client, caller, R"({"model_id":"vendor1-flash","prompt":"waves"})");
    tasks["failed"] = create(client, caller,
                             R"({"model_id":"vendor4-2","prompt":"a fox","image_urls":["http://127.0.0.1:)" +
                                 std::to_string(server.port()) + R"(/missing.png"]})");
    tasks["other"] = create(client, other, R"({"model_id":"vendor4-2","prompt":"not yours"})");
    BOOST_TEST(final_status(client, caller, std::string(tasks["succeeded"].as_string())) == 3);
    BOOST_TEST(final_status(client, caller, std::string(tasks["video"].as_string())) == 3);
    BOOST_TEST(final_status(client, caller, std::string(tasks["failed"].as_string())) == 4);
    BOOST_TEST(final_status(client, other, std::string(tasks["other"].as_string())) == 3);
    BOOST_TEST(worker.stop() == 0);
  }

  const auto replayed = run_command("/usr/bin/env", {"node", openapi_dir + "/replay.mjs", "replay"},
                                    {{"GESSO_URL", "http://127.0.0.1:" + std::to_string(server.port())},
                                     {"GESSO_KEY", caller.key},
                                     {"GESSO_POOR_KEY", poor.key},
                                     {"GESSO_LIMITED_KEY", limited.key},
                                     {"GESSO_TASKS", json::serialize(tasks)}});
  BOOST_TEST_MESSAGE(replayed.out);
  BOOST_TEST(replayed.exit_code == 0, replayed.err);
  BOOST_TEST(replayed.out.find("replayed against") != std::string::npos, replayed.out);
  // The replay charged nothing twice and wrote nothing for its refusals: the poor account is untouched.
  BOOST_TEST(account_show(poor.id).at("balance").as_int64() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(the_client_examples_run_against_a_live_server) {
  install_npm_packages();
  server_process server;
  worker_process worker;
  const auto account = make_account("openapi-examples", 1000);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const auto dir =
      std::filesystem::temp_directory_path() / ("gesso-examples-" + std::to_string(server.pid()));
  std::filesystem::create_directories(dir);
  for (const std::string example : {"curl", "python", "typescript"}) {
    const std::string out = (dir / (example + ".png")).string();
    const auto ran = run_command(openapi_dir + "/run-example.sh", {example, "a fox drawn by " + example, out},
                                 {{"GESSO_URL", url}, {"GESSO_KEY", account.key}});
    BOOST_TEST_REQUIRE(ran.exit_code == 0, example << ": " << ran.out << ran.err);
    // The example printed the final task, and saved its image.
    const json::value task = json::parse(ran.out);
    BOOST_TEST(task.at("task_status").as_int64() == 3, example);
    BOOST_TEST(ran.err.find("created " + std::string(task.at("task_id").as_string())) != std::string::npos,
               ran.err);
    const json::object probed = ffprobe(out);
    BOOST_TEST(probed.at("format").at("format_name").as_string() == "png_pipe", example << ": " << probed);

    // A refusal is reported with the API's own message, and the example fails.
    const auto refused =
        run_command(openapi_dir + "/run-example.sh", {example, "a fox", out},
                    {{"GESSO_URL", url}, {"GESSO_KEY", "sk-not-a-real-key-000000000000000"}});
    BOOST_TEST(refused.exit_code == 1, example << ": " << refused.out << refused.err);
    BOOST_TEST(refused.err.find("API key") != std::string::npos, example << ": " << refused.err);
  }
  // Three tasks, one charge each: the Idempotency-Key of each example made no second one.
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 1000 - 3 * 8);
  std::filesystem::remove_all(dir);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
