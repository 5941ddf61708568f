// The provider engines against gesso-fake-providers (written from ../shared/PROVIDERS.md, started here on
// loopback): every engine turns a task into media copied into Gesso's store; every failure kind ends
// at 4, refunded once, with the right kind; 429s are waited out; a dead primary fails over; a catalog
// whose key variable is missing refuses to start the worker with one line naming the model and field.

#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <thread>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

json::value route(const std::string& engine, const std::string& base_url, json::object extra = {}) {
  extra["base_url"] = base_url;
  extra["poll_interval_ms"] = 100;
  return json::object{{"engine", engine}, {"settings", std::move(extra)}};
}

json::object model(const char* type, int price, json::array routes, json::object extra = {}) {
  extra["task_type"] = type;
  extra["price"] = price;
  extra["routes"] = std::move(routes);
  if (!extra.contains("max_input_images")) {
    extra["max_input_images"] = 1;  // what most routes can send
  }
  if (!extra.contains("max_attempts")) {
    extra["max_attempts"] = 5;
  }
  if (std::string_view(type) == "image" && !extra.contains("aspect_ratios")) {
    extra["aspect_ratios"] = json::array{"1:1", "16:9", "9:16"};
    extra["default_aspect_ratio"] = "1:1";
  }
  return extra;
}

std::string provider_catalog(const std::string& fake) {
  const json::object openai{{"api_key_env", "FAKE_OPENAI_KEY"}, {"model", "gpt-image-1"}};
  const json::object replicate{{"api_key_env", "FAKE_REPLICATE_KEY"},
                               {"model", "black-forest-labs/flux-schnell"}};
  const json::object fal_image{{"api_key_env", "FAKE_FAL_KEY"}, {"model", "fal-ai/flux/dev"}};
  const json::object fal_video{{"api_key_env", "FAKE_FAL_KEY"},
                               {"model", "fal-ai/kling-video/v2.1/standard/image-to-video"}};
  json::object models{
      {"openai-image",
       model("image", 8, {route("openai-images", fake + "/openai", openai)}, {{"max_input_images", 2}})},
      {"replicate-image",
       model("image", 6, {route("replicate", fake + "/replicate", replicate)}, {{"max_input_images", 1}})},
      {"replicate-version",
       model("image", 6,
             {route("replicate", fake + "/replicate",
                    {{"api_key_env", "FAKE_REPLICATE_KEY"},
                     {"model",
                      "owner/model:5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa"}})})},
      {"fal-image", model("image", 7, {route("fal", fake + "/fal", fal_image)}, {{"max_input_images", 1}})},
      {"fal-video", model("video", 20, {route("fal", fake + "/fal", fal_video)}, {{"duration_seconds", 5}})},
      {"sdcpp-image", model("image", 4, {route("sdcpp", fake + "/sdcpp", {{"long_side", 512}})})},
      {"sdcpp-video", model("video", 12, {route("sdcpp", fake + "/sdcpp")}, {{"duration_seconds", 1}})},
      // The primary answers nothing (nobody listens on port 1): the secondary serves.
      {"failover-image", model("image", 9,
                               {json::object{{"engine", "openai-images"},
                                             {"priority", 1},
                                             {"settings",
                                              {{"base_url", "http://127.0.0.1:1"},
                                               {"api_key_env", "FAKE_OPENAI_KEY"},
                                               {"request_timeout_ms", 500}}}},
                                json::object{{"engine", "fal"},
                                             {"priority", 2},
                                             {"settings",
                                              {{"base_url", fake + "/fal"},
                                               {"api_key_env", "FAKE_FAL_KEY"},
                                               {"model", "fal-ai/flux/dev"},
                                               {"poll_interval_ms", 100}}}}})},
      {"openai-video",
       model("video", 15, {route("openai-videos", fake + "/openai", {{"api_key_env", "FAKE_OPENAI_KEY"}})},
             {{"duration_seconds", 4}})},
      {"veo-video",
       model("video", 30,
             {route("gemini-veo", fake + "/gemini",
                    {{"api_key_env", "FAKE_GEMINI_KEY"}, {"model", "veo-3.1-generate-preview"}})},
             {{"duration_seconds", 8}})},
      {"ark-video",
       model("video", 18,
             {route("ark", fake + "/ark",
                    {{"api_key_env", "FAKE_ARK_KEY"}, {"model", "doubao-seedance-1-0-pro-250528"}})},
             {{"duration_seconds", 5}})},
      {"ark-image",
       model("image", 5,
             {route("ark", fake + "/ark",
                    {{"api_key_env", "FAKE_ARK_KEY"}, {"model", "doubao-seedream-4-0-250828"}})})},
      {"kling-video",
       model("video", 25,
             {route("kling", fake + "/kling",
                    {{"api_key_env", "FAKE_KLING_ACCESS"}, {"secret_key_env", "FAKE_KLING_SECRET"}})},
             {{"duration_seconds", 5}, {"aspect_ratios", json::array{"16:9", "9:16", "1:1"}}})},
      // Signed with the wrong secret: Kling answers 401 (code 1004) every time.
      {"kling-wrong-secret",
       model("video", 25,
             {route("kling", fake + "/kling",
                    {{"api_key_env", "FAKE_KLING_ACCESS"}, {"secret_key_env", "FAKE_KLING_WRONG"}})},
             {{"duration_seconds", 5}})},
      {"comfy-image",
       model("image", 2,
             {route("comfyui", fake + "/comfyui",
                    {{"workflow", std::string(GESSO_SOURCE_DIR) + "/deploy/comfyui/text-to-image.json"},
                     {"prompt_node", "6"},
                     {"size_node", "5"},
                     {"seed_node", "3"},
                     {"long_side", 512}})},
             {{"max_input_images", 0}})},
      {"comfy-edit",
       model("image", 2,
             {route("comfyui", fake + "/comfyui",
                    {{"workflow", std::string(GESSO_SOURCE_DIR) + "/deploy/comfyui/image-to-image.json"},
                     {"prompt_node", "6"},
                     {"image_nodes", json::array{"10"}},
                     {"seed_node", "3"}})})},
      // At most two in flight at the provider, across every worker.
      {"capped-image", model("image", 1,
                             {route("fal", fake + "/fal",
                                    {{"api_key_env", "FAKE_FAL_KEY"},
                                     {"model", "fal-ai/flux/schnell"},
                                     {"max_concurrency", 2}})})},
      // A primary that errs five times and then recovers, before a working secondary.
      {"circuit-image",
       model(
           "image", 3,
           {json::object{{"engine", "openai-images"},
                         {"priority", 1},
                         {"settings", {{"base_url", fake + "/openai"}, {"api_key_env", "FAKE_OPENAI_KEY"}}}},
            json::object{{"engine", "fal"},
                         {"priority", 2},
                         {"settings",
                          {{"base_url", fake + "/fal"},
                           {"api_key_env", "FAKE_FAL_KEY"},
                           {"model", "fal-ai/flux/dev"},
                           {"poll_interval_ms", 100}}}}})},
      // A provider that never finishes within the deadline: the task fails, and the job is cancelled there.
      {"slow-fal",
       model("image", 2,
             {route("fal", fake + "/fal", {{"api_key_env", "FAKE_FAL_KEY"}, {"model", "fal-ai/flux/dev"}})},
             {{"deadline_seconds", 3}})},
      // A route of its own: its failures open only its own circuit.
      {"flaky-image", model("image", 3, {route("replicate", fake + "/replicate", replicate)})},
      // Output URLs that expire before they are copied: the task ends at its deadline, refunded.
      {"expiring-image",
       model("image", 5, {route("replicate", fake + "/replicate", replicate)}, {{"deadline_seconds", 4}})},
  };
  return json::serialize(json::object{{"models", std::move(models)}});
}

