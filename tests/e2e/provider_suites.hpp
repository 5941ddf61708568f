#pragma once
// What the provider suites share (providers, provider_faults, provider_routing): a catalog of models on
// every provider engine, pointed at a gesso-fake-providers the fixture starts, the keys the worker
// needs, and helpers. The fake follows ../shared/PROVIDERS.md, not the adapters.

#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <memory>
#include <string>
#include <thread>

namespace gesso::testing::provider_suites {
namespace json = boost::json;
using namespace std::chrono_literals;

inline json::value route(const std::string& engine, const std::string& base_url, json::object extra = {},
                         int priority = 1) {
  extra["base_url"] = base_url;
  extra["poll_interval_ms"] = 100;
  return json::object{{"engine", engine}, {"priority", priority}, {"settings", std::move(extra)}};
}

inline json::object model(const char* type, int price, json::array routes, json::object extra = {}) {
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

inline std::string provider_catalog(const std::string& fake) {
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
                                route("fal", fake + "/fal", fal_image, 2)})},
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
      {"circuit-image", model("image", 3,
                              {route("openai-images", fake + "/openai", {{"api_key_env", "FAKE_OPENAI_KEY"}}),
                               route("fal", fake + "/fal", fal_image, 2)})},
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

inline const env_map provider_keys{{"FAKE_OPENAI_KEY", "sk-fake-openai"},
                                   {"FAKE_REPLICATE_KEY", "r8_fake"},
                                   {"FAKE_FAL_KEY", "fake-id:fake-secret"},
                                   {"FAKE_GEMINI_KEY", "AIza-fake"},
                                   {"FAKE_ARK_KEY", "ark-fake"},
                                   {"FAKE_KLING_ACCESS", "kling-access"},
                                   {"FAKE_KLING_SECRET", "kling-secret"},
                                   {"FAKE_KLING_WRONG", "not-the-secret"},
                                   {"FAKE_MINIMAX_KEY", "mm-fake"},
                                   {"FAKE_RUNWAY_KEY", "key_fake"}};

struct providers_fixture {
  fake_providers_process fake;
  env_map env;
  std::unique_ptr<server_process> server;
  std::unique_ptr<worker_process> worker;
  test_account account;

  explicit providers_fixture(std::string (*catalog)(const std::string& fake) = provider_catalog) {
    env = provider_keys;
    env["GESSO_CATALOG"] = temporary_file(catalog(fake.url()), ".json");
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

  struct failure_case {
    std::string model_id;
    std::string prompt;
    std::string kind;
    std::string message = {};  ///< a part of the task's error
  };

  /// Creates every case's task, then checks each ends at 4 with its kind (and message), and that the
  /// account got back exactly what they were charged: refunded once each, balance whole.
  void expect_failures(const std::vector<failure_case>& cases) {
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
        BOOST_TEST(std::string(task.at("error").as_string()).find(cases[i].message) != std::string::npos,
                   json::serialize(task));
        charged += task.at("credits").as_int64();
        // What the client sees: the same kind, a message without the fakes' loopback addresses or ports.
        const auto queried = server->client().query(account.key, ids[i]);
        const json::value answer = queried.json();
        const json::object& data = answer.at("data").as_object();
        BOOST_TEST(data.at("error").at("kind").as_string() == cases[i].kind, queried.body);
        const std::string message(data.at("error").at("message").as_string());
        BOOST_TEST(!message.empty());
        BOOST_TEST(message.find("127.0.0.1") == std::string::npos, message);
        BOOST_TEST(message.find("localhost") == std::string::npos, message);
        BOOST_TEST(data.at("finished_at").as_int64() >= data.at("created_at").as_int64());
      }
    }
    const json::object shown = account_show(account.id);
    BOOST_TEST(shown.at("balance").as_int64() == 10'000);
    BOOST_TEST(shown.at("refunded").as_int64() == charged);
    BOOST_TEST(shown.at("consistent").as_bool());
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
inline std::string input_png() {
  return "data:image/png;base64,"
         "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5"
         "ErkJggg==";
}

}  // namespace gesso::testing::provider_suites
