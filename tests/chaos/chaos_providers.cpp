// gesso-chaos --providers: models that run on gesso-fake-providers (docs/fake-providers.md), which the
// chaos kill -9s and restarts on the same port (every job and output it held is forgotten, as a
// self-hosted provider forgets its queue) and throws into 429 storms, beside the usual faults.

#include "tests/chaos/chaos.hpp"

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <thread>

namespace gesso::chaos {
namespace json = boost::json;
using namespace std::chrono_literals;

fake_provider::fake_provider()
    : process_(std::make_unique<gesso::testing::fake_providers_process>()), url_(process_->url()) {}

fake_provider::~fake_provider() = default;

void fake_provider::restart(std::chrono::milliseconds down_for) {
  process_->kill();
  std::this_thread::sleep_for(down_for);
  process_ = std::make_unique<gesso::testing::fake_providers_process>(url_.substr(url_.rfind('/') + 1));
}

void fake_provider::storm(int seconds) {
  const auto reply = client().request("POST", "/faults/storm?seconds=" + std::to_string(seconds));
  if (reply.status != 200) {
    throw std::runtime_error("the fake refused a storm: " + reply.body);
  }
}

int fake_provider::storm_refusals() {
  const json::value stats = client().request("GET", "/stats").json();
  return static_cast<int>(stats.at("storm_refusals").as_int64());
}

gesso::testing::http_client fake_provider::client() const {
  return {"127.0.0.1", static_cast<std::uint16_t>(std::stoi(url_.substr(url_.rfind(':') + 1))), 5s};
}

const std::map<std::string, std::string>& fake_provider::keys() {
  static const std::map<std::string, std::string> keys{{"CHAOS_OPENAI_KEY", "sk-chaos"},
                                                       {"CHAOS_REPLICATE_KEY", "r8_chaos"},
                                                       {"CHAOS_FAL_KEY", "chaos-id:chaos-secret"}};
  return keys;
}

namespace {

json::object route(const std::string& engine, const std::string& base_url, json::object settings,
                   int priority = 1) {
  settings["base_url"] = base_url;
  settings["poll_interval_ms"] = 250;
  settings["request_timeout_ms"] = 5000;
  return json::object{{"engine", engine}, {"priority", priority}, {"settings", std::move(settings)}};
}

json::object model(const char* type, int price, json::array routes) {
  json::object m{{"task_type", type},       {"price", price},    {"routes", std::move(routes)},
                 {"deadline_seconds", 120}, {"max_attempts", 6}, {"max_input_images", 0}};
  if (std::string_view(type) == "video") {
    m["duration_seconds"] = 5;
  }
  return m;
}

}  // namespace

json::object fake_provider::models() const {
  const json::object openai{{"api_key_env", "CHAOS_OPENAI_KEY"}, {"model", "gpt-image-1"}};
  const json::object replicate{{"api_key_env", "CHAOS_REPLICATE_KEY"},
                               {"model", "black-forest-labs/flux-schnell"}};
  const json::object fal{{"api_key_env", "CHAOS_FAL_KEY"}, {"model", "fal-ai/flux/dev"}};
  const json::object fal_video{{"api_key_env", "CHAOS_FAL_KEY"},
                               {"model", "fal-ai/kling-video/v2.1/standard/image-to-video"}};
  return {
      // Synchronous OpenAI Images first, the fal queue when it is unavailable.
      {"chaos-openai",
       model("image", 8,
             {route("openai-images", url_ + "/openai", openai), route("fal", url_ + "/fal", fal, 2)})},
      {"chaos-replicate", model("image", 6, {route("replicate", url_ + "/replicate", replicate)})},
      {"chaos-sdcpp", model("image", 4, {route("sdcpp", url_ + "/sdcpp", {{"long_side", 256}})})},
      {"chaos-fal-video", model("video", 20, {route("fal", url_ + "/fal", fal_video)})},
  };
}

std::pair<std::string, std::string> pick_provider_model(std::mt19937& rng) {
  const int roll = static_cast<int>(rng() % 100);
  if (roll < 20) {
    return {"chaos-image", ""};
  }
  if (roll < 45) {
    return {"chaos-openai", ""};
  }
  if (roll < 70) {
    return {"chaos-replicate", ""};
  }
  if (roll < 80) {
    return {"chaos-sdcpp", ""};
  }
  if (roll < 90) {
    return {"chaos-fal-video", ""};
  }
  if (roll < 95) {
    return {"chaos-replicate", " [fake:policy]"};  // a safety rejection: failed, refunded
  }
  return {"chaos-openai", " [fake:500x3@openai]"};  // the primary errs: the fal route serves
}

}  // namespace gesso::chaos
