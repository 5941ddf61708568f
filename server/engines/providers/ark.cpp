// Volcengine Ark: Seedance videos as content-generation tasks (POST /api/v3/contents/generations/tasks,
// polled with GET …/tasks/{id}, cancelled with DELETE while queued) and Seedream images through the
// synchronous POST /api/v3/images/generations. The {"error": {code, message}} envelope; safety refusals
// carry codes such as InputTextSensitiveContentDetected. docs/engines.md#ark.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <set>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

const std::set<std::string> video_ratios{"16:9", "4:3", "1:1", "3:4", "9:16", "21:9"};

failure_kind kind_of(unsigned status, std::string_view code, std::string_view message) {
  if (looks_like_policy(code) || looks_like_policy(message)) {
    return failure_kind::content_policy;
  }
  return status == 400 ? failure_kind::invalid_input : failure_kind::provider_unavailable;
}

class ark final : public provider_adapter {
 public:
  ark(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        long_side_(static_cast<int>(number_setting(s, "long_side", 1024, 4096, 2048))),
        resolution_(text_setting(s, "resolution", "720p")),
        watermark_(flag_setting(s, "watermark", false)) {
    if (model.type == task_type::video) {
      for (const std::string& ratio : model.aspect_ratios) {
        if (!video_ratios.contains(ratio)) {
          throw std::invalid_argument("aspect ratio " + ratio + " cannot be honoured by ark's video tasks (" +
                                      "16:9, 4:3, 1:1, 3:4, 9:16, 21:9)");
        }
      }
      if (model.duration_seconds < 2 || model.duration_seconds > 12) {
        throw std::invalid_argument("duration_seconds " + std::to_string(model.duration_seconds) +
                                    " cannot be honoured by ark's video tasks (2 to 12)");
      }
    }
    const std::size_t most = model.type == task_type::video ? 2 : 10;  // first and last frame; Seedream's 10
    check_input_count(model, most, "ark", model.type == task_type::video ? "first and last frame" : "");
  }

  provider_step submit(const provider_request& r) override {
    return r.type == task_type::image ? generate_image(r) : create_video(r);
  }

  provider_step poll(const provider_request&, const std::string& job) override {
    const auto answer = client_->send("GET", "/api/v3/contents/generations/tasks/" + job);
    if (!answer) {
      return no_answer("ark", answer.error());
    }
    const auto body = json_of(answer->body);
    if (answer->status != 200 || !body) {
      return failure(*answer, body);
    }
    const std::string status = string_at(*body, {"status"});
    if (status == "queued" || status == "running") {
      return provider_step::pending(job, settings_->poll_interval);
    }
    if (status == "failed") {
      const std::string code = string_at(*body, {"error", "code"});
      const std::string message = string_at(*body, {"error", "message"});
      return provider_step::failed(kind_of(200, code, message) == failure_kind::content_policy
                                       ? failure_kind::content_policy
                                       : failure_kind::provider_unavailable,
                                   "ark: the task failed: " + short_message(code + ": " + message));
    }
    if (status == "cancelled") {
      return provider_step::failed(failure_kind::canceled, "ark: the task was cancelled");
    }
    if (status != "succeeded") {
      return provider_step::failed(failure_kind::internal,
                                   "ark answered an unknown status \"" + short_message(status) + "\"");
    }
    const std::string url = string_at(*body, {"content", "video_url"});
    if (url.empty()) {
      return provider_step::failed(failure_kind::internal, "ark finished without content.video_url");
    }
    provider_step done = provider_step::done({provider_output{.bytes = {}, .url = url, .with_auth = false}});
    if (const json::value* usage = body->as_object().if_contains("usage");
        usage != nullptr && usage->is_object()) {
      done.cost = json::serialize(json::object{{"usage", *usage}});  // Seedance bills by tokens
    }
    return done;
  }

  void cancel(const std::string& job) override {
    static_cast<void>(client_->send("DELETE", "/api/v3/contents/generations/tasks/" + job));
  }

 private:
  provider_step create_video(const provider_request& r) const {
    json::array content{json::object{{"type", "text"}, {"text", r.prompt}}};
    for (std::size_t i = 0; i < r.images.size(); ++i) {
      content.push_back(json::object{{"type", "image_url"},
                                     {"image_url", {{"url", r.images[i].data_url()}}},
                                     {"role", i == 0 ? "first_frame" : "last_frame"}});
    }
    const json::object body{{"model", settings_->model}, {"content", std::move(content)},
                            {"ratio", r.aspect_ratio},   {"duration", r.duration_seconds},
                            {"resolution", resolution_}, {"watermark", watermark_}};
    const auto answer = client_->send("POST", "/api/v3/contents/generations/tasks",
                                      {{"Content-Type", "application/json"}}, json::serialize(body));
    if (!answer) {
      return no_answer("ark", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed) {
      return failure(*answer, parsed);
    }
    const std::string id = string_at(*parsed, {"id"});
    if (id.empty()) {
      return provider_step::failed(failure_kind::internal, "ark accepted the task without an id");
    }
    return provider_step::pending(id, settings_->poll_interval);
  }

  provider_step generate_image(const provider_request& r) const {
    const auto [w, h] = size_for_ratio(r.aspect_ratio, long_side_, 16);
    json::object body{{"model", settings_->model},
                      {"prompt", r.prompt},
                      {"size", std::to_string(w) + "x" + std::to_string(h)},
                      {"response_format", "b64_json"},
                      {"watermark", watermark_}};
    if (!r.images.empty()) {
      json::array images;
      for (const provider_input& image : r.images) {
        images.emplace_back(image.data_url());
      }
      body["image"] = std::move(images);
    }
    const auto answer =
        client_->send("POST", "/api/v3/images/generations", {{"Content-Type", "application/json"}},
                      json::serialize(body), client_->inline_answer_bytes());
    if (!answer) {
      return no_answer("ark", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed) {
      return failure(*answer, parsed);
    }
    const json::value* data = parsed->as_object().if_contains("data");
    if (data == nullptr || !data->is_array() || data->as_array().empty()) {
      return provider_step::failed(failure_kind::internal, "ark answered without data[0]");
    }
    const json::value& first = data->as_array()[0];
    if (const std::string code = string_at(first, {"error", "code"}); !code.empty()) {
      // One image of a batch can fail on moderation without failing the call.
      const std::string message = string_at(first, {"error", "message"});
      return provider_step::failed(kind_of(200, code, message),
                                   "ark: " + short_message(code + ": " + message));
    }
    if (const std::string b64 = string_at(first, {"b64_json"}); !b64.empty()) {
      return provider_step::done(
          {provider_output{.bytes = {}, .url = "data:;base64," + b64, .with_auth = false}});
    }
    const std::string url = string_at(first, {"url"});
    if (url.empty()) {
      return provider_step::failed(failure_kind::internal, "ark answered data[0] without b64_json or url");
    }
    return provider_step::done({provider_output{.bytes = {}, .url = url, .with_auth = false}});
  }

  static provider_step failure(const http_answer& a, const std::optional<json::value>& body) {
    const std::string code = body ? string_at(*body, {"error", "code"}) : "";
    const std::string message = body ? string_at(*body, {"error", "message"}) : "";
    if (a.status == 200) {
      return provider_step::retry("ark answered something that is not JSON", 5s);
    }
    return answer_failure(a, "ark", code.empty() ? message : code + ": " + message,
                          kind_of(a.status, code, message), 5s);
  }

  const provider_client* client_;
  const route_settings* settings_;
  int long_side_;
  std::string resolution_;
  bool watermark_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_ark(const route_settings& s, const provider_client& client,
                                           const model_spec& model) {
  return std::make_unique<ark>(s, client, model);
}

}  // namespace gesso::engines
