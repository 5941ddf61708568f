// Volcengine Ark as PROVIDERS.md §6 describes it: content-generation tasks (POST
// /api/v3/contents/generations/tasks answering {"id": "cgt-…"}; GET …/{id} queued → running →
// succeeded | failed | cancelled with content.video_url valid 24 h and error{code, message} such as
// OutputVideoSensitiveContentDetected; DELETE cancels a queued task) and synchronous Seedream images
// (POST /api/v3/images/generations; data[] with b64_json or url, or a per-image error). Bearer auth and
// the {"error": {code, message, param, type}} envelope.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>
#include <set>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct ark_task {
  json::object object;
  int polls = 0;
  markers m;
};

std::map<std::string, ark_task>& tasks() {
  static std::map<std::string, ark_task> all;
  return all;
}

std::string error_body(const std::string& code, const std::string& message) {
  return json::serialize(
      json::object{{"error", {{"code", code}, {"message", message}, {"param", ""}, {"type", "BadRequest"}}}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return error_body(status == 429 ? "RateLimitExceeded.EndpointRPMExceeded" : "InternalServiceError",
                    message);
}

bool valid_image(const std::string& url) {
  return url.starts_with("http") ||
         (url.starts_with("data:") &&
          engines::sniff_image(decode_base64(url.substr(url.find(',') + 1)).value_or("")));
}

fake_response create_task(fake_world& world, const fake_request& r) {
  static const std::set<std::string> ratios{"16:9", "4:3",  "1:1",      "3:4",
                                            "9:16", "21:9", "adaptive", "keep_ratio"};
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  const json::array* content = o != nullptr && o->contains("content") ? o->at("content").if_array() : nullptr;
  if (content == nullptr || o->if_contains("model") == nullptr) {
    return json_response(400, error_body("MissingParameter", "model and content are required"));
  }
  std::string prompt;
  for (const json::value& item : *content) {
    const std::string type =
        item.is_object() && item.as_object().contains("type") && item.as_object().at("type").is_string()
            ? std::string(item.as_object().at("type").as_string())
            : "";
    if (type == "text" && item.as_object().contains("text") && item.as_object().at("text").is_string()) {
      prompt = std::string(item.as_object().at("text").as_string());
    } else if (type == "image_url") {
      const json::value* url =
          item.as_object().contains("image_url") && item.as_object().at("image_url").is_object()
              ? item.as_object().at("image_url").as_object().if_contains("url")
              : nullptr;
      if (url == nullptr || !url->is_string() || !valid_image(std::string(url->as_string()))) {
        return json_response(400,
                             error_body("InvalidParameter", "content.image_url.url is not a valid image"));
      }
    } else {
      return json_response(400, error_body("InvalidParameter", "unknown content type"));
    }
  }
  if (const json::value* ratio = o->if_contains("ratio");
      ratio != nullptr && (!ratio->is_string() || !ratios.contains(std::string(ratio->as_string())))) {
    return json_response(400, error_body("InvalidParameter", "ratio is not supported"));
  }
  if (auto fault = create_fault(world, "ark", prompt, fault_body)) {
    return *fault;
  }
  ark_task t;
  t.m = read_markers(prompt);
  if (t.m.policy) {  // refused at create, as a 400, when the text is flagged
    return json_response(
        400, error_body("InputTextSensitiveContentDetected",
                        "The request failed because the input text may contain sensitive information."));
  }
  if (t.m.invalid) {
    return json_response(400, error_body("InvalidParameter", "duration is out of range"));
  }
  const std::string id = world.new_id("cgt-");
  t.object = json::object{{"id", id},
                          {"model", o->at("model")},
                          {"status", "queued"},
                          {"created_at", std::time(nullptr)},
                          {"updated_at", std::time(nullptr)},
                          {"error", nullptr}};
  std::lock_guard lock(world.mutex);
  tasks()[id] = t;
  return json_response(200, json::serialize(json::object{{"id", id}}));
}

void advance(fake_world& world, ark_task& t) {
  json::object& o = t.object;
  const std::string status(o["status"].as_string());
  if (status != "queued" && status != "running") {
    return;
  }
  o["updated_at"] = std::time(nullptr);
  if (++t.polls < t.m.steps) {
    o["status"] = "running";
    return;
  }
  if (t.m.fail) {
    o["status"] = "failed";
    o["error"] = {{"code", "InternalServiceError"},
                  {"message", "The service encountered an unexpected internal error."}};
    return;
  }
  o["status"] = "succeeded";
  o["content"] = {
      {"video_url", world.publish({t.m.wrong_type ? fake_png(64, 36, "x") : fake_mp4(), "video/mp4",
                                   std::chrono::steady_clock::now() + (t.m.expire ? 0s : 24h), ""})}};
  o["usage"] = {{"completion_tokens", 108900}, {"total_tokens", 108900}};
}

fake_response generate_image(fake_world& world, const fake_request& r) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  if (o == nullptr || !o->contains("prompt") || !o->at("prompt").is_string() || !o->contains("model")) {
    return json_response(400, error_body("MissingParameter", "model and prompt are required"));
  }
  const std::string prompt(o->at("prompt").as_string());
  const auto [w, h] = o->contains("size") && o->at("size").is_string()
                          ? parse_size(std::string(o->at("size").as_string()))
                          : std::pair{2048, 2048};
  if (w < 256 || h < 256 || w > 4096 || h > 4096) {
    return json_response(400, error_body("InvalidParameter", "size is out of range"));
  }
  if (const json::value* images = o->if_contains("image"); images != nullptr) {
    const json::array* list = images->if_array();
    if (list == nullptr || list->size() > 10) {
      return json_response(400, error_body("InvalidParameter", "image must be a list of up to 10 images"));
    }
    for (const json::value& image : *list) {
      if (!image.is_string() || !valid_image(std::string(image.as_string()))) {
        return json_response(400, error_body("InvalidParameter", "image is not a valid image"));
      }
    }
  }
  if (auto fault = create_fault(world, "ark", prompt, fault_body)) {
    return *fault;
  }
  const markers m = read_markers(prompt);
  if (m.invalid) {
    return json_response(400, error_body("InvalidParameter", "prompt is too long"));
  }
  json::object item;
  if (m.policy) {  // one image of a batch refused; the call itself succeeds
    item["error"] = {{"code", "OutputImageSensitiveContentDetected"},
                     {"message", "The output image may be sensitive."}};
  } else {
    const std::string bytes = fake_png(w / 8, h / 8, prompt);
    const bool b64 = o->contains("response_format") && o->at("response_format") == "b64_json";
    if (b64) {
      item["b64_json"] = encode_base64(bytes);
    } else {
      item["url"] = world.publish({bytes, "image/png", std::chrono::steady_clock::now() + 24h, ""});
    }
    item["size"] = std::to_string(w) + "x" + std::to_string(h);
  }
  fake_response answer =
      json_response(200, json::serialize(json::object{{"model", o->at("model")},
                                                      {"created", std::time(nullptr)},
                                                      {"data", json::array{std::move(item)}},
                                                      {"usage", {{"generated_images", m.policy ? 0 : 1}}}}));
  answer.delay = std::chrono::seconds(m.slow_seconds);
  return answer;
}

}  // namespace