const env_map provider_keys{{"FAKE_OPENAI_KEY", "sk-fake-openai"},
                            {"FAKE_REPLICATE_KEY", "r8_fake"},
                            {"FAKE_FAL_KEY", "fake-id:fake-secret"},
                            {"FAKE_GEMINI_KEY", "AIza-fake"},
                            {"FAKE_ARK_KEY", "ark-fake"},
                            {"FAKE_KLING_ACCESS", "kling-access"},
                            {"FAKE_KLING_SECRET", "kling-secret"},
                            {"FAKE_KLING_WRONG", "not-the-secret"}};

struct providers_fixture {
  fake_providers_process fake;
  env_map env;
  std::unique_ptr<server_process> server;
  std::unique_ptr<worker_process> worker;
  test_account account;

  providers_fixture() {
    env = provider_keys;
    env["GESSO_CATALOG"] = temporary_file(provider_catalog(fake.url()), ".json");
    env["GESSO_WORKER_RESCUE_MS"] = "200";
    server = std::make_unique<server_process>(env);
    worker = std::make_unique<worker_process>(env);
    account = make_account("providers", 10'000);
  }

  std::string create(const std::string& model_id, const std::string& prompt, const std::string& extra = "") {
    const auto reply = server->client().create(
        account.key, R"({"model_id":")" + model_id + R"(","prompt":")" + prompt + "\"" + extra + "}");
    BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return std::string(reply.json().at("data").at("task_id").as_string());
  }

  json::object details(const std::string& id) {
    return json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
  }

