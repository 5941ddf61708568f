// The task-api engine against a second, real Gesso as the upstream: forwarding, polling without a
// worker slot, copying outputs, refunds when the upstream fails, errs, stalls or never finishes, and a
// worker crash after submit that resumes polling instead of submitting twice.

#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string upstream_catalog = R"({"models":{
  "vendor1-flash": {"task_type":"video","price":20,"duration_seconds":5},
  "vendor4-2": {"task_type":"image","price":6},
  "always-fails": {"task_type":"image","price":7,"engine_settings":{"failure_rate":1}},
  "slow": {"task_type":"image","price":5,"engine_settings":{"latency_ms":1500}},
  "forever": {"task_type":"image","price":3,"engine_settings":{"latency_ms":3600000}}
}})";

// Another Gesso, with its own database and media, where the downstream Gesso has an account.
struct upstream_gesso {
  env_map env;
  std::string key;
  std::unique_ptr<server_process> server;
  std::unique_ptr<worker_process> worker;

  upstream_gesso() {
    static const bool created = [] {
      cluster().psql("CREATE DATABASE upstream");
      return true;
    }();
    static_cast<void>(created);
    std::string url = cluster().url();
    url.replace(url.find("dbname=postgres"), 15, "dbname=upstream");
    env = {{"GESSO_DATABASE_URL", url},
           {"GESSO_MEDIA_DIR", shared_env().at("GESSO_MEDIA_DIR") + "-upstream"},
           {"GESSO_CATALOG", temporary_file(upstream_catalog, ".json")}};
    BOOST_REQUIRE(run_command(GESSO_CLI_BIN, {"migrate"}, env).exit_code == 0);
    const auto account = run_command(
        GESSO_CLI_BIN, {"account", "create", "--name", "downstream", "--credits", "1000", "--json"}, env);
    BOOST_REQUIRE_MESSAGE(account.exit_code == 0, account.err);
    key = std::string(json::parse(account.out).at("api_key").as_string());
    server = std::make_unique<server_process>(env);
    worker = std::make_unique<worker_process>(env);
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(server->port()); }

  std::string sql(const std::string& query) const { return cluster().psql(query, "upstream"); }
};

// The downstream catalog: remote models in front of the upstream and of two broken upstreams.
std::string downstream_catalog(const upstream_gesso& up, const test_http_server& broken) {
  auto remote = [&](const std::string& upstream_model, const std::string& base, const std::string& extra) {
    return R"({"task_type":")" + std::string(upstream_model == "vendor1-flash" ? "video" : "image") +
           R"(","price":10)" + extra + R"(,"engine":"task-api","engine_settings":{"base_url":")" + base +
           R"(","api_key":")" + up.key + R"(","model_id":")" + upstream_model +
           R"(","poll_interval_ms":100,"request_timeout_ms":300}})";
  };
  return R"({"models":{"remote-image":)" + remote("vendor4-2", up.base(), "") + R"(,"remote-video":)" +
         remote("vendor1-flash", up.base(), "") + R"(,"remote-fails":)" +
         remote("always-fails", up.base(), "") + R"(,"remote-slow":)" + remote("slow", up.base(), "") +
         R"(,"remote-forever":)" + remote("forever", up.base(), R"(,"deadline_seconds":3)") +
         R"(,"remote-503":)" + remote("vendor4-2", broken.url(""), R"(,"max_attempts":2)") +
         R"(,"remote-silent":)" + remote("vendor4-2", broken.url("/silent"), R"(,"max_attempts":2)") + "}}";
}

struct remote_fixture {
  upstream_gesso up;
  test_http_server broken;
  env_map env;
  std::unique_ptr<server_process> server;
  test_account account;

