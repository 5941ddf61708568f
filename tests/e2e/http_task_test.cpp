// The http-task engine against gesso-fake-providers, with the worked configurations of
// deploy/http-task (the ones docs/providers.md shows): Ark Seedance and Kling re-expressed as catalog
// JSON pass the same cases as their built-in adapters; MiniMax Hailuo (three steps: task, file id,
// download URL) and Runway run with no code of their own; answers that do not match a configuration
// fail as internal, naming the route and the pointer; a task past its deadline is cancelled there.
#include "tests/e2e/provider_suites.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gesso::testing;
using namespace gesso::testing::provider_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// A worked configuration from deploy/http-task, pointed at the fake with the test's key variables.
json::object worked(const std::string& name, const std::string& base_url, json::object overrides) {
  std::ifstream in(std::string(GESSO_SOURCE_DIR) + "/deploy/http-task/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  json::object route = json::parse(text.str()).as_object();
  json::object& settings = route.at("settings").as_object();
  settings["base_url"] = base_url;
  settings["poll_interval_ms"] = 100;
  for (auto& [key, value] : overrides) {
    settings[key] = value;
  }
  return route;
}

json::object video(int price, json::object route, json::object extra = {}) {
  extra["max_input_images"] = 1;
  if (!extra.contains("duration_seconds")) {
    extra["duration_seconds"] = 5;
  }
  if (!extra.contains("aspect_ratios")) {
    extra["aspect_ratios"] = json::array{"16:9", "9:16"};
  }
  return model("video", price, {std::move(route)}, std::move(extra));
}

std::string http_task_catalog(const std::string& fake) {
  const json::object kling_keys{{"api_key_env", "FAKE_KLING_ACCESS"},
                                {"auth", {{"type", "jwt-hs256"}, {"secret_key_env", "FAKE_KLING_SECRET"}}}};
  json::object runway_unmapped = worked("runway", fake + "/runway", {{"api_key_env", "FAKE_RUNWAY_KEY"}})
                                     .at("settings")
                                     .as_object()
                                     .at("poll")
                                     .as_object();
  runway_unmapped["status_map"].as_object().erase("RUNNING");
  json::object models{
      {"ark-ht", video(18, worked("ark-seedance", fake + "/ark", {{"api_key_env", "FAKE_ARK_KEY"}}))},
      {"kling-ht", video(25, worked("kling", fake + "/kling", kling_keys))},
      {"kling-ht-wrong",
       video(25, worked("kling", fake + "/kling",
                        {{"api_key_env", "FAKE_KLING_ACCESS"},
                         {"auth", {{"type", "jwt-hs256"}, {"secret_key_env", "FAKE_KLING_WRONG"}}}}))},
      {"minimax",
       video(30, worked("minimax-hailuo", fake + "/minimax", {{"api_key_env", "FAKE_MINIMAX_KEY"}}),
             {{"duration_seconds", 6}})},
      {"runway", video(40, worked("runway", fake + "/runway", {{"api_key_env", "FAKE_RUNWAY_KEY"}}))},
      // Misconfigured on purpose: an output pointer the answers never hold, a status the map forgets.
      {"runway-bad-output",
       video(40, worked("runway", fake + "/runway",
                        {{"api_key_env", "FAKE_RUNWAY_KEY"}, {"output", {{"urls", "/outputs"}}}}))},
      {"runway-unmapped", video(40, worked("runway", fake + "/runway",
                                           {{"api_key_env", "FAKE_RUNWAY_KEY"}, {"poll", runway_unmapped}}))},
      {"runway-slow", video(40, worked("runway", fake + "/runway", {{"api_key_env", "FAKE_RUNWAY_KEY"}}),
                            {{"deadline_seconds", 3}})},
  };
  return json::serialize(json::object{{"models", std::move(models)}});
}

struct http_task_fixture : providers_fixture {
  http_task_fixture() : providers_fixture(http_task_catalog) {}
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(http_task, http_task_fixture)

BOOST_AUTO_TEST_CASE(every_worked_configuration_turns_a_task_into_a_video_copied_into_gesso) {
  const std::string images = R"(,"image_urls":[")" + input_png() + R"("])";
  const std::vector<std::pair<std::string, std::string>> tasks{
      {"ark-ht", images},  {"ark-ht", ""},  {"kling-ht", images}, {"kling-ht", ""},
      {"minimax", images}, {"minimax", ""}, {"runway", images},   {"runway", R"(,"aspect_ratio":"9:16")"},
  };
  std::vector<std::string> ids;
  for (const auto& [model_id, extra] : tasks) {
    ids.push_back(create(model_id, "waves at dawn", extra));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    BOOST_TEST_CONTEXT(tasks[i].first << (tasks[i].second.empty() ? " (text)" : " (image)")) {
      const poll_result done = finish(ids[i]);
      BOOST_TEST_REQUIRE(done.statuses.back() == 3, json::serialize(details(ids[i])));
      const auto probe =
          ffprobe(temporary_file(fetch(std::string(done.data.at("video_url").as_string())).body, ".mp4"));
      BOOST_TEST(std::string(probe.at("streams").as_array()[0].at("codec_name").as_string()) == "h264");
      const json::object job = json::parse(details(ids[i]).at("provider_job").as_string()).as_object();
      BOOST_TEST(job.at("engine").as_string() == "http-task");
      if (tasks[i].first == "ark-ht" || tasks[i].first == "kling-ht") {
        BOOST_TEST(job.contains("cost"));  // usage, final_unit_deduction: as the built-in adapters keep
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(each_failure_ends_at_4_refunded_once_with_its_kind_and_a_clear_message) {
  expect_failures({
      // The built-in ark and kling cases, on their http-task configurations.
      {"ark-ht", "[fake:policy] sensitive", "content_policy", "InputTextSensitiveContentDetected"},
      {"ark-ht", "[fake:fail] internal", "provider_unavailable", "the job failed"},
      {"kling-ht", "[fake:policy] security", "content_policy", "code 1301"},
      {"kling-ht", "[fake:fail] broken", "provider_unavailable", "the job failed: Task failed"},
      {"kling-ht", "[fake:invalid] cfg", "invalid_input", "code 1201"},
      {"kling-ht-wrong", "signed badly", "provider_unavailable", "HTTP 401"},
      {"minimax", "[fake:policy] sensitive", "content_policy", "input new_sensitive (code 1026)"},
      {"minimax", "[fake:invalid] odd", "invalid_input", "code 2013"},
      {"minimax", "[fake:fail] broken", "provider_unavailable", "the job failed"},
      {"minimax", "[fake:malformed] html", "internal", "the create answer is not JSON"},
      {"runway", "[fake:policy] flagged", "content_policy", "SAFETY.INPUT.TEXT"},
      {"runway", "[fake:fail] broken", "provider_unavailable", "An unexpected error occurred"},
      {"runway", "[fake:invalid] seed", "invalid_input", "HTTP 400"},
      {"runway", "[fake:image] wrong type", "internal", ""},
      {"runway-bad-output", "fine", "internal",
       "http-task routes[0]: the poll answer's /outputs is missing (settings.output.urls)"},
      {"runway-unmapped", "fine", "internal",
       "/status is \"RUNNING\", which settings.poll.status_map does not name"},
  });
}

BOOST_AUTO_TEST_CASE(rate_limits_in_an_envelope_or_a_429_are_waited_out) {
  const std::string envelope = create("minimax", "[fake:429] busy");  // HTTP 200, base_resp 1002
  const std::string limited = create("runway", "[fake:429x2] busy");  // HTTP 429, Retry-After: 1
  for (const std::string& id : {envelope, limited}) {
    BOOST_TEST(finish(id).statuses.back() == 3, json::serialize(details(id)));
  }
  BOOST_TEST(details(envelope).at("attempts").as_int64() == 2);
  BOOST_TEST(details(limited).at("attempts").as_int64() == 3);
}

BOOST_AUTO_TEST_CASE(a_task_past_its_deadline_is_cancelled_with_the_configured_request) {
  const std::string id = create("runway-slow", "[fake:steps=100000] forever");
  BOOST_TEST(finish(id).statuses.back() == 4);
  BOOST_TEST(details(id).at("error_kind").as_string() == "deadline");
  int canceled = 0;
  for (int i = 0; i < 100 && canceled == 0; ++i) {
    const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
    canceled = stats.as_object().contains("runway")
                   ? static_cast<int>(stats.at("runway").at("canceled").as_int64())
                   : 0;
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(canceled == 1);
}

// `gesso catalog check FILE` runs the worker's checks offline; `gesso catalog try` runs one real task
// through one route and prints every exchange with the key redacted.
BOOST_AUTO_TEST_CASE(gesso_catalog_checks_a_file_and_tries_one_route) {
  const std::string good = temporary_file(http_task_catalog(fake.url()), ".json");
  env_map keys = provider_keys;
  keys["FAKE_MINIMAX_KEY"] = "mm-secret-0123456789";
  const auto checked = run_command(GESSO_CLI_BIN, {"catalog", "check", good}, keys);
  BOOST_TEST(checked.exit_code == 0, checked.err);
  BOOST_TEST(checked.out.find(": 8 models, 8 routes: ok") != std::string::npos, checked.out);

  json::object broken = json::parse(http_task_catalog(fake.url())).as_object();
  broken["models"]
      .as_object()["minimax"]
      .as_object()["routes"]
      .as_array()[0]
      .as_object()["settings"]
      .as_object()["create"]
      .as_object()["id"] = "task_id";
  const auto refused = run_command(
      GESSO_CLI_BIN, {"catalog", "check", temporary_file(json::serialize(broken), ".json")}, keys);
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(refused.err.find(
                 R"(model "minimax": routes[0] (http-task): settings.create.id is not a JSON Pointer)") == 0U,
             refused.err);

  const auto tried =
      run_command(GESSO_CLI_BIN,
                  {"catalog", "try", "minimax", "--catalog", good, "--prompt", "waves", "--out",
                   std::filesystem::temp_directory_path().string() + "/gesso-try-e2e"},
                  keys);
  BOOST_TEST(tried.exit_code == 0, tried.out << tried.err);
  for (const char* step : {"→ POST ", "/minimax/v1/video_generation",
                           "/v1/query/video_generation?task_id=", "/v1/files/retrieve?file_id=", "← 200",
                           "Authorization: [redacted]", "succeeded: "}) {
    BOOST_TEST(tried.out.find(step) != std::string::npos, step);
  }
  BOOST_TEST(tried.out.find("mm-secret-0123456789") == std::string::npos);  // never printed
  const std::string written = tried.out.substr(tried.out.find("succeeded: ") + 11);
  const auto probe = ffprobe(written.substr(0, written.find('\n')));
  BOOST_TEST(std::string(probe.at("streams").as_array()[0].at("codec_name").as_string()) == "h264");
}

BOOST_AUTO_TEST_SUITE_END()