std::optional<fake_response> fake_ark(fake_world& world, const fake_request& r, std::string_view path) {
  if (!r.header("authorization").starts_with("Bearer ") || r.header("authorization").size() <= 7) {
    return json_response(401, error_body("AuthenticationError", "the API key is missing or invalid"));
  }
  const std::string p(path);
  const std::string tasks_path = "/api/v3/contents/generations/tasks";
  if (p == tasks_path && r.method == "POST") {
    return create_task(world, r);
  }
  if (p == "/api/v3/images/generations" && r.method == "POST") {
    return generate_image(world, r);
  }
  if (!p.starts_with(tasks_path + "/")) {
    return std::nullopt;
  }
  const std::string id = p.substr(tasks_path.size() + 1);
  std::lock_guard lock(world.mutex);
  const auto it = tasks().find(id);
  if (it == tasks().end()) {
    return json_response(404, error_body("ResourceNotFound", "the task does not exist"));
  }
  if (r.method == "GET") {
    advance(world, it->second);
    return json_response(200, json::serialize(it->second.object));
  }
  if (r.method == "DELETE") {
    if (std::string_view(it->second.object["status"].as_string()) == "queued") {
      it->second.object["status"] = "cancelled";
    } else {
      tasks().erase(it);  // any other task is deleted
    }
    return json_response(200, "{}");
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
