// Replicate as PROVIDERS.md §3 describes it: predictions in the model form and the version form,
// Prefer: wait, starting → processing → succeeded | failed | canceled, output as a URL (an array of
// them for image models) that expires after an hour, free-text errors (E005 for safety), RFC 7807
// problem details for API errors, the file API, and cancel.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct prediction {
  json::object object;
  int polls = 0;
  markers m;
  bool video = false;
  std::string prompt;
  std::string ratio;
};

std::map<std::string, prediction>& predictions() {
  static std::map<std::string, prediction> all;
  return all;
}

std::string problem(unsigned status, const std::string& title, const std::string& detail) {
  return json::serialize(json::object{{"title", title}, {"detail", detail}, {"status", status}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return status == 429 ? json::serialize(
                             json::object{{"detail", "Request was throttled. Your rate limit resets in ~1s."},
                                          {"status", 429},
                                          {"title", "Too Many Requests"}})
                       : problem(status, "Internal Server Error", message);
}

// One step of a prediction's life; every GET advances it once.
void advance(fake_world& world, prediction& p) {
  json::object& o = p.object;
  const std::string status(o["status"].as_string());
  if (status != "starting" && status != "processing") {
    return;
  }
  if (++p.polls < p.m.steps) {
    o["status"] = "processing";
    o["logs"] = " " + std::to_string(p.polls * 100 / p.m.steps) + "%|#####     | " + std::to_string(p.polls) +
                "/" + std::to_string(p.m.steps);
    return;
  }
  o["completed_at"] = "2026-11-22T00:00:00.000Z";
  if (p.m.policy) {
    o["status"] = "failed";
    o["error"] =
        "The input or output was flagged as sensitive. Please try again with different inputs. (E005)";
    return;
  }
  if (p.m.fail) {
    o["status"] = "failed";
    o["error"] = "CUDA out of memory. Tried to allocate 2.00 GiB";
    return;
  }
  const bool video = p.video != p.m.wrong_type;
  const auto [w, h] = size_of_ratio(p.ratio.empty() ? "1:1" : p.ratio, 256);
  const std::string url =
      world.publish({video ? fake_mp4() : fake_png(w, h, p.prompt), video ? "video/mp4" : "image/png",
                     std::chrono::steady_clock::now() + (p.m.expire ? 0s : 3600s), ""});
  o["status"] = "succeeded";
  o["output"] = p.video ? json::value(url) : json::value(json::array{json::value(url)});
  o["metrics"] = {{"predict_time", 1.5}, {"total_time", 2.0}};
}

fake_response create(fake_world& world, const fake_request& r, const std::string& model_path) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  if (ec || !body.is_object() || !body.as_object().contains("input") ||
      !body.as_object().at("input").is_object()) {
    return json_response(422,
                         problem(422, "Input validation failed", "input is required and must be an object"));
  }
  const json::object& input = body.as_object().at("input").as_object();
  std::string version;
  if (model_path.empty()) {
    const json::value* v = body.as_object().if_contains("version");
    if (v == nullptr || !v->is_string() || v->as_string().empty()) {
      return json_response(
          422, problem(422, "Invalid version or not permitted",
                       "The specified version does not exist (or perhaps you don't have permission)"));
    }
    version = std::string(v->as_string());
  }
  const json::value* prompt = input.if_contains("prompt");
  if (prompt == nullptr || !prompt->is_string()) {
    return json_response(422, problem(422, "Input validation failed", "- input: prompt is required"));
  }
  if (const json::value* image = input.if_contains("image"); image != nullptr) {
    const std::string text = image->is_string() ? std::string(image->as_string()) : "";
    const bool ok = text.starts_with("http") ||
                    (text.starts_with("data:") &&
                     engines::sniff_image(decode_base64(text.substr(text.find(',') + 1)).value_or("")));
    if (!ok) {
      return json_response(
          422, problem(422, "Input validation failed", "- input.image: Does not match format 'uri'"));
    }
  }
  const std::string text(prompt->as_string());
  if (auto fault = create_fault(world, "replicate", text, fault_body)) {
    return *fault;
  }
  prediction p;
  p.m = read_markers(text);
  if (p.m.invalid) {
    return json_response(
        422, problem(422, "Input validation failed", "- input.aspect_ratio: must be one of 1:1, 16:9"));
  }
  p.prompt = text;
  p.video = input.contains("duration");
  p.ratio = input.contains("aspect_ratio") && input.at("aspect_ratio").is_string()
                ? std::string(input.at("aspect_ratio").as_string())
                : "1:1";
  const std::string id = world.new_id("rp");
  const std::string base = world.base_url() + "/replicate/v1/predictions/" + id;
  p.object = json::object{
      {"id", id},
      {"model", model_path.empty() ? "owner/model" : model_path},
      {"version", version.empty() ? "hidden" : version},
      {"input", input},
      {"output", nullptr},
      {"logs", ""},
      {"error", nullptr},
      {"status", "starting"},
      {"data_removed", false},
      {"created_at", "2026-11-22T00:00:00.000Z"},
      {"urls", {{"get", base}, {"cancel", base + "/cancel"}, {"web", "https://replicate.com/p/" + id}}}};
  std::lock_guard lock(world.mutex);
  prediction& stored = predictions()[id] = std::move(p);
  if (r.header("prefer").starts_with("wait")) {
    // Held until done (the fake's jobs take no time): as if it finished within the wait.
    while (std::string(stored.object["status"].as_string()) == "starting" ||
           std::string(stored.object["status"].as_string()) == "processing") {
      advance(world, stored);
    }
  }
  fake_response answer = json_response(201, json::serialize(stored.object));
  answer.delay = std::chrono::seconds(stored.m.slow_seconds);
  return answer;
}

}  // namespace

std::optional<fake_response> fake_replicate(fake_world& world, const fake_request& r, std::string_view path) {
  if (!r.header("authorization").starts_with("Bearer ") || r.header("authorization").size() <= 7) {
    return json_response(401,
                         problem(401, "Unauthenticated", "You did not pass a valid authentication token"));
  }
  const std::string p(path);
  if (p == "/v1/predictions" && r.method == "POST") {
    return create(world, r, "");
  }
  if (p.starts_with("/v1/models/") && p.ends_with("/predictions") && r.method == "POST") {
    return create(world, r, p.substr(11, p.size() - 11 - 12));
  }
  if (p == "/v1/files" && r.method == "POST") {
    const std::string id = world.new_id("file");
    const std::string url =
        world.publish({r.body, "application/octet-stream", std::chrono::steady_clock::now() + 24h,
                       "authorization:" + r.header("authorization")});
    return json_response(201, json::serialize(json::object{{"id", id}, {"urls", {{"get", url}}}}));
  }
  if (p.starts_with("/v1/predictions/")) {
    std::string id = p.substr(16);
    const bool cancel = id.ends_with("/cancel");
    if (cancel) {
      id.resize(id.size() - 7);
    }
    std::lock_guard lock(world.mutex);
    const auto it = predictions().find(id);
    if (it == predictions().end()) {
      return json_response(404, problem(404, "Not found", "The requested resource could not be found."));
    }
    json::object& o = it->second.object;
    if (cancel && r.method == "POST") {
      const std::string status(o["status"].as_string());
      if (status == "starting" || status == "processing") {
        o["status"] = "canceled";
      }
      return json_response(200, json::serialize(o));
    }
    if (r.method == "GET") {
      advance(world, it->second);
      return json_response(200, json::serialize(o));
    }
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
