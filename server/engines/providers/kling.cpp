// Kling: POST /v1/videos/text2video (or image2video, with the image as raw base64), polled with
// GET /v1/videos/{kind}/{task_id}; every request signed with a JWT (HS256) made from the access key and
// the secret key: {"iss": access key, "exp": now + 1800, "nbf": now - 5}. Answers carry a {code,
// message, data} envelope whose code is 0 on success. docs/engines.md#kling.

#include "core/base64.hpp"
#include "core/hmac.hpp"
#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <ctime>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

std::string base64url(std::string_view bytes) {
  std::string s = encode_base64(bytes);
  for (char& c : s) {
    c = c == '+' ? '-' : c == '/' ? '_' : c;
  }
  while (s.ends_with('=')) {
    s.pop_back();
  }
  return s;
}

std::string kling_jwt(std::string_view access_key, std::string_view secret_key, std::int64_t now) {
  const std::string header = base64url(R"({"alg":"HS256","typ":"JWT"})");
  const std::string payload =
      base64url(json::serialize(json::object{{"iss", access_key}, {"exp", now + 1800}, {"nbf", now - 5}}));
  const std::string signing_input = header + "." + payload;
  return signing_input + "." + base64url(hmac_sha256(secret_key, signing_input));
}

namespace {

// Kling's codes (HTTP status aside): 1300/1301 the platform's or content security policy; 1200–1201
// parameters; 1302/1303 rate and concurrency limits; 1000–1004 authentication.
failure_kind kind_of_code(std::int64_t code, std::string_view message) {
  if (code == 1300 || code == 1301 || looks_like_policy(message)) {
    return failure_kind::content_policy;
  }
  if (code == 1200 || code == 1201) {
    return failure_kind::invalid_input;
  }
  return failure_kind::provider_unavailable;
}

class kling final : public provider_adapter {
 public:
  kling(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client), settings_(&s), mode_(text_setting(s, "mode", "std")) {
    const std::string secret_env = text_setting(s, "secret_key_env", "");
    const char* secret = secret_env.empty() ? nullptr : std::getenv(secret_env.c_str());
    if (secret_env.empty()) {
      throw std::invalid_argument(
          "settings.secret_key_env is required: it names the variable holding the secret key");
    }
    if (secret == nullptr || *secret == '\0') {
      throw std::invalid_argument("settings.secret_key_env: " + secret_env + " is not set");
    }
    secret_ = secret;
    if (model.type != task_type::video) {
      throw std::invalid_argument("kling makes videos: the model's task_type must be video");
    }
    for (const std::string& ratio : model.aspect_ratios) {
      if (ratio != "16:9" && ratio != "9:16" && ratio != "1:1") {
        throw std::invalid_argument("aspect ratio " + ratio +
                                    " cannot be honoured by kling (16:9, 9:16, 1:1)");
      }
    }
    if (model.duration_seconds != 5 && model.duration_seconds != 10) {
      throw std::invalid_argument("duration_seconds " + std::to_string(model.duration_seconds) +
                                  " cannot be honoured by kling (5 or 10)");
    }
    check_input_count(model, 1, "kling", "");
  }

  provider_step submit(const provider_request& r) override {
    const std::string kind = r.images.empty() ? "text2video" : "image2video";
    if (r.attempt > 1) {
      // An earlier attempt's answer may have been lost after Kling made the task: look for it by the
      // external_task_id every submission carries before sending it again.
      if (std::optional<provider_step> found = find(kind, r.task_id)) {
        return std::move(*found);
      }
    }
    json::object body{{"model_name", settings_->model},
                      {"prompt", r.prompt},
                      {"aspect_ratio", r.aspect_ratio},
                      {"duration", std::to_string(r.duration_seconds)},
                      {"mode", mode_},
                      {"external_task_id", r.task_id}};
    if (!r.images.empty()) {
      body["image"] = encode_base64(r.images.front().bytes);  // raw base64: Kling refuses a data: prefix
    }
    const auto answer = client_->send("POST", "/v1/videos/" + kind, headers(true), json::serialize(body));
    if (!answer) {
      return no_answer("kling", answer.error());
    }
    const auto parsed = json_of(answer->body);
    const std::int64_t code = parsed ? code_of(*parsed) : -1;
    const std::string message = parsed ? string_at(*parsed, {"message"}) : "";
    if (answer->status != 200 || code != 0) {
      return failure(*answer, code, message);
    }
    const std::string id = string_at(*parsed, {"data", "task_id"});
    if (id.empty()) {
      return provider_step::failed(failure_kind::internal, "kling accepted the task without data.task_id");
    }
    return provider_step::pending(kind + "/" + id, settings_->poll_interval);
  }