  poll_result finish(const std::string& id) {
    try {
      return poll_until_final(server->client(), account.key, id, 60s);
    } catch (const std::exception&) {
      BOOST_TEST_MESSAGE("unfinished: " << json::serialize(details(id)));
      throw;
    }
  }
};

// A small real PNG as a data: URL, for the input image tests.
std::string input_png() {
  return "data:image/png;base64,"
         "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5"
         "ErkJggg==";
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(providers, providers_fixture)

BOOST_AUTO_TEST_CASE(every_engine_turns_a_task_into_media_copied_into_gesso) {
  const std::string images = R"(,"image_urls":[")" + input_png() + R"("])";
  const std::map<std::string, std::string> image_tasks{
      {"openai-image", create("openai-image", "a lighthouse", R"(,"aspect_ratio":"16:9")")},
      {"openai-edit", create("openai-image", "the same, at dusk", images)},
      {"replicate-image", create("replicate-image", "a fox", R"(,"aspect_ratio":"9:16")" + images)},
      {"replicate-version", create("replicate-version", "a heron")},
      {"fal-image", create("fal-image", "a harbour", R"(,"aspect_ratio":"16:9")")},
      {"sdcpp-image", create("sdcpp-image", "a teapot", R"(,"aspect_ratio":"9:16")")},
      {"ark-image", create("ark-image", "a kite", R"(,"aspect_ratio":"16:9")" + images)},
      {"comfy-image", create("comfy-image", "a lantern", R"(,"aspect_ratio":"16:9")")},
      {"comfy-edit", create("comfy-edit", "the lantern, lit", images)},
  };
  for (const auto& [name, id] : image_tasks) {
    BOOST_TEST_CONTEXT(name) {
      const poll_result done = finish(id);
      BOOST_TEST_REQUIRE(done.statuses.back() == 3, json::serialize(details(id)));
      const std::string url(done.data.at("image_url").as_string());
      BOOST_TEST(url.find(":" + std::to_string(server->port()) + "/media/") != std::string::npos);  // ours
      const auto [w, h] = png_size(fetch(url).body);
      BOOST_TEST(w > 0);
      static const std::map<std::string, std::string> asked{
          {"openai-image", "16:9"}, {"fal-image", "16:9"},       {"ark-image", "16:9"},
          {"comfy-image", "16:9"},  {"replicate-image", "9:16"}, {"sdcpp-image", "9:16"}};
      const std::string ratio = asked.contains(name) ? asked.at(name) : "1:1";
      BOOST_TEST((ratio == "16:9" ? w > h : ratio == "9:16" ? w < h : w == h), w << "x" << h);
      BOOST_TEST(details(id).at("provider_job").is_string());  // the route, upstream model and job
    }
  }
  for (const std::string model_id :
       {"fal-video", "sdcpp-video", "openai-video", "veo-video", "ark-video", "kling-video", "kling-text"}) {
    BOOST_TEST_CONTEXT(model_id) {
      const bool with_image = model_id != "sdcpp-video" && model_id != "kling-text";
      const std::string id =
          create(model_id == "kling-text" ? "kling-video" : model_id, "waves", with_image ? images : "");
      const poll_result done = finish(id);
      BOOST_TEST_REQUIRE(done.statuses.back() == 3, json::serialize(details(id)));
      const auto probe =
          ffprobe(temporary_file(fetch(std::string(done.data.at("video_url").as_string())).body, ".mp4"));
      BOOST_TEST(std::string(probe.at("streams").as_array()[0].at("codec_name").as_string()) == "h264");
    }
  }
}

BOOST_AUTO_TEST_CASE(each_failure_ends_at_4_refunded_once_with_its_kind) {
  struct expected {
    std::string model_id;
    std::string prompt;
    std::string kind;
  };
  const std::vector<expected> cases{
      {"openai-image", "[fake:policy] a riot", "content_policy"},
      {"openai-image", "[fake:invalid] long", "invalid_input"},
      {"replicate-image", "[fake:policy] gore", "content_policy"},
      {"replicate-image", "[fake:fail] oom", "provider_unavailable"},
      {"replicate-image", "[fake:invalid] odd ratio", "invalid_input"},
      {"fal-image", "[fake:policy] nsfw", "content_policy"},
      {"fal-image", "[fake:invalid] too long", "invalid_input"},
      {"fal-image", "[fake:fail] runner", "provider_unavailable"},
      {"sdcpp-image", "[fake:fail] empty", "provider_unavailable"},
      {"sdcpp-image", "[fake:invalid] steps", "invalid_input"},
      {"openai-image", "[fake:video] wrong type", "internal"},
      {"flaky-image", "[fake:malformed] garbage", "provider_unavailable"},
      {"expiring-image", "[fake:expire] gone", "deadline"},
      {"openai-video", "[fake:policy] a fight", "content_policy"},
      {"openai-video", "[fake:fail] broken", "provider_unavailable"},
      {"veo-video", "[fake:policy] filtered", "content_policy"},
      {"veo-video", "[fake:fail] internal", "provider_unavailable"},
      {"veo-video", "[fake:invalid] duration", "invalid_input"},
      {"ark-video", "[fake:policy] sensitive", "content_policy"},
      {"ark-video", "[fake:fail] internal", "provider_unavailable"},
      {"ark-image", "[fake:policy] sensitive", "content_policy"},
      {"kling-video", "[fake:policy] security", "content_policy"},
      {"kling-video", "[fake:fail] broken", "provider_unavailable"},
      {"kling-video", "[fake:invalid] cfg", "invalid_input"},
      {"kling-wrong-secret", "signed badly", "provider_unavailable"},
      {"comfy-image", "[fake:fail] oom", "provider_unavailable"},
      {"comfy-image", "[fake:policy] nsfw", "content_policy"},
  };
  std::vector<std::string> ids;
  for (const auto& c : cases) {
    ids.push_back(create(c.model_id, c.prompt));
  }
  std::int64_t charged = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    BOOST_TEST_CONTEXT(cases[i].model_id << ": " << cases[i].prompt) {
      BOOST_TEST(finish(ids[i]).statuses.back() == 4);
      const json::object task = details(ids[i]);
      BOOST_TEST(task.at("error_kind").as_string() == cases[i].kind, json::serialize(task));
      charged += task.at("credits").as_int64();
    }
  }
  const json::object shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 10'000);
  BOOST_TEST(shown.at("refunded").as_int64() == charged);
  BOOST_TEST(shown.at("consistent").as_bool());
}