  remote_fixture() {
    broken.route("/api/v1/tasks/create",
                 {.status = 503, .body = R"({"code":0,"msg":"overloaded","data":null})"});
    broken.route("/silent/api/v1/tasks/create", {.status = 200, .body = "{}", .delay = 2000ms});
    env = {{"GESSO_CATALOG", temporary_file(downstream_catalog(up, broken), ".json")},
           {"GESSO_WORKER_RESCUE_MS", "200"}};
    server = std::make_unique<server_process>(env);
    account = make_account("remote", 1000);
  }

  std::string create(const std::string& model) {
    const auto reply =
        server->client().create(account.key, R"({"model_id":")" + model + R"(","prompt":"far away"})");
    BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return std::string(reply.json().at("data").at("task_id").as_string());
  }

  json::object details(const std::string& id) {
    return json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(remote_engine, remote_fixture)

BOOST_AUTO_TEST_CASE(forwards_polls_and_copies_outputs) {
  worker_process worker(env);
  const std::string image = create("remote-image");
  const std::string video = create("remote-video");
  const auto client = server->client();
  const auto done_image = poll_until_final(client, account.key, image);
  BOOST_TEST(done_image.statuses.back() == 3);
  const std::string image_url(done_image.data.at("image_url").as_string());
  BOOST_TEST(image_url.find(":" + std::to_string(server->port()) + "/media/") != std::string::npos);  // ours
  BOOST_TEST((png_size(fetch(image_url).body) == std::pair<int, int>{512, 512}));
  const auto done_video = poll_until_final(client, account.key, video);
  BOOST_TEST(done_video.statuses.back() == 3);
  const auto probe =
      ffprobe(temporary_file(fetch(std::string(done_video.data.at("video_url").as_string())).body, ".mp4"));
  BOOST_TEST(probe.at("streams").as_array().size() == 2U);
  BOOST_TEST(!done_video.data.at("audio_url").is_null());
  // The upstream charged Gesso's account once per task.
  BOOST_TEST(up.sql("SELECT count(*), sum(credits) FROM tasks") == "2|26\n");
  BOOST_TEST(details(image).at("provider_job").is_string());
  BOOST_TEST(details(image).at("attempts").as_int64() == 1);  // polls are not attempts
  BOOST_TEST(worker.stop() == 0);
}

BOOST_AUTO_TEST_CASE(upstream_failures_errors_stalls_and_timeouts_are_refunded) {
  worker_process worker(env);
  const std::string fails = create("remote-fails");
  const std::string overloaded = create("remote-503");
  const std::string silent = create("remote-silent");
  const std::string forever = create("remote-forever");
  const auto client = server->client();
  for (const auto& [id, reason] :
       {std::pair{fails, "the upstream task failed"}, std::pair{overloaded, "unavailable (HTTP 503)"},
        std::pair{silent, "did not answer"}, std::pair{forever, "deadline"}}) {
    BOOST_TEST_CONTEXT(reason) {
      BOOST_TEST(poll_until_final(client, account.key, id, 30s).statuses.back() == 4);
      BOOST_TEST(std::string(details(id).at("error").as_string()).find(reason) != std::string::npos,
                 details(id).at("error").as_string());
    }
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 1000);
  BOOST_TEST(shown.at("refunded").as_int64() == 40);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(broken.requests() >= 4);  // two attempts each for the 503 and the silent upstream
  BOOST_TEST(worker.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_crash_after_submit_resumes_polling_without_submitting_again) {
  auto doomed = std::make_unique<worker_process>(env);
  const std::string id = create("remote-slow");
  for (int i = 0; i < 250 && !details(id).at("provider_job").is_string(); ++i) {
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST_REQUIRE(details(id).at("provider_job").is_string());
  doomed->kill();
  doomed.reset();
  worker_process survivor(env);
  BOOST_TEST(poll_until_final(server->client(), account.key, id).statuses.back() == 3);
  BOOST_TEST(up.sql("SELECT count(*) FROM tasks WHERE model_id = 'slow'") == "1\n");  // submitted once
  BOOST_TEST(survivor.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
