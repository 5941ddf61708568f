// The fal queue as PROVIDERS.md §4 describes it: POST /{model_id} answers the request's status,
// response and cancel URLs, built from owner/alias only (a model's sub-path is dropped); the status goes
// IN_QUEUE → IN_PROGRESS → COMPLETED whether or not the request succeeded; the result says which (422
// {"detail": [...]}, or {"detail", "error_type"} with X-Fal-Error-Type); FLUX flags NSFW in a successful
// result; Authorization: Key.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct fal_request {
  std::string prefix;  ///< /fal/{owner}/{alias}/requests/{id}
  int polls = 0;
  markers m;
  std::string prompt;
  bool video = false;
  std::pair<int, int> size{256, 256};
  std::string result_url;
  bool canceled = false;
};

std::map<std::string, fal_request>& requests() {
  static std::map<std::string, fal_request> all;
  return all;
}

std::string fault_body(unsigned status, const std::string& message) {
  return json::serialize(
      json::object{{"detail", message}, {"error_type", status == 429 ? "rate_limited" : "internal_error"}});
}

std::pair<int, int> size_of(const json::value* image_size) {
  if (image_size == nullptr) {
    return {256, 192};  // landscape_4_3, fal's default
  }
  if (image_size->is_object()) {
    const json::object& o = image_size->as_object();
    if (o.contains("width") && o.contains("height") && o.at("width").is_int64() &&
        o.at("height").is_int64()) {
      return {static_cast<int>(o.at("width").as_int64()) / 4,
              static_cast<int>(o.at("height").as_int64()) / 4};
    }
    return {0, 0};
  }
  const std::string name = image_size->is_string() ? std::string(image_size->as_string()) : "";
  if (name == "square_hd" || name == "square") {
    return {256, 256};
  }
  if (name == "landscape_4_3") {
    return {256, 192};
  }
  if (name == "landscape_16_9") {
    return {256, 144};
  }
  if (name == "portrait_4_3") {
    return {192, 256};
  }
  if (name == "portrait_16_9") {
    return {144, 256};
  }
  return {0, 0};
}

json::object status_of(const std::string& id, const fal_request& q, const std::string& base) {
  const char* status = q.canceled || q.polls >= q.m.steps ? "COMPLETED"
                       : q.polls == 0                     ? "IN_QUEUE"
                                                          : "IN_PROGRESS";
  json::object o{{"status", status},
                 {"request_id", id},
                 {"response_url", base + q.prefix},
                 {"status_url", base + q.prefix + "/status"},
                 {"cancel_url", base + q.prefix + "/cancel"}};
  if (std::string_view(status) == "IN_QUEUE") {
    o["queue_position"] = 0;
  }
  if (std::string_view(status) == "COMPLETED") {
    o["logs"] = nullptr;
    o["metrics"] = {{"inference_time", 1.25}};
  }
  return o;
}

fake_response submit(fake_world& world, const fake_request& r, const std::string& model) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  if (o == nullptr || !o->contains("prompt") || !o->at("prompt").is_string()) {
    return json_response(
        422, R"({"detail":[{"loc":["body","prompt"],"msg":"field required","type":"value_error.missing"}]})");
  }
  const std::string prompt(o->at("prompt").as_string());
  for (const std::string field : {"image_url"}) {
    if (const json::value* image = o->if_contains(field); image != nullptr) {
      const std::string text = image->is_string() ? std::string(image->as_string()) : "";
      if (!text.starts_with("http") &&
          !(text.starts_with("data:") &&
            engines::sniff_image(decode_base64(text.substr(text.find(',') + 1)).value_or("")))) {
        return json_response(
            422,
            R"({"detail":[{"loc":["body","image_url"],"msg":"invalid image URL","type":"value_error"}]})");
      }
    }
  }
  if (auto fault = create_fault(world, "fal", prompt, fault_body)) {
    return *fault;
  }
  fal_request q;
  q.m = read_markers(prompt);
  q.prompt = prompt;
  q.video = model.find("video") != std::string::npos;
  q.size = size_of(o->if_contains("image_size"));
  if (q.size.first <= 0 || q.size.second <= 0) {
    return json_response(
        422, R"({"detail":[{"loc":["body","image_size"],"msg":"invalid image size","type":"value_error"}]})");
  }
  // owner/alias only: "fal-ai/flux/dev" → "fal-ai/flux".
  const auto first = model.find('/');
  const auto second = model.find('/', first + 1);
  const std::string app = model.substr(0, second);
  const std::string id = world.new_id("fal-");
  q.prefix = "/fal/" + app + "/requests/" + id;
  std::lock_guard lock(world.mutex);
  const fal_request& stored = requests()[id] = std::move(q);
  world.job_started("fal");
  json::object answer = status_of(id, stored, world.base_url());
  answer["gateway_request_id"] = id;
  fake_response res = json_response(200, json::serialize(answer));
  res.delay = std::chrono::seconds(stored.m.slow_seconds);
  return res;
}

