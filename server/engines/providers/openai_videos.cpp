// OpenAI Videos (and vLLM-Omni): POST /v1/videos (multipart: prompt, model, seconds as a string, size,
// input_reference), GET /v1/videos/{id} until completed or failed, at the pace the answer's
// openai-poll-after-ms header asks; the MP4 from GET /v1/videos/{id}/content with the key. There is no
// cancel. docs/engines.md#openai-videos.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <map>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

class openai_videos final : public provider_adapter {
 public:
  openai_videos(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client), settings_(&s) {
    if (model.type != task_type::video) {
      throw std::invalid_argument("openai-videos makes videos: the model's task_type must be video");
    }
    const bool pro = s.model.find("pro") != std::string::npos;
    const json::value* sizes = s.extra.if_contains("sizes");
    if (sizes != nullptr && !sizes->is_object()) {
      throw std::invalid_argument("settings.sizes must be an object from aspect ratio to \"WxH\"");
    }
    for (const std::string& ratio : model.aspect_ratios) {
      std::string size = ratio == "16:9"   ? (pro ? "1792x1024" : "1280x720")
                         : ratio == "9:16" ? (pro ? "1024x1792" : "720x1280")
                                           : "";
      if (sizes != nullptr) {
        if (const json::value* given = sizes->as_object().if_contains(ratio);
            given != nullptr && given->is_string()) {
          size = std::string(given->as_string());
        }
      }
      if (size.empty()) {
        throw std::invalid_argument("aspect ratio " + ratio +
                                    " cannot be honoured by openai-videos (16:9, 9:16)");
      }
      sizes_[ratio] = size;
    }
    const int seconds = model.duration_seconds;
    if (seconds != 4 && seconds != 8 && seconds != 12) {
      throw std::invalid_argument("duration_seconds " + std::to_string(seconds) +
                                  " cannot be honoured by openai-videos (4, 8 or 12)");
    }
    check_input_count(model, 1, "openai-videos", "as input_reference");
  }

  provider_step submit(const provider_request& r) override {
    multipart_form form;
    form.field("model", settings_->model);
    form.field("prompt", r.prompt);
    form.field("seconds", std::to_string(r.duration_seconds));
    form.field("size", sizes_.at(r.aspect_ratio));
    if (!r.images.empty()) {
      const provider_input& image = r.images.front();
      form.file("input_reference", "reference", image.mime(), image.bytes);
    }
    const std::string type = form.content_type();
    return read(client_->send("POST", "/v1/videos", {{"Content-Type", type}}, form.finish()));
  }

  provider_step poll(const provider_request&, const std::string& job) override {
    return read(client_->send("GET", "/v1/videos/" + job));
  }

 private:
  // Create and retrieve both answer a Video object.
  provider_step read(const checked<http_answer>& answer) const {
    if (!answer) {
      return no_answer("openai-videos", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed) {
      return failure(*answer, parsed);
    }
    return read_video(*answer, *parsed);
  }

  // queued → 1, in_progress → 2, completed → 3, failed → 4.
  provider_step read_video(const http_answer& a, const json::value& video) const {
    const std::string id = string_at(video, {"id"});
    const std::string status = string_at(video, {"status"});
    if (id.empty() || id.find('/') != std::string::npos) {
      return provider_step::failed(failure_kind::internal,
                                   "openai-videos answered a video without a usable id");
    }
    if (status == "queued" || status == "in_progress") {
      int progress = -1;
      if (const json::object* o = video.if_object();
          o != nullptr && o->contains("progress") && o->at("progress").is_int64()) {
        progress = static_cast<int>(o->at("progress").as_int64());
      }
      // The pace openai-poll-after-ms asks, never faster than the route's poll_interval_ms (an operator who
      // set a slow interval for many tasks in flight keeps it, docs/benchmarks.md).
      return provider_step::pending(id, poll_delay(a, "openai-poll-after-ms", settings_->poll_interval),
                                    progress);
    }
    if (status == "failed") {
      const std::string code = string_at(video, {"error", "code"});
      const std::string message = string_at(video, {"error", "message"});
      return provider_step::failed(
          looks_like_policy(code) || looks_like_policy(message) ? failure_kind::content_policy
                                                                : failure_kind::provider_unavailable,
          "openai-videos: the video failed: " + short_message(code + ": " + message));
    }
    if (status != "completed") {
      return provider_step::failed(failure_kind::internal, "openai-videos answered an unknown status \"" +
                                                               short_message(status) + "\"");
    }
    return provider_step::done(
        {provider_output{.bytes = {},
                         .url = client_->url_of("/v1/videos/" + id + "/content?variant=video"),
                         .with_auth = true}});
  }

  static provider_step failure(const http_answer& a, const std::optional<json::value>& body) {
    const std::string code = body ? string_at(*body, {"error", "code"}) : "";
    const std::string message = body ? string_at(*body, {"error", "message"}) : "";
    if (a.status == 200) {
      return provider_step::retry("openai-videos answered something that is not JSON", 5s);
    }
    failure_kind kind = failure_kind::provider_unavailable;
    if (looks_like_policy(code) || looks_like_policy(message)) {
      kind = failure_kind::content_policy;
    } else if (a.status == 400 || a.status == 422) {
      kind = failure_kind::invalid_input;
    }
    return answer_failure(a, "openai-videos", message, kind, 2s);
  }

  const provider_client* client_;
  const route_settings* settings_;
  std::map<std::string, std::string> sizes_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_openai_videos(const route_settings& s, const provider_client& client,
                                                     const model_spec& model) {
  return std::make_unique<openai_videos>(s, client, model);
}

}  // namespace gesso::engines
