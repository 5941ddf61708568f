// stable-diffusion.cpp's native async API as its examples/server/api.md describes it: POST
// /sdcpp/v1/img_gen and /vid_gen answer 202 with a job; GET /sdcpp/v1/jobs/{id} goes queued →
// generating → completed | failed | cancelled with result.images[].b64_json (video: result.b64_json and
// mime_type; a video is webm unless output_format asks for mp4) or error{code, message}; 404 for an
// unknown job; cancel answers 409 once the job is final;
// 429 when the queue is full. No auth.

#include "core/base64.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>

namespace gesso::fakes {
namespace json = boost::json;

namespace {

struct job {
  json::object object;
  int polls = 0;
  markers m;
  std::string prompt;
  int width = 0;
  int height = 0;
  std::string format;  ///< output_format as asked: webm by default for videos, png for images
};

std::map<std::string, job>& jobs() {
  static std::map<std::string, job> all;
  return all;
}

std::string error_body(const std::string& code, const std::string& message) {
  return json::serialize(json::object{{"error", {{"code", code}, {"message", message}}}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return status == 429 ? error_body("queue_full", "job queue is full")
                       : error_body("internal_error", message);
}

bool is_final(const json::object& o) {
  const std::string_view s = o.at("status").as_string();
  return s == "completed" || s == "failed" || s == "cancelled";
}

void advance(job& j) {
  json::object& o = j.object;
  if (is_final(o)) {
    return;
  }
  ++j.polls;
  if (j.polls < j.m.steps) {
    o["status"] = "generating";
    o["started"] = std::time(nullptr);
    o["queue_position"] = 0;
    return;
  }
  o["completed"] = std::time(nullptr);
  if (j.m.fail || j.m.policy) {
    o["status"] = "failed";
    o["error"] = {{"code", "generation_failed"},
                  {"message", j.m.policy ? "the safety checker flagged the output (NSFW)"
                                         : "generate_image returned empty results"}};
    return;
  }
  o["status"] = "completed";
  const bool video = std::string_view(o.at("kind").as_string()) == "vid_gen";
  if (video != j.m.wrong_type && j.format != "mp4") {
    // webm, the server's default for videos: the fake has no encoder for it, only its EBML signature.
    o["result"] = {{"output_format", "webm"},
                   {"mime_type", "video/webm"},
                   {"b64_json", encode_base64(std::string("\x1A\x45\xDF\xA3\x9F\x42\x86\x81\x01webm", 13))}};
  } else if (video != j.m.wrong_type) {
    o["result"] = {
        {"output_format", "mp4"}, {"mime_type", "video/mp4"}, {"b64_json", encode_base64(fake_mp4())}};
  } else {
    o["result"] = {
        {"output_format", "png"},
        {"images",
         json::array{json::object{
             {"index", 0}, {"b64_json", encode_base64(fake_png(j.width / 4, j.height / 4, j.prompt))}}}}};
  }
}

fake_response submit(fake_world& world, const fake_request& r, const std::string& kind) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  if (o == nullptr) {
    return json_response(400, error_body("invalid_request", "invalid JSON"));
  }
  const json::value* prompt = o->if_contains("prompt");
  if (prompt == nullptr || !prompt->is_string()) {
    return json_response(400, error_body("invalid_request", "prompt is required"));
  }
  auto dimension = [o](const char* name) {
    const json::value* v = o->if_contains(name);
    return v != nullptr && v->is_int64() ? static_cast<int>(v->as_int64()) : 512;
  };
  job j;
  j.width = dimension("width");
  j.height = dimension("height");
  if (j.width < 64 || j.width > 4096 || j.height < 64 || j.height > 4096) {
    return json_response(400, error_body("invalid_request", "width and height must be from 64 to 4096"));
  }
  j.prompt = std::string(prompt->as_string());
  const json::value* format = o->if_contains("output_format");
  j.format = format != nullptr && format->is_string() ? std::string(format->as_string())
                                                      : (kind == "vid_gen" ? "webm" : "png");
  if (auto fault = create_fault(world, "sdcpp", j.prompt, fault_body)) {
    return *fault;
  }
  j.m = read_markers(j.prompt);
  if (j.m.invalid) {
    return json_response(400, error_body("invalid_request", "invalid generation parameters: sample_steps"));
  }
  const std::string id = world.new_id("job_");
  j.object = json::object{
      {"id", id},           {"kind", kind},         {"status", "queued"},  {"created", std::time(nullptr)},
      {"started", nullptr}, {"completed", nullptr}, {"queue_position", 1}, {"result", nullptr},
      {"error", nullptr}};
  std::lock_guard lock(world.mutex);
  jobs()[id] = j;
  fake_response answer =
      json_response(202, json::serialize(json::object{{"id", id},
                                                      {"kind", kind},
                                                      {"status", "queued"},
                                                      {"created", std::time(nullptr)},
                                                      {"poll_url", "/sdcpp/v1/jobs/" + id}}));
  answer.delay = std::chrono::seconds(j.m.slow_seconds);
  return answer;
}

}  // namespace

std::optional<fake_response> fake_sdcpp(fake_world& world, const fake_request& r, std::string_view path) {
  const std::string p(path);
  if (r.method == "POST" && (p == "/sdcpp/v1/img_gen" || p == "/sdcpp/v1/vid_gen")) {
    return submit(world, r, p.substr(10));
  }
  if (!p.starts_with("/sdcpp/v1/jobs/")) {
    return std::nullopt;
  }
  std::string id = p.substr(15);
  const bool cancel = id.ends_with("/cancel");
  if (cancel) {
    id.resize(id.size() - 7);
  }
  std::lock_guard lock(world.mutex);
  const auto it = jobs().find(id);
  if (it == jobs().end()) {
    return json_response(404, error_body("not_found", "job not found"));
  }
  json::object& o = it->second.object;
  if (cancel && r.method == "POST") {
    if (is_final(o)) {
      return json_response(409, error_body("conflict", "job already finished"));
    }
    o["status"] = "cancelled";
    o["error"] = {{"code", "cancelled"}, {"message", "job cancelled by client"}};
    return json_response(200, json::serialize(o));
  }
  if (r.method == "GET" && !cancel) {
    advance(it->second);
    return json_response(200, json::serialize(o));
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
