// Runway as PROVIDERS.md §9 describes it: Bearer auth and the required X-Runway-Version: 2024-11-06;
// POST /v1/image_to_video {model, promptImage (HTTPS or a data URI), promptText, ratio ("1280:720"),
// duration, seed} and POST /v1/text_to_video answer {"id"}; GET /v1/tasks/{id} answers PENDING (THROTTLED
// under [fake:429]'s load) → RUNNING with progress 0–1 → SUCCEEDED with output[] URLs (valid 24–48 h) |
// FAILED with failure and failureCode (SAFETY.INPUT.TEXT for a safety refusal); DELETE /v1/tasks/{id}
// cancels. Errors are {"error": message}.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <set>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct runway_task {
  std::string status = "PENDING";
  int polls = 0;
  markers m;
  std::string output;
};

std::map<std::string, runway_task>& tasks() {
  static std::map<std::string, runway_task> all;
  return all;
}

std::string error_body(unsigned /*status*/, const std::string& message) {
  return json::serialize(json::object{{"error", message}});
}

fake_response create(fake_world& world, const fake_request& r, bool with_image) {
  static const std::set<std::string> ratios{"1280:720", "720:1280", "1104:832",
                                            "832:1104", "960:960",  "1584:672"};
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  // promptText is what a text task is made of; with an image it is optional.
  const json::value* prompt_text = o != nullptr ? o->if_contains("promptText") : nullptr;
  if (o == nullptr || !o->contains("model") || (prompt_text != nullptr && !prompt_text->is_string()) ||
      (!with_image && prompt_text == nullptr)) {
    return json_response(400, error_body(400,
                                         "Validation of body failed: model (and, without an image, "
                                         "promptText) is required"));
  }
  if (with_image) {
    const json::value* image = o->if_contains("promptImage");
    const std::string text = image != nullptr && image->is_string() ? std::string(image->as_string()) : "";
    const bool data_uri = text.starts_with("data:image/") &&
                          engines::sniff_image(decode_base64(text.substr(text.find(',') + 1)).value_or(""));
    if (!data_uri && !text.starts_with("https://")) {
      return json_response(
          400, error_body(400, "Validation of body failed: promptImage must be an HTTPS URL or a data URI"));
    }
  }
  if (const json::value* ratio = o->if_contains("ratio");
      ratio == nullptr || !ratio->is_string() || !ratios.contains(std::string(ratio->as_string()))) {
    return json_response(400, error_body(400, "Validation of body failed: ratio"));
  }
  if (const json::value* d = o->if_contains("duration");
      d != nullptr && !(d->is_int64() && (*d == 5 || *d == 10))) {
    return json_response(400, error_body(400, "Validation of body failed: duration must be 5 or 10"));
  }
  const std::string prompt = prompt_text != nullptr ? std::string(prompt_text->as_string()) : "";
  if (auto fault = create_fault(world, "runway", prompt, error_body)) {
    return *fault;
  }
  runway_task t;
  t.m = read_markers(prompt);
  if (t.m.invalid) {
    return json_response(400, error_body(400, "Validation of body failed: seed must be an integer"));
  }
  const std::string id = world.new_id("rw-");
  world.job_started("runway");
  std::lock_guard lock(world.mutex);
  tasks()[id] = t;
  return json_response(200, json::serialize(json::object{{"id", id}}));
}

fake_response task(fake_world& world, const std::string& id, bool cancel) {
  std::lock_guard lock(world.mutex);
  const auto it = tasks().find(id);
  if (it == tasks().end()) {
    return json_response(404, error_body(404, "Task not found"));
  }
  runway_task& t = it->second;
  const bool final = t.status == "SUCCEEDED" || t.status == "FAILED" || t.status == "CANCELLED";
  if (cancel) {
    if (!final) {
      t.status = "CANCELLED";
      world.job_canceled("runway");
    }
    return fake_response{.status = 204, .content_type = "application/json"};
  }
  if (!final && ++t.polls >= t.m.steps) {
    world.job_ended("runway");
    if (t.m.policy || t.m.fail) {
      t.status = "FAILED";
    } else {
      t.status = "SUCCEEDED";
      t.output = world.publish({t.m.wrong_type ? fake_png(64, 36, "x") : fake_mp4(), "video/mp4",
                                std::chrono::steady_clock::now() + (t.m.expire ? 0s : 24h), ""});
    }
  } else if (!final) {
    t.status = t.polls == 1 && t.m.rate_limited > 0 ? "THROTTLED" : "RUNNING";
  }
  json::object o{{"id", id}, {"status", t.status}, {"createdAt", "2026-11-23T00:00:00.000Z"}};
  if (t.status == "RUNNING") {
    o["progress"] = static_cast<double>(t.polls) / t.m.steps;
  } else if (t.status == "SUCCEEDED") {
    o["output"] = json::array{json::value(t.output)};
  } else if (t.status == "FAILED") {
    o["failure"] =
        t.m.policy ? "Your prompt did not pass our content moderation." : "An unexpected error occurred.";
    o["failureCode"] = t.m.policy ? "SAFETY.INPUT.TEXT" : "INTERNAL.BAD_OUTPUT.CODE01";
  }
  return json_response(200, json::serialize(o));
}

}  // namespace

std::optional<fake_response> fake_runway(fake_world& world, const fake_request& r, std::string_view path) {
  if (!r.header("authorization").starts_with("Bearer ") || r.header("authorization").size() <= 7) {
    return json_response(401, error_body(401, "Unauthorized: a valid API key is required"));
  }
  if (r.header("x-runway-version") != "2024-11-06") {
    return json_response(400, error_body(400, "Invalid API Version: X-Runway-Version must be 2024-11-06"));
  }
  if (path == "/v1/image_to_video" && r.method == "POST") {
    return create(world, r, true);
  }
  if (path == "/v1/text_to_video" && r.method == "POST") {
    return create(world, r, false);
  }
  if (path.starts_with("/v1/tasks/") && (r.method == "GET" || r.method == "DELETE")) {
    return task(world, std::string(path.substr(10)), r.method == "DELETE");
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
