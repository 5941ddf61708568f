// The Gemini API's Veo as PROVIDERS.md §5 describes it: POST /v1beta/models/{model}:predictLongRunning
// with x-goog-api-key, instances[].image inline base64 only, aspectRatio 16:9 | 9:16; an operation
// {name, done} polled at GET /v1beta/{name}; done with response.generateVideoResponse.generatedSamples
// [].video.uri (downloaded with the key), or with raiMediaFilteredCount and no samples, or with a
// google.rpc.Status error.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct operation {
  std::string name;
  int polls = 0;
  markers m;
  std::string file_url;
};

std::map<std::string, operation>& operations() {
  static std::map<std::string, operation> all;
  return all;
}

std::string status_body(int code, const std::string& status, const std::string& message) {
  return json::serialize(json::object{{"error", {{"code", code}, {"message", message}, {"status", status}}}});
}

std::string fault_body(unsigned code, const std::string& message) {
  return status_body(static_cast<int>(code), code == 429 ? "RESOURCE_EXHAUSTED" : "INTERNAL", message);
}

fake_response submit(fake_world& world, const fake_request& r, const std::string& model) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  const json::array* instances =
      o != nullptr && o->contains("instances") ? o->at("instances").if_array() : nullptr;
  if (instances == nullptr || instances->empty() || !(*instances)[0].is_object() ||
      !(*instances)[0].as_object().contains("prompt")) {
    return json_response(400, status_body(400, "INVALID_ARGUMENT", "instances[0].prompt is required"));
  }
  const json::object& instance = (*instances)[0].as_object();
  if (const json::value* image = instance.if_contains("image")) {
    const json::object* i = image->if_object();
    if (i == nullptr || i->contains("gcsUri")) {
      return json_response(400,
                           status_body(400, "INVALID_ARGUMENT", "gcsUri is not supported in the Gemini API"));
    }
    const json::value* b64 = i->if_contains("bytesBase64Encoded");
    if (b64 == nullptr || !b64->is_string() ||
        !engines::sniff_image(decode_base64(b64->as_string()).value_or(""))) {
      return json_response(400,
                           status_body(400, "INVALID_ARGUMENT", "image.bytesBase64Encoded is not an image"));
    }
  }
  const json::value* parameters = o->if_contains("parameters");
  const std::string ratio = parameters != nullptr && parameters->is_object() &&
                                    parameters->as_object().contains("aspectRatio") &&
                                    parameters->as_object().at("aspectRatio").is_string()
                                ? std::string(parameters->as_object().at("aspectRatio").as_string())
                                : "16:9";
  if (ratio != "16:9" && ratio != "9:16") {
    return json_response(400, status_body(400, "INVALID_ARGUMENT", "aspectRatio must be 16:9 or 9:16"));
  }
  const std::string prompt =
      instance.at("prompt").is_string() ? std::string(instance.at("prompt").as_string()) : "";
  if (auto fault = create_fault(world, "gemini", prompt, fault_body)) {
    return *fault;
  }
  operation op;
  op.m = read_markers(prompt);
  if (op.m.invalid) {
    return json_response(400, status_body(400, "INVALID_ARGUMENT", "durationSeconds is out of range"));
  }
  const std::string id = world.new_id("op");
  op.name = "models/" + model + "/operations/" + id;
  std::lock_guard lock(world.mutex);
  operations()[op.name] = op;
  return json_response(200, json::serialize(json::object{{"name", op.name}}));
}

json::object state_of(fake_world& world, operation& op, const std::string& key) {
  json::object o{{"name", op.name}};
  if (++op.polls < op.m.steps) {
    o["metadata"] = json::object{};
    return o;  // done is absent (false) while running
  }
  o["done"] = true;
  if (op.m.fail) {
    o["error"] = {{"code", 13}, {"message", "Video generation failed due to an internal error."}};
    return o;
  }
  if (op.m.policy) {
    o["response"] = {
        {"@type", "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse"},
        {"generateVideoResponse",
         {{"raiMediaFilteredCount", 1},
          {"raiMediaFilteredReasons", json::array{"The video was filtered by our safety filters."}}}}};
    return o;
  }
  if (op.file_url.empty()) {
    op.file_url =
        world.publish({op.m.wrong_type ? fake_png(64, 36, "x") : fake_mp4(), "video/mp4",
                       std::chrono::steady_clock::now() + (op.m.expire ? 0s : 48h), "x-goog-api-key:" + key});
  }
  o["response"] = {{"generateVideoResponse",
                    {{"generatedSamples", json::array{json::object{{"video", {{"uri", op.file_url}}}}}}}}};
  return o;
}

}  // namespace

std::optional<fake_response> fake_gemini(fake_world& world, const fake_request& r, std::string_view path) {
  const std::string key = r.header("x-goog-api-key");
  if (key.empty()) {
    return json_response(403,
                         status_body(403, "PERMISSION_DENIED",
                                     "Method doesn't allow unregistered callers. Please use an API key."));
  }
  const std::string p(path);
  const std::string prefix = "/v1beta/models/";
  if (r.method == "POST" && p.starts_with(prefix) && p.ends_with(":predictLongRunning")) {
    return submit(world, r, p.substr(prefix.size(), p.size() - prefix.size() - 19));
  }
  if (r.method == "GET" && p.starts_with("/v1beta/models/") && p.find("/operations/") != std::string::npos) {
    std::lock_guard lock(world.mutex);
    const auto it = operations().find(p.substr(8));
    if (it == operations().end()) {
      return json_response(404, status_body(404, "NOT_FOUND", "Operation not found"));
    }
    return json_response(200, json::serialize(state_of(world, it->second, key)));
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
