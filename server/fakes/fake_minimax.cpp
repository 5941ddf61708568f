// MiniMax (Hailuo) video as PROVIDERS.md §9 describes it: a three-step flow. POST /v1/video_generation
// {model, prompt, first_frame_image, duration, resolution, prompt_optimizer} answers {task_id, base_resp};
// GET /v1/query/video_generation?task_id= answers status Queueing → Preparing → Processing → Success |
// Fail, with file_id on Success only; GET /v1/files/retrieve?file_id= answers file.download_url, valid
// 9 hours. Errors come back as HTTP 200 with base_resp.status_code ≠ 0: 1002 rate limit, 1004
// authentication, 1026 sensitive content, 2013 invalid parameters. Bearer auth.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct minimax_task {
  std::string status = "Queueing";
  std::string file_id;
  int polls = 0;
  markers m;
};

std::map<std::string, minimax_task>& tasks() {
  static std::map<std::string, minimax_task> all;
  return all;
}

std::map<std::string, std::string>& files() {  // file_id → download URL
  static std::map<std::string, std::string> all;
  return all;
}

json::object base_resp(int code, const std::string& message) {
  return json::object{{"status_code", code}, {"status_msg", message}};
}

std::string error_body(int code, const std::string& message) {
  return json::serialize(json::object{{"base_resp", base_resp(code, message)}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return error_body(status == 429 ? 1002 : 1000, message);
}

fake_response ok(json::object o) {
  o["base_resp"] = base_resp(0, "success");
  return json_response(200, json::serialize(o));
}

fake_response create(fake_world& world, const fake_request& r) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  if (o == nullptr || !o->contains("model") || !o->contains("prompt") || !o->at("prompt").is_string()) {
    return json_response(200, error_body(2013, "invalid params, model and prompt are required"));
  }
  if (const json::value* d = o->if_contains("duration");
      d != nullptr && !(d->is_int64() && (*d == 6 || *d == 10))) {
    return json_response(200, error_body(2013, "invalid params, duration must be 6 or 10"));
  }
  if (const json::value* res = o->if_contains("resolution");
      res != nullptr && !(res->is_string() && (*res == "512P" || *res == "768P" || *res == "1080P"))) {
    return json_response(200, error_body(2013, "invalid params, resolution"));
  }
  if (const json::value* image = o->if_contains("first_frame_image")) {
    const std::string text = image->is_string() ? std::string(image->as_string()) : "";
    const bool data_url = text.starts_with("data:image/") &&
                          engines::sniff_image(decode_base64(text.substr(text.find(',') + 1)).value_or(""));
    if (!data_url && !text.starts_with("http")) {
      return json_response(200, error_body(2013, "invalid params, first_frame_image"));
    }
  }
  const std::string prompt(o->at("prompt").as_string());
  if (auto fault = create_fault(world, "minimax", prompt, fault_body, true)) {
    return *fault;
  }
  minimax_task t;
  t.m = read_markers(prompt);
  if (t.m.policy) {
    return json_response(200, error_body(1026, "input new_sensitive"));
  }
  if (t.m.invalid) {
    return json_response(200, error_body(2013, "invalid params, prompt_optimizer"));
  }
  const std::string id = world.new_id("");
  std::lock_guard lock(world.mutex);
  tasks()[id] = t;
  return ok({{"task_id", id}});
}

fake_response query(fake_world& world, const std::string& id) {
  std::lock_guard lock(world.mutex);
  const auto it = tasks().find(id);
  if (it == tasks().end()) {
    return json_response(200, error_body(2013, "invalid params, task not found"));
  }
  minimax_task& t = it->second;
  if (t.status != "Success" && t.status != "Fail") {
    ++t.polls;
    if (t.polls < t.m.steps) {
      t.status = t.polls == 1 ? "Preparing" : "Processing";
    } else if (t.m.fail) {
      t.status = "Fail";
    } else {
      t.status = "Success";
      t.file_id = world.new_id("");
      files()[t.file_id] = world.publish({t.m.wrong_type ? fake_png(64, 36, "x") : fake_mp4(), "video/mp4",
                                          std::chrono::steady_clock::now() + (t.m.expire ? 0s : 9h), ""});
    }
  }
  json::object o{{"task_id", id}, {"status", t.status}};
  if (t.status == "Success") {
    o["file_id"] = t.file_id;
  }
  return ok(std::move(o));
}

fake_response retrieve(fake_world& world, const std::string& file_id) {
  std::lock_guard lock(world.mutex);
  const auto it = files().find(file_id);
  if (it == files().end()) {
    return json_response(200, error_body(2013, "invalid params, file not found"));
  }
  return ok({{"file",
              {{"file_id", file_id},
               {"bytes", 0},
               {"created_at", std::time(nullptr)},
               {"filename", "output.mp4"},
               {"purpose", "video_generation"},
               {"download_url", it->second}}}});
}

}  // namespace

std::optional<fake_response> fake_minimax(fake_world& world, const fake_request& r, std::string_view path) {
  if (!r.header("authorization").starts_with("Bearer ") || r.header("authorization").size() <= 7) {
    return json_response(200, error_body(1004,
                                         "login fail: Please carry the API secret key in the "
                                         "'Authorization' field of the request header"));
  }
  if (path == "/v1/video_generation" && r.method == "POST") {
    return create(world, r);
  }
  if (path == "/v1/query/video_generation" && r.method == "GET") {
    return query(world, r.query_value("task_id"));
  }
  if (path == "/v1/files/retrieve" && r.method == "GET") {
    return retrieve(world, r.query_value("file_id"));
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