fake_response result(fake_world& world, const std::string& id, fal_request& q) {
  if (q.polls < q.m.steps && !q.canceled) {
    return json_response(400, R"({"detail":"Request is still in progress"})");
  }
  if (q.canceled) {
    return json_response(400, R"({"detail":"Request was cancelled"})");
  }
  if (q.m.invalid) {
    return json_response(
        422, R"({"detail":[{"loc":["body","prompt"],"msg":"prompt is too long","type":"value_error"}]})");
  }
  if (q.m.fail) {
    fake_response r =
        json_response(500, R"({"detail":"The runner disconnected","error_type":"runner_disconnected"})");
    r.headers = {{"X-Fal-Error-Type", "runner_disconnected"}};
    return r;
  }
  if (q.result_url.empty()) {
    const bool video = q.video != q.m.wrong_type;
    q.result_url = world.publish({video ? fake_mp4() : fake_png(q.size.first, q.size.second, q.prompt),
                                  video ? "video/mp4" : "image/png",
                                  std::chrono::steady_clock::now() + (q.m.expire ? 0s : 7 * 24h), ""});
  }
  if (q.video) {
    return json_response(
        200,
        json::serialize(json::object{
            {"video", {{"url", q.result_url}, {"content_type", "video/mp4"}, {"file_name", id + ".mp4"}}}}));
  }
  return json_response(
      200, json::serialize(json::object{{"images", json::array{json::object{{"url", q.result_url},
                                                                            {"content_type", "image/png"},
                                                                            {"width", q.size.first},
                                                                            {"height", q.size.second}}}},
                                        {"seed", 42},
                                        {"has_nsfw_concepts", json::array{q.m.policy}},
                                        {"prompt", q.prompt},
                                        {"timings", {{"inference", 1.25}}}}));
}

}  // namespace

std::optional<fake_response> fake_fal(fake_world& world, const fake_request& r, std::string_view path) {
  const std::string auth = r.header("authorization");
  if (!auth.starts_with("Key ") || auth.size() <= 4) {
    return json_response(401, R"({"detail":"No user found for Key ID and Secret"})");
  }
  const std::string p(path);
  const auto requests_at = p.find("/requests/");
  if (requests_at == std::string::npos) {
    if (r.method == "POST" && p.size() > 1) {
      return submit(world, r, p.substr(1));
    }
    return std::nullopt;
  }
  std::string rest = p.substr(requests_at + 10);
  std::string action;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    action = rest.substr(slash + 1);
    rest.resize(slash);
  }
  std::lock_guard lock(world.mutex);
  const auto it = requests().find(rest);
  if (it == requests().end() || "/fal" + p != it->second.prefix + (action.empty() ? "" : "/" + action)) {
    return json_response(404, R"({"detail":"Request not found"})");
  }
  fal_request& q = it->second;
  if (action == "status" && r.method == "GET") {
    json::object answer = status_of(rest, q, world.base_url());
    if (++q.polls == q.m.steps + 1 && !q.canceled) {
      world.job_ended("fal");  // COMPLETED is now what the status says
    }
    return json_response(200, json::serialize(answer));
  }
  if (action == "cancel" && r.method == "PUT") {
    if (q.polls >= q.m.steps) {
      return json_response(400, R"({"status":"ALREADY_COMPLETED"})");
    }
    q.canceled = true;
    world.job_canceled("fal");
    return json_response(202, R"({"status":"CANCELLATION_REQUESTED"})");
  }
  if (action.empty() && r.method == "GET") {
    return result(world, rest, q);
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
