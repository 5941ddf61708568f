// Kling as PROVIDERS.md §7 describes it: POST /v1/videos/text2video and /image2video (image as a URL or
// raw base64 with no data: prefix; duration "5" | "10"; aspect_ratio 16:9 | 9:16 | 1:1), polled at
// GET /v1/videos/{kind}/{task_id}: submitted → processing → succeed | failed with task_status_msg. Every
// answer is a {code, message, request_id, data} envelope; times in milliseconds. Requests must carry an
// HS256 JWT signed with the secret key: the fake checks it against FAKE_KLING_SECRET (default
// "kling-secret"), its issuer against FAKE_KLING_ACCESS_KEY when that is set, and its exp and nbf.

#include "core/base64.hpp"
#include "core/hmac.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <ctime>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct kling_task {
  json::object data;
  int polls = 0;
  markers m;
};

std::map<std::string, kling_task>& tasks() {
  static std::map<std::string, kling_task> all;
  return all;
}

std::string envelope(int code, const std::string& message, json::value data = nullptr) {
  return json::serialize(json::object{
      {"code", code}, {"message", message}, {"request_id", "req-fake"}, {"data", std::move(data)}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return envelope(status == 429 ? 1302 : 5000, message);
}

std::string from_base64url(std::string text) {
  for (char& c : text) {
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  while (text.size() % 4 != 0) {
    text += '=';
  }
  return decode_base64(text).value_or("");
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// "" when the bearer JWT is valid, else why not (a 401 with code 1000–1004).
std::string jwt_problem(const std::string& authorization) {
  if (!authorization.starts_with("Bearer ")) {
    return "Authorization header is missing";
  }
  const std::string token = authorization.substr(7);
  const auto first = token.find('.');
  const auto second = token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    return "the token is not a JWT";
  }
  const std::string signing_input = token.substr(0, second);
  const std::string expected =
      encode_base64(hmac_sha256(env_or("FAKE_KLING_SECRET", "kling-secret"), signing_input));
  std::string given = from_base64url(token.substr(second + 1));
  if (encode_base64(given) != expected) {
    return "the token's signature is invalid";
  }
  boost::system::error_code ec;
  const json::value header = json::parse(from_base64url(token.substr(0, first)), ec);
  const json::value payload = json::parse(from_base64url(token.substr(first + 1, second - first - 1)), ec);
  if (ec || !header.is_object() || header.as_object().if_contains("alg") == nullptr ||
      header.as_object().at("alg") != "HS256" || !payload.is_object()) {
    return "the token is malformed";
  }
  const json::object& p = payload.as_object();
  const std::int64_t now = std::time(nullptr);
  if (!p.contains("exp") || !p.at("exp").is_int64() || p.at("exp").as_int64() <= now) {
    return "the token has expired";
  }
  if (!p.contains("nbf") || !p.at("nbf").is_int64() || p.at("nbf").as_int64() > now) {
    return "the token is not valid yet";
  }
  const std::string access = env_or("FAKE_KLING_ACCESS_KEY", "");
  if (!p.contains("iss") || !p.at("iss").is_string() || (!access.empty() && p.at("iss") != access.c_str())) {
    return "the token's issuer is unknown";
  }
  return {};
}

fake_response create(fake_world& world, const fake_request& r, const std::string& kind) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  if (o == nullptr || !o->contains("prompt") || !o->at("prompt").is_string()) {
    return json_response(400, envelope(1201, "prompt is required"));
  }
  if (const json::value* d = o->if_contains("duration");
      d != nullptr && !(d->is_string() && (*d == "5" || *d == "10"))) {
    return json_response(400, envelope(1201, "duration must be \"5\" or \"10\""));
  }
  if (const json::value* a = o->if_contains("aspect_ratio");
      a != nullptr && !(a->is_string() && (*a == "16:9" || *a == "9:16" || *a == "1:1"))) {
    return json_response(400, envelope(1201, "aspect_ratio is invalid"));
  }
  if (kind == "image2video") {
    const json::value* image = o->if_contains("image");
    const std::string text = image != nullptr && image->is_string() ? std::string(image->as_string()) : "";
    if (text.starts_with("data:") ||
        (!text.starts_with("http") && !engines::sniff_image(decode_base64(text).value_or("")))) {
      return json_response(400, envelope(1201, "image must be a URL or base64 without a data: prefix"));
    }
  }
  const std::string prompt(o->at("prompt").as_string());
  if (auto fault = create_fault(world, "kling", prompt, fault_body)) {
    return *fault;
  }
  kling_task t;
  t.m = read_markers(prompt);
  if (t.m.policy) {
    return json_response(400, envelope(1301, "The content triggered the platform's content security policy"));
  }
  if (t.m.invalid) {
    return json_response(400, envelope(1201, "parameter error: cfg_scale"));
  }
  const std::string id = world.new_id("kt");
  const std::int64_t now_ms = static_cast<std::int64_t>(std::time(nullptr)) * 1000;
  t.data = json::object{
      {"task_id", id},
      {"task_status", "submitted"},
      {"task_info", {{"external_task_id", o->contains("external_task_id") ? o->at("external_task_id") : ""}}},
      {"created_at", now_ms},
      {"updated_at", now_ms}};
  world.job_started("kling");
  const bool lose_answer = t.m.lost && world.seen("kling-lost", prompt) == 0;
  std::lock_guard lock(world.mutex);
  tasks()[kind + "/" + id] = t;
  if (lose_answer) {
    return fake_response{.drop = true};  // made, but the client never hears of it
  }
  return json_response(200, envelope(0, "SUCCEED", t.data));
}

void advance(fake_world& world, kling_task& t) {
  json::object& d = t.data;
  const std::string status(d["task_status"].as_string());
  if (status == "succeed" || status == "failed") {
    return;
  }
  const auto ended = [&] { world.job_ended("kling"); };
  d["updated_at"] = static_cast<std::int64_t>(std::time(nullptr)) * 1000;
  if (++t.polls < t.m.steps) {
    d["task_status"] = "processing";
    return;
  }
  if (t.m.fail) {
    d["task_status"] = "failed";
    d["task_status_msg"] = "Task failed: internal error, please try again";
    ended();
    return;
  }
  d["task_status"] = "succeed";
  const std::string url =
      world.publish({t.m.wrong_type ? fake_png(64, 36, "x") : fake_mp4(), "video/mp4",
                     std::chrono::steady_clock::now() + (t.m.expire ? 0s : 30 * 24h), ""});
  d["task_result"] = {{"videos", json::array{json::object{{"id", "v1"}, {"url", url}, {"duration", "5"}}}}};
  d["final_unit_deduction"] = "5";
  ended();
}

// GET /v1/videos/{kind}?external_task_id=…: the task the caller named at submission.
fake_response find_external(fake_world& world, const std::string& kind, const std::string& external) {
  std::lock_guard lock(world.mutex);
  for (auto& [key, t] : tasks()) {
    if (key.starts_with(kind + "/") &&
        t.data["task_info"].as_object()["external_task_id"] == json::value(external)) {
      advance(world, t);
      return json_response(200, envelope(0, "SUCCEED", t.data));
    }
  }
  return json_response(404, envelope(1203, "task not found"));
}

}  // namespace

std::optional<fake_response> fake_kling(fake_world& world, const fake_request& r, std::string_view path) {
  if (const std::string problem = jwt_problem(r.header("authorization")); !problem.empty()) {
    return json_response(401, envelope(1004, problem));
  }
  const std::string p(path);
  for (const std::string kind : {"text2video", "image2video"}) {
    const std::string base = "/v1/videos/" + kind;
    if (p == base && r.method == "POST") {
      return create(world, r, kind);
    }
    if (p == base && r.method == "GET" && !r.query_value("external_task_id").empty()) {
      return find_external(world, kind, r.query_value("external_task_id"));
    }
    if (p.starts_with(base + "/") && r.method == "GET") {
      std::lock_guard lock(world.mutex);
      const auto it = tasks().find(kind + "/" + p.substr(base.size() + 1));
      if (it == tasks().end()) {
        return json_response(404, envelope(1203, "task not found"));
      }
      advance(world, it->second);
      return json_response(200, envelope(0, "SUCCEED", it->second.data));
    }
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
