#include "server/engines/providers/adapters.hpp"

#include "server/engines/providers/http_task_spec.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view openai_images_settings[] = {"quality", "moderation", "output_format", "sizes"};
constexpr std::string_view replicate_settings[] = {"input", "prefer_wait_s", "image_field",
                                                   "pass_image_urls"};
constexpr std::string_view fal_settings[] = {"input", "image_field", "pass_image_urls"};
constexpr std::string_view sdcpp_settings[] = {"long_side", "sample_steps", "seed"};
constexpr std::string_view openai_videos_settings[] = {"sizes"};
constexpr std::string_view gemini_veo_settings[] = {"resolution", "person_generation"};
constexpr std::string_view ark_settings[] = {"long_side", "resolution", "watermark"};
constexpr std::string_view kling_settings[] = {"secret_key_env", "mode"};
constexpr std::string_view http_task_settings[] = {
    "auth",   "headers",       "create", "poll", "result",         "output", "progress",
    "errors", "download_auth", "cancel", "maps", "retry_statuses", "cost"};
constexpr std::string_view comfyui_settings[] = {"workflow",  "prompt_node", "size_node",
                                                 "seed_node", "image_nodes", "long_side"};

const adapter_kind kinds[] = {
    // A synchronous image call can take a minute or more: the timeout leaves room for it.
    {"openai-images", "https://api.openai.com", true, "gpt-image-1", false, 180s, openai_images_settings,
     "Authorization", "Bearer ", make_openai_images},
    {"replicate", "https://api.replicate.com", true, "", true, 60s, replicate_settings, "Authorization",
     "Bearer ", make_replicate},
    {"fal", "https://queue.fal.run", true, "", true, 60s, fal_settings, "Authorization", "Key ", make_fal},
    {"sdcpp", "", false, "", false, 60s, sdcpp_settings, "Authorization", "Bearer ", make_sdcpp},
    {"openai-videos", "https://api.openai.com", true, "sora-2", false, 60s, openai_videos_settings,
     "Authorization", "Bearer ", make_openai_videos},
    {"gemini-veo", "https://generativelanguage.googleapis.com", true, "", true, 60s, gemini_veo_settings,
     "x-goog-api-key", "", make_gemini_veo},
    {"ark", "https://ark.cn-beijing.volces.com", true, "", true, 180s, ark_settings, "Authorization",
     "Bearer ", make_ark},
    // The access key is api_key_env; each request carries a JWT signed with the secret (secret_key_env).
    {"kling", "https://api-singapore.klingai.com", true, "kling-v1-6", false, 60s, kling_settings, "", "",
     make_kling},
    // Self-hosted: base_url is required; a key (for a proxy in front) is optional.
    {"comfyui", "", false, "", false, 60s, comfyui_settings, "Authorization", "Bearer ", make_comfyui},
    // Any provider, described in the catalog: base_url is required, auth comes from its settings.
    {"http-task", "", false, "", false, 60s, http_task_settings, "", "", make_http_task,
     http_task::static_auth_headers},
};

[[noreturn]] void bad_setting(std::string_view name, const std::string& why) {
  throw std::invalid_argument("settings." + std::string(name) + " " + why);
}

}  // namespace

const adapter_kind* find_adapter_kind(std::string_view engine) {
  for (const adapter_kind& k : kinds) {
    if (k.engine == engine) {
      return &k;
    }
  }
  return nullptr;
}

std::string adapter_engine_names() {
  std::string out;
  for (const adapter_kind& k : kinds) {
    out += (out.empty() ? "" : ", ") + std::string(k.engine);
  }
  return out;
}

std::string text_setting(const route_settings& s, std::string_view name, std::string fallback) {
  const json::value* v = s.extra.if_contains(name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_string() || v->as_string().empty()) {
    bad_setting(name, "must be a non-empty string");
  }
  return std::string(v->as_string());
}

std::int64_t number_setting(const route_settings& s, std::string_view name, std::int64_t lo, std::int64_t hi,
                            std::int64_t fallback) {
  const json::value* v = s.extra.if_contains(name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_int64() || v->as_int64() < lo || v->as_int64() > hi) {
    bad_setting(name, "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v->as_int64();
}

bool flag_setting(const route_settings& s, std::string_view name, bool fallback) {
  const json::value* v = s.extra.if_contains(name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_bool()) {
    bad_setting(name, "must be true or false");
  }
  return v->as_bool();
}

void check_input_count(const model_spec& model, std::size_t most, std::string_view sender,
                       std::string_view how) {
  if (model.max_input_images > most) {
    throw std::invalid_argument("max_input_images " + std::to_string(model.max_input_images) +
                                " is more than " + std::string(sender) + " sends (" + std::to_string(most) +
                                (how.empty() ? "" : ", " + std::string(how)) + "): set the model's " +
                                "\"max_input_images\" to " + std::to_string(most) + " or less");
  }
}

json::object object_setting(const route_settings& s, std::string_view name, std::string_view what) {
  const json::value* v = s.extra.if_contains(name);
  if (v == nullptr) {
    return {};
  }
  if (!v->is_object()) {
    bad_setting(name, "must be an object of " + std::string(what));
  }
  return v->as_object();
}

std::pair<int, int> size_for_ratio(std::string_view ratio, int long_side, int multiple) {
  const auto colon = ratio.find(':');
  const double w = std::stod(std::string(ratio.substr(0, colon)));
  const double h = std::stod(std::string(ratio.substr(colon + 1)));
  const double scale = long_side / std::max(w, h);
  auto round_to = [multiple](double v) {
    return std::max(multiple, static_cast<int>(std::lround(v / multiple)) * multiple);
  };
  return {round_to(w * scale), round_to(h * scale)};
}

}  // namespace gesso::engines
