// OpenAI Videos as PROVIDERS.md §2 describes it: POST /v1/videos (multipart; seconds a string enum
// "4" | "8" | "12"; size 720x1280, 1280x720, 1024x1792, 1792x1024), a Video object queued →
// in_progress → completed | failed with progress and error{code, message}, the openai-poll-after-ms
// header, and the MP4 at GET /v1/videos/{id}/content (404 once expired).

#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>
#include <set>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct video_job {
  json::object object;
  int polls = 0;
  markers m;
  std::chrono::steady_clock::time_point expires_at;
};

std::map<std::string, video_job>& videos() {
  static std::map<std::string, video_job> all;
  return all;
}

std::string error_body(const std::string& message, const std::string& type, const std::string& code) {
  return json::serialize(
      json::object{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return error_body(message, status == 429 ? "requests" : "server_error",
                    status == 429 ? "rate_limit_exceeded" : "server_error");
}

fake_response with_pace(fake_response r) {
  r.headers.emplace_back("openai-poll-after-ms", "150");
  return r;
}

void advance(video_job& v) {
  json::object& o = v.object;
  const std::string status(o["status"].as_string());
  if (status == "completed" || status == "failed") {
    return;
  }
  ++v.polls;
  if (v.polls < v.m.steps) {
    o["status"] = "in_progress";
    o["progress"] = v.polls * 100 / v.m.steps;
    return;
  }
  o["completed_at"] = std::time(nullptr);
  if (v.m.policy || v.m.fail) {
    o["status"] = "failed";
    o["error"] = v.m.policy
                     ? json::object{{"code", "moderation_blocked"},
                                    {"message", "Your request was blocked by our moderation system."}}
                     : json::object{{"code", "internal_error"}, {"message", "Video generation failed."}};
    return;
  }
  o["status"] = "completed";
  o["progress"] = 100;
  o["expires_at"] = std::time(nullptr) + 3600;
  v.expires_at = std::chrono::steady_clock::now() + (v.m.expire ? 0s : 3600s);
}

}  // namespace

std::optional<fake_response> fake_openai_videos(fake_world& world, const fake_request& r,
                                                std::string_view path) {
  static const std::set<std::string> seconds{"4", "8", "12"};
  static const std::set<std::string> sizes{"720x1280", "1280x720", "1024x1792", "1792x1024"};
  if (path == "/v1/videos" && r.method == "POST") {
    const auto parts = multipart_parts(r);
    auto field = [&](const std::string& name) {
      const auto it = parts.find(name);
      return it == parts.end() ? std::string() : it->second;
    };
    const std::string prompt = field("prompt");
    if (prompt.empty()) {
      return json_response(400, error_body("Missing required parameter: 'prompt'.", "invalid_request_error",
                                           "missing_required_parameter"));
    }
    if (!field("seconds").empty() && !seconds.contains(field("seconds"))) {
      return json_response(400, error_body("Invalid value for 'seconds': expected '4', '8' or '12'.",
                                           "invalid_request_error", "invalid_value"));
    }
    if (!field("size").empty() && !sizes.contains(field("size"))) {
      return json_response(400,
                           error_body("Invalid value for 'size'.", "invalid_request_error", "invalid_value"));
    }
    if (const auto ref = parts.find("input_reference");
        ref != parts.end() && !engines::sniff_image(ref->second)) {
      return json_response(400, error_body("input_reference must be an image.", "invalid_request_error",
                                           "invalid_image_file"));
    }
    if (auto fault = create_fault(world, "openai-videos", prompt, fault_body)) {
      return *fault;
    }
    video_job v;
    v.m = read_markers(prompt);
    if (v.m.invalid) {
      return json_response(400, error_body("Invalid prompt.", "invalid_request_error", "invalid_value"));
    }
    const std::string id = world.new_id("video_");
    v.object = json::object{{"id", id},
                            {"object", "video"},
                            {"model", field("model").empty() ? "sora-2" : field("model")},
                            {"status", "queued"},
                            {"progress", 0},
                            {"created_at", std::time(nullptr)},
                            {"seconds", field("seconds").empty() ? "4" : field("seconds")},
                            {"size", field("size").empty() ? "720x1280" : field("size")},
                            {"prompt", prompt},
                            {"error", nullptr}};
    std::lock_guard lock(world.mutex);
    videos()[id] = v;
    return with_pace(json_response(200, json::serialize(v.object)));
  }
  if (!path.starts_with("/v1/videos/")) {
    return std::nullopt;
  }
  std::string id(path.substr(11));
  const bool content = id.ends_with("/content");
  if (content) {
    id.resize(id.size() - 8);
  }
  std::lock_guard lock(world.mutex);
  const auto it = videos().find(id);
  if (it == videos().end()) {
    return json_response(404, error_body("Video not found.", "invalid_request_error", "not_found"));
  }
  video_job& v = it->second;
  if (content && r.method == "GET") {
    if (std::string_view(v.object["status"].as_string()) != "completed") {
      return json_response(409,
                           error_body("Video is not ready.", "invalid_request_error", "video_not_ready"));
    }
    if (std::chrono::steady_clock::now() >= v.expires_at) {
      return json_response(
          404, error_body("The video's assets have expired.", "invalid_request_error", "expired"));
    }
    return fake_response{.status = 200,
                         .content_type = "application/binary",
                         .headers = {},
                         .body = v.m.wrong_type ? fake_png(64, 36, "wrong") : fake_mp4()};
  }
  if (!content && r.method == "GET") {
    advance(v);
    return with_pace(json_response(200, json::serialize(v.object)));
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