BOOST_AUTO_TEST_CASE(rate_limits_and_dropped_connections_are_waited_out) {
  const auto started = std::chrono::steady_clock::now();
  const std::string limited = create("fal-image", "[fake:429x2] patience");
  const std::string dropped = create("sdcpp-image", "[fake:drop] again");
  const std::string erring = create("replicate-image", "[fake:500] flaky");
  for (const std::string& id : {limited, dropped, erring}) {
    BOOST_TEST(finish(id).statuses.back() == 3, json::serialize(details(id)));
  }
  // Two 429s with Retry-After: 1 cost at least two seconds.
  BOOST_TEST((std::chrono::steady_clock::now() - started >= 2s));
  BOOST_TEST(details(limited).at("attempts").as_int64() == 3, json::serialize(details(limited)));
}

// OpenAI Images is synchronous: the HTTP call is the whole job, and one can take a minute.
BOOST_AUTO_TEST_CASE(a_synchronous_call_of_a_minute_completes) {
  const auto started = std::chrono::steady_clock::now();
  const std::string id = create("openai-image", "[fake:slow=60] patience");
  BOOST_TEST(poll_until_final(server->client(), account.key, id, 150s).statuses.back() == 3,
             json::serialize(details(id)));
  BOOST_TEST((std::chrono::steady_clock::now() - started >= 60s));
  BOOST_TEST(details(id).at("attempts").as_int64() == 1);  // not cut off and retried
}

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

BOOST_AUTO_TEST_CASE(a_task_past_its_deadline_is_cancelled_at_its_provider) {
  const std::string id = create("slow-fal", "[fake:steps=100000] forever");
  BOOST_TEST(finish(id).statuses.back() == 4);
  BOOST_TEST(details(id).at("error_kind").as_string() == "deadline");
  int canceled = 0;
  for (int i = 0; i < 100 && canceled == 0; ++i) {  // the cancel is sent right after the rescue
    const json::value stats = json::parse(fetch(fake.url() + "/stats").body);
    canceled = static_cast<int>(stats.at("fal").at("canceled").as_int64());
    std::this_thread::sleep_for(50ms);
  }
  BOOST_TEST(canceled == 1);
}

BOOST_AUTO_TEST_CASE(a_missing_key_variable_stops_the_worker_with_one_line) {
  env_map without = env;
  without["FAKE_REPLICATE_KEY"] = "";
  const auto started = run_command(GESSO_WORKER_BIN, {}, [&] {
    env_map all = shared_env();
    for (const auto& [k, v] : without) {
      all[k] = v;
    }
    return all;
  }());
  BOOST_TEST(started.exit_code == 2);
  BOOST_TEST(
      started.err.find(": routes[0] (replicate): settings.api_key_env: FAKE_REPLICATE_KEY is not set") !=
          std::string::npos,
      started.err);
  BOOST_TEST(std::count(started.err.begin(), started.err.end(), '\n') == 1);  // one line
}

BOOST_AUTO_TEST_SUITE_END()
