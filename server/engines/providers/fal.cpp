// The fal queue: POST https://queue.fal.run/{model_id} answers {request_id, status_url, response_url,
// cancel_url}; the status URL says IN_QUEUE, IN_PROGRESS or COMPLETED, and a COMPLETED request's result
// (or its error, as a non-2xx answer) is read from the response URL. docs/engines.md#fal.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// FLUX's image_size names where one fits the ratio; any other ratio as {width, height}.
json::value image_size(std::string_view ratio) {
  if (ratio == "1:1") {
    return "square_hd";
  }
  if (ratio == "4:3") {
    return "landscape_4_3";
  }
  if (ratio == "16:9") {
    return "landscape_16_9";
  }
  if (ratio == "3:4") {
    return "portrait_4_3";
  }
  if (ratio == "9:16") {
    return "portrait_16_9";
  }
  const auto [w, h] = size_for_ratio(ratio, 1024, 16);
  return json::object{{"width", w}, {"height", h}};
}

class fal final : public provider_adapter {
 public:
  fal(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        image_field_(text_setting(s, "image_field", "image_url")),
        pass_urls_(flag_setting(s, "pass_image_urls", false)) {
    if (s.model.empty() || s.model.front() == '/' || s.model.find("..") != std::string::npos) {
      throw std::invalid_argument("settings.model must be a fal model id such as fal-ai/flux/dev");
    }
    extra_input_ = object_setting(s, "input", "extra model inputs");
    check_input_count(model, 1, "fal", "as settings.image_field");
  }

  provider_step submit(const provider_request& r) override {
    json::object input = extra_input_;
    input["prompt"] = r.prompt;
    if (r.type == task_type::image) {
      input["image_size"] = image_size(r.aspect_ratio);
      input["num_images"] = 1;
      input["enable_safety_checker"] = true;
    } else {
      input["aspect_ratio"] = r.aspect_ratio;
      if (r.duration_seconds > 0) {
        input["duration"] = std::to_string(r.duration_seconds);  // a string enum on fal's video models
      }
    }
    if (!r.images.empty()) {
      const provider_input& image = r.images.front();
      input[image_field_] = pass_urls_ && !image.url.starts_with("data:") ? image.url : image.data_url();
    }
    const auto answer = client_->send("POST", "/" + settings_->model, {{"Content-Type", "application/json"}},
                                      json::serialize(input));
    if (!answer) {
      return no_answer("fal", answer.error());
    }
    const auto body = json_of(answer->body);
    if (answer->status != 200 && answer->status != 201 && answer->status != 202) {
      return failure(*answer, body);
    }
    const std::string status_url = body ? string_at(*body, {"status_url"}) : "";
    const std::string response_url = body ? string_at(*body, {"response_url"}) : "";
    if (status_url.empty() || response_url.empty()) {
      return provider_step::failed(failure_kind::internal,
                                   "fal accepted the request without status and response URLs");
    }
    // The returned URLs, not ones built from the model id: fal drops the model's sub-path in them.
    return provider_step::pending(
        json::serialize(json::object{{"status_url", status_url},
                                     {"response_url", response_url},
                                     {"cancel_url", string_at(*body, {"cancel_url"})}}),
        settings_->poll_interval);
  }

  provider_step poll(const provider_request& r, const std::string& job) override {
    const auto urls = json_of(job);
    if (!urls) {
      return provider_step::failed(failure_kind::internal, "the fal job recorded on the task cannot be read");
    }
    const auto answer = client_->send("GET", string_at(*urls, {"status_url"}));
    if (!answer) {
      return no_answer("fal", answer.error());
    }
    const auto body = json_of(answer->body);
    if (answer->status != 200 && answer->status != 202) {
      return failure(*answer, body);
    }
    const std::string status = body ? string_at(*body, {"status"}) : "";
    if (status == "IN_QUEUE" || status == "IN_PROGRESS") {
      return provider_step::pending(job, settings_->poll_interval);
    }
    if (status != "COMPLETED") {
      return provider_step::failed(failure_kind::internal,
                                   "fal answered an unknown status \"" + short_message(status) + "\"");
    }
    return result(r, string_at(*urls, {"response_url"}));
  }

  void cancel(const std::string& job) override {
    if (const auto urls = json_of(job); urls && !string_at(*urls, {"cancel_url"}).empty()) {
      static_cast<void>(client_->send("PUT", string_at(*urls, {"cancel_url"})));
    }
  }

 private:
  // COMPLETED says only that the request ended: the result says whether it succeeded.
  provider_step result(const provider_request& r, const std::string& response_url) const {
    const auto answer = client_->send("GET", response_url, {}, {}, 16 * 1024 * 1024);
    if (!answer) {
      return no_answer("fal", answer.error());
    }
    const auto body = json_of(answer->body);
    if (answer->status < 200 || answer->status >= 300) {
      // An error type (header or body) is the request's own failure, final; without one, the result
      // could not be read this time and is read again at the next poll.
      const bool request_failed = !header_value(*answer, "X-Fal-Error-Type").empty() ||
                                  (body && !string_at(*body, {"error_type"}).empty()) ||
                                  answer->status == 422;
      provider_step step = failure(*answer, body);
      if (request_failed && step.what == provider_step::kind::retry) {
        return provider_step::failed(failure_kind::provider_unavailable, step.message);
      }
      return step;
    }
    if (!body || !body->is_object()) {
      return provider_step::retry("fal answered a result that is not JSON", 5s);
    }
    const json::object& o = body->as_object();
    if (const json::value* nsfw = o.if_contains("has_nsfw_concepts"); nsfw != nullptr && nsfw->is_array()) {
      for (const json::value& flag : nsfw->as_array()) {
        if (flag.is_bool() && flag.as_bool()) {
          return provider_step::failed(failure_kind::content_policy,
                                       "fal's safety checker flagged the image (has_nsfw_concepts)");
        }
      }
    }
    std::string url;
    if (r.type == task_type::image) {
      const json::value* images = o.if_contains("images");
      if (images != nullptr && images->is_array() && !images->as_array().empty()) {
        url = string_at(images->as_array()[0], {"url"});
      }
    } else {
      url = string_at(*body, {"video", "url"});
    }
    if (url.empty()) {
      return provider_step::failed(
          failure_kind::internal,
          std::string("fal's result has no ") + (r.type == task_type::image ? "images[0].url" : "video.url"));
    }
    return provider_step::done({provider_output{.bytes = {}, .url = url, .with_auth = false}});
  }

  // 422 {"detail": [{loc, msg, type}]} is the input; {"detail", "error_type"} an infrastructure error.
  static provider_step failure(const http_answer& a, const std::optional<json::value>& body) {
    std::string detail = body ? string_at(*body, {"detail"}) : "";
    const json::object* o = body ? body->if_object() : nullptr;
    if (detail.empty() && o != nullptr && o->contains("detail") && o->at("detail").is_array() &&
        !o->at("detail").as_array().empty()) {
      detail = string_at(o->at("detail").as_array()[0], {"msg"});
    }
    failure_kind kind = failure_kind::provider_unavailable;
    if (looks_like_policy(detail)) {
      kind = failure_kind::content_policy;
    } else if (a.status == 422 || a.status == 400) {
      kind = failure_kind::invalid_input;
    }
    return answer_failure(a, "fal", detail, kind, 5s);
  }

  const provider_client* client_;
  const route_settings* settings_;
  std::string image_field_;
  bool pass_urls_;
  json::object extra_input_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_fal(const route_settings& s, const provider_client& client,
                                           const model_spec& model) {
  return std::make_unique<fal>(s, client, model);
}

}  // namespace gesso::engines