  provider_step poll(const provider_request&, const std::string& job) override {
    const auto answer = client_->send("GET", "/v1/videos/" + job, headers(false));
    if (!answer) {
      return no_answer("kling", answer.error());
    }
    const auto parsed = json_of(answer->body);
    const std::int64_t code = parsed ? code_of(*parsed) : -1;
    if (answer->status != 200 || code != 0) {
      return failure(*answer, code, parsed ? string_at(*parsed, {"message"}) : "");
    }
    const std::string status = string_at(*parsed, {"data", "task_status"});
    if (status == "submitted" || status == "processing") {
      return provider_step::pending(job, settings_->poll_interval);
    }
    if (status == "failed") {
      const std::string why = string_at(*parsed, {"data", "task_status_msg"});
      return provider_step::failed(
          looks_like_policy(why) ? failure_kind::content_policy : failure_kind::provider_unavailable,
          "kling: the task failed: " + short_message(why));
    }
    if (status != "succeed") {  // sic: Kling spells it so
      return provider_step::failed(failure_kind::internal,
                                   "kling answered an unknown task_status \"" + short_message(status) + "\"");
    }
    const json::value* videos = parsed->as_object().at("data").as_object().if_contains("task_result");
    std::string url;
    if (videos != nullptr && videos->is_object() && videos->as_object().contains("videos") &&
        videos->as_object().at("videos").is_array() && !videos->as_object().at("videos").as_array().empty()) {
      url = string_at(videos->as_object().at("videos").as_array()[0], {"url"});
    }
    if (url.empty()) {
      return provider_step::failed(failure_kind::internal,
                                   "kling finished without task_result.videos[0].url");
    }
    provider_step done = provider_step::done({provider_output{.bytes = {}, .url = url, .with_auth = false}});
    if (const std::string units = string_at(*parsed, {"data", "final_unit_deduction"}); !units.empty()) {
      done.cost = json::serialize(json::object{{"final_unit_deduction", units}});  // resource-pack units
    }
    return done;
  }

 private:
  // GET /v1/videos/{kind}?external_task_id=… (the query form is UNCONFIRMED: docs/engines.md#kling). The
  // task is found only when the answer names our external_task_id; "not found" (404, code 1202/1203, or
  // an answer that does not name it) lets the submission go; no answer or a 5xx retries the attempt, so
  // nothing is sent twice blindly.
  std::optional<provider_step> find(const std::string& kind, const std::string& task_id) const {
    const auto answer =
        client_->send("GET", "/v1/videos/" + kind + "?external_task_id=" + task_id, headers(false));
    if (!answer) {
      return no_answer("kling", answer.error());
    }
    if (retryable(*answer)) {
      return answer_failure(*answer, "kling", "looking for an earlier submission", failure_kind::internal,
                            5s);
    }
    const auto parsed = answer->status == 200 ? json_of(answer->body) : std::nullopt;
    if (!parsed || code_of(*parsed) != 0 || !parsed->is_object()) {
      return std::nullopt;
    }
    const json::value* data = parsed->as_object().if_contains("data");
    const auto names_ours = [&](const json::value& t) {
      return string_at(t, {"task_info", "external_task_id"}) == task_id && !string_at(t, {"task_id"}).empty();
    };
    const json::value* task = nullptr;
    if (data != nullptr && data->is_object() && names_ours(*data)) {
      task = data;
    } else if (data != nullptr && data->is_array()) {  // a list answer: ours among its items
      for (const json::value& item : data->as_array()) {
        task = names_ours(item) ? &item : task;
      }
    }
    if (task == nullptr) {
      return std::nullopt;
    }
    return provider_step::pending(kind + "/" + string_at(*task, {"task_id"}), 0ms);
  }

  header_list headers(bool json_body) const {
    header_list h{{"Authorization", "Bearer " + kling_jwt(settings_->api_key, secret_, std::time(nullptr))}};
    if (json_body) {
      h.emplace_back("Content-Type", "application/json");
    }
    return h;
  }

  static std::int64_t code_of(const json::value& v) {
    const json::object* o = v.if_object();
    return o != nullptr && o->contains("code") && o->at("code").is_int64() ? o->at("code").as_int64() : -1;
  }

  static provider_step failure(const http_answer& a, std::int64_t code, const std::string& message) {
    const std::string text = message + (code >= 0 ? " (code " + std::to_string(code) + ")" : "");
    if (a.status == 200) {  // an error in an HTTP 200 envelope
      return provider_step::failed(kind_of_code(code, message),
                                   "kling refused the task: " + short_message(text));
    }
    return answer_failure(a, "kling", text, kind_of_code(code, message), 5s);
  }

  const provider_client* client_;
  const route_settings* settings_;
  std::string mode_;
  std::string secret_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_kling(const route_settings& s, const provider_client& client,
                                             const model_spec& model) {
  return std::make_unique<kling>(s, client, model);
}

}  // namespace gesso::engines
