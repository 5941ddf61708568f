// stable-diffusion.cpp's native async API (examples/server): POST /sdcpp/v1/img_gen or /vid_gen answers
// 202 with a job id; GET /sdcpp/v1/jobs/{id} says queued, generating, completed, failed or cancelled;
// POST /sdcpp/v1/jobs/{id}/cancel. Self-hosted: base_url is required, a key is optional.
// docs/engines.md#sdcpp.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

class sdcpp final : public provider_adapter {
 public:
  sdcpp(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        long_side_(static_cast<int>(number_setting(s, "long_side", 256, 4096, 1024))),
        steps_(number_setting(s, "sample_steps", 1, 200, 0)),
        seed_(number_setting(s, "seed", -1, INT32_MAX, -1)) {
    check_input_count(model, 1, "sdcpp", "as init_image");
  }

  provider_step submit(const provider_request& r) override {
    const auto [width, height] = size_for_ratio(r.aspect_ratio, long_side_, 64);
    json::object body{{"prompt", r.prompt}, {"width", width}, {"height", height}, {"seed", seed_}};
    if (steps_ > 0) {
      body["sample_params"] = json::object{{"sample_steps", steps_}};
    }
    if (!r.images.empty()) {
      body["init_image"] = r.images.front().data_url();
    }
    if (r.type == task_type::image) {
      body["batch_count"] = 1;
      body["output_format"] = "png";
    } else {
      body["fps"] = 16;
      body["video_frames"] = std::max(1, r.duration_seconds) * 16 + 1;
      body["output_format"] = "mp4";
    }
    const auto answer =
        client_->send("POST", r.type == task_type::image ? "/sdcpp/v1/img_gen" : "/sdcpp/v1/vid_gen",
                      {{"Content-Type", "application/json"}}, json::serialize(body));
    if (!answer) {
      return no_answer("sdcpp", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 202 && answer->status != 200) {
      // 400: invalid parameters; 429: the queue is full; 500: an exception while submitting.
      return answer_failure(
          *answer, "sdcpp", parsed ? error_message(*parsed) : "",
          answer->status == 400 ? failure_kind::invalid_input : failure_kind::provider_unavailable, 5s);
    }
    const std::string id = parsed ? string_at(*parsed, {"id"}) : "";
    if (id.empty()) {
      return provider_step::failed(failure_kind::internal, "sdcpp accepted the job without an id");
    }
    return provider_step::pending(id, settings_->poll_interval);
  }

  provider_step poll(const provider_request& r, const std::string& job) override {
    const auto answer = client_->send("GET", "/sdcpp/v1/jobs/" + job, {}, {}, client_->inline_answer_bytes());
    if (!answer) {
      return no_answer("sdcpp", answer.error());
    }
    if (answer->status == 404 || answer->status == 410) {
      return provider_step::failed(failure_kind::provider_unavailable,
                                   "sdcpp no longer knows the job (the server restarted or expired it)");
    }
    const auto body = json_of(answer->body);
    if (answer->status != 200 || !body) {
      return answer_failure(*answer, "sdcpp", "", failure_kind::provider_unavailable, 5s);
    }
    const std::string status = string_at(*body, {"status"});
    if (status == "queued" || status == "generating") {
      return provider_step::pending(job, settings_->poll_interval);
    }
    if (status == "failed") {
      const std::string message = error_message(*body);
      return provider_step::failed(
          looks_like_policy(message) ? failure_kind::content_policy : failure_kind::provider_unavailable,
          "sdcpp: the job failed: " + short_message(message));
    }
    if (status == "cancelled") {
      return provider_step::failed(failure_kind::canceled, "sdcpp: the job was cancelled");
    }
    if (status != "completed") {
      return provider_step::failed(failure_kind::internal,
                                   "sdcpp answered an unknown status \"" + short_message(status) + "\"");
    }
    std::string b64;
    const json::value* result = body->as_object().if_contains("result");
    if (r.type == task_type::image && result != nullptr && result->is_object()) {
      const json::value* images = result->as_object().if_contains("images");
      if (images != nullptr && images->is_array() && !images->as_array().empty()) {
        b64 = string_at(images->as_array()[0], {"b64_json"});
      }
    } else if (result != nullptr) {
      b64 = string_at(*result, {"b64_json"});
    }
    if (b64.empty()) {
      return provider_step::failed(failure_kind::internal,
                                   "sdcpp completed the job without a b64_json result");
    }
    return provider_step::done(
        {provider_output{.bytes = {}, .url = "data:;base64," + b64, .with_auth = false}});
  }

  void cancel(const std::string& job) override {
    static_cast<void>(client_->send("POST", "/sdcpp/v1/jobs/" + job + "/cancel"));
  }

 private:
  static std::string error_message(const json::value& body) {
    std::string message = string_at(body, {"error", "message"});
    return message.empty() ? string_at(body, {"error"}) : message;
  }

  const provider_client* client_;
  const route_settings* settings_;
  int long_side_;
  std::int64_t steps_;
  std::int64_t seed_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_sdcpp(const route_settings& s, const provider_client& client,
                                             const model_spec& model) {
  return std::make_unique<sdcpp>(s, client, model);
}

}  // namespace gesso::engines
