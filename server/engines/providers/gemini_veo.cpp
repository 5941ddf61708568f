// Gemini API Veo: POST /v1beta/models/{model}:predictLongRunning answers a long-running operation;
// GET /v1beta/{operation name} until done; the video is downloaded from its uri with the API key
// (x-goog-api-key). Input images go inline as base64 (the Gemini API refuses storage URIs).
// docs/engines.md#gemini-veo.

#include "server/engines/providers/adapters.hpp"

#include "core/base64.hpp"

#include <boost/json.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

class gemini_veo final : public provider_adapter {
 public:
  gemini_veo(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        resolution_(text_setting(s, "resolution", "")),
        person_generation_(text_setting(s, "person_generation", "")) {
    if (model.type != task_type::video) {
      throw std::invalid_argument("gemini-veo makes videos: the model's task_type must be video");
    }
    for (const std::string& ratio : model.aspect_ratios) {
      if (ratio != "16:9" && ratio != "9:16") {
        throw std::invalid_argument("aspect ratio " + ratio +
                                    " cannot be honoured by gemini-veo (16:9, 9:16)");
      }
    }
    check_input_count(model, 1, "gemini-veo", "");
  }

  provider_step submit(const provider_request& r) override {
    json::object instance{{"prompt", r.prompt}};
    if (!r.images.empty()) {
      instance["image"] = {{"bytesBase64Encoded", encode_base64(r.images.front().bytes)},
                           {"mimeType", r.images.front().mime()}};
    }
    json::object parameters{{"aspectRatio", r.aspect_ratio}, {"sampleCount", 1}};
    if (r.duration_seconds > 0) {
      parameters["durationSeconds"] = r.duration_seconds;
    }
    if (!resolution_.empty()) {
      parameters["resolution"] = resolution_;
    }
    if (!person_generation_.empty()) {
      parameters["personGeneration"] = person_generation_;
    }
    const json::object body{{"instances", json::array{std::move(instance)}},
                            {"parameters", std::move(parameters)}};
    const auto answer = client_->send("POST", "/v1beta/models/" + settings_->model + ":predictLongRunning",
                                      {{"Content-Type", "application/json"}}, json::serialize(body));
    if (!answer) {
      return no_answer("gemini-veo", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed) {
      return failure(*answer, parsed);
    }
    const std::string name = string_at(*parsed, {"name"});
    if (name.empty() || name.find("..") != std::string::npos || name.front() == '/') {
      return provider_step::failed(failure_kind::internal,
                                   "gemini-veo answered an operation without a usable name");
    }
    return provider_step::pending(name, settings_->poll_interval);
  }

  provider_step poll(const provider_request&, const std::string& job) override {
    const auto answer = client_->send("GET", "/v1beta/" + job, {}, {}, client_->inline_answer_bytes());
    if (!answer) {
      return no_answer("gemini-veo", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed || !parsed->is_object()) {
      return failure(*answer, parsed);
    }
    const json::object& op = parsed->as_object();
    const bool done = op.contains("done") && op.at("done").is_bool() && op.at("done").as_bool();
    if (!done) {
      return provider_step::pending(job, settings_->poll_interval);  // no queued/running distinction here
    }
    if (op.contains("error")) {
      const std::string message = string_at(*parsed, {"error", "message"});
      return provider_step::failed(
          looks_like_policy(message) ? failure_kind::content_policy : failure_kind::provider_unavailable,
          "gemini-veo: the operation failed: " + short_message(message));
    }
    const json::value* response = op.if_contains("response");
    const json::object* generated = response != nullptr && response->is_object() &&
                                            response->as_object().contains("generateVideoResponse") &&
                                            response->as_object().at("generateVideoResponse").is_object()
                                        ? &response->as_object().at("generateVideoResponse").as_object()
                                        : nullptr;
    const json::value* samples = generated != nullptr ? generated->if_contains("generatedSamples") : nullptr;
    if (samples == nullptr || !samples->is_array() || samples->as_array().empty()) {
      // Done with no sample: the responsible-AI filter removed them (raiMediaFilteredCount > 0).
      const json::value* filtered =
          generated != nullptr ? generated->if_contains("raiMediaFilteredCount") : nullptr;
      if (filtered != nullptr && filtered->is_int64() && filtered->as_int64() > 0) {
        std::string reason;
        if (const json::value* reasons = generated->if_contains("raiMediaFilteredReasons");
            reasons != nullptr && reasons->is_array() && !reasons->as_array().empty() &&
            reasons->as_array()[0].is_string()) {
          reason = ": " + short_message(reasons->as_array()[0].as_string());
        }
        return provider_step::failed(failure_kind::content_policy, "gemini-veo filtered the video" + reason);
      }
      return provider_step::failed(failure_kind::internal, "gemini-veo finished without a generated sample");
    }
    const json::value& video = samples->as_array()[0];
    if (const std::string inline_video = string_at(video, {"video", "encodedVideo"}); !inline_video.empty()) {
      return provider_step::done(
          {provider_output{.bytes = {}, .url = "data:;base64," + inline_video, .with_auth = false}});
    }
    const std::string uri = string_at(video, {"video", "uri"});
    if (uri.empty()) {
      return provider_step::failed(failure_kind::internal, "gemini-veo's sample has no video.uri");
    }
    return provider_step::done(
        {provider_output{.bytes = {}, .url = uri, .with_auth = true}});  // needs the key
  }

 private:
  // google.rpc.Status: {"error": {"code", "message", "status"}}.
  static provider_step failure(const http_answer& a, const std::optional<json::value>& body) {
    const std::string message = body ? string_at(*body, {"error", "message"}) : "";
    const std::string status = body ? string_at(*body, {"error", "status"}) : "";
    if (a.status == 200) {
      return provider_step::retry("gemini-veo answered something that is not JSON", 5s);
    }
    failure_kind kind = failure_kind::provider_unavailable;
    if (looks_like_policy(message)) {
      kind = failure_kind::content_policy;
    } else if (a.status == 400 || status == "INVALID_ARGUMENT") {
      kind = failure_kind::invalid_input;
    }
    return answer_failure(a, "gemini-veo", status.empty() ? message : status + ": " + message, kind, 5s);
  }

  const provider_client* client_;
  const route_settings* settings_;
  std::string resolution_;
  std::string person_generation_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_gemini_veo(const route_settings& s, const provider_client& client,
                                                  const model_spec& model) {
  return std::make_unique<gemini_veo>(s, client, model);
}

}  // namespace gesso::engines
