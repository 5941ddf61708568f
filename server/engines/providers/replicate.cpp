// Replicate predictions, in the model form (POST /v1/models/{owner}/{name}/predictions) and the version
// form (POST /v1/predictions with "version"); polled with GET /v1/predictions/{id}; cancelled with
// POST /v1/predictions/{id}/cancel. docs/engines.md#replicate.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

bool is_hex_version(std::string_view v) {
  return v.size() == 64 && v.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// starting → queued, processing → running, succeeded → done, failed / canceled → failed.
provider_step read_prediction(const json::value& p, std::chrono::milliseconds poll_interval) {
  const std::string status = string_at(p, {"status"});
  const std::string id = string_at(p, {"id"});
  if (status == "starting" || status == "processing") {
    if (id.empty()) {
      return provider_step::failed(failure_kind::internal, "replicate answered a prediction without an id");
    }
    return provider_step::pending(id, poll_interval);
  }
  if (status == "failed") {
    const std::string error = string_at(p, {"error"});
    return provider_step::failed(
        looks_like_policy(error) ? failure_kind::content_policy : failure_kind::provider_unavailable,
        "replicate: the prediction failed: " + short_message(error));
  }
  if (status == "canceled") {
    return provider_step::failed(failure_kind::canceled, "replicate: the prediction was canceled");
  }
  if (status != "succeeded") {
    return provider_step::failed(failure_kind::internal,
                                 "replicate answered an unknown status \"" + short_message(status) + "\"");
  }
  const json::object* o = p.if_object();
  const json::value* output = o != nullptr ? o->if_contains("output") : nullptr;
  if (output != nullptr && output->is_array() && !output->as_array().empty()) {
    output = &output->as_array()[0];
  }
  if (output == nullptr || !output->is_string()) {
    const bool removed = o != nullptr && o->contains("data_removed") && o->at("data_removed").is_bool() &&
                         o->at("data_removed").as_bool();
    return provider_step::failed(failure_kind::provider_unavailable,
                                 removed
                                     ? "replicate removed the output before it was copied (outputs are kept "
                                       "one hour)"
                                     : "replicate finished without a file output");
  }
  provider_step done = provider_step::done(
      {provider_output{.bytes = {}, .url = std::string(output->as_string()), .with_auth = true}});
  if (const json::value* metrics = o != nullptr ? o->if_contains("metrics") : nullptr;
      metrics != nullptr && metrics->is_object() && metrics->as_object().contains("predict_time")) {
    // Replicate bills by the second of hardware time: predict_time is what was billed.
    done.cost = json::serialize(json::object{{"predict_time", metrics->as_object().at("predict_time")}});
  }
  return done;
}

class replicate final : public provider_adapter {
 public:
  replicate(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        prefer_wait_s_(number_setting(s, "prefer_wait_s", 0, 60, 0)),
        image_field_(text_setting(s, "image_field", "image")),
        pass_urls_(flag_setting(s, "pass_image_urls", false)) {
    const auto colon = s.model.find(':');
    const std::string name = s.model.substr(0, colon);
    if (colon != std::string::npos || is_hex_version(s.model)) {
      version_ = s.model;  // "owner/name:version" or a bare version id
    } else if (name.find('/') == std::string::npos || name.front() == '/' || name.back() == '/') {
      throw std::invalid_argument(
          "settings.model must be \"owner/name\", \"owner/name:version\" or a version id");
    } else {
      model_path_ = "/v1/models/" + name + "/predictions";
    }
    extra_input_ = object_setting(s, "input", "extra model inputs");
    check_input_count(model, 1, "replicate", "as settings.image_field");
  }

  provider_step submit(const provider_request& r) override {
    json::object input = extra_input_;
    input["prompt"] = r.prompt;
    input["aspect_ratio"] = r.aspect_ratio;
    if (r.type == task_type::video && r.duration_seconds > 0) {
      input["duration"] = r.duration_seconds;
    }
    if (!r.images.empty()) {
      // Replicate fetches http(s) URLs itself; data URLs are for files up to 256 KB, larger ones go
      // through its file API.
      const provider_input& image = r.images.front();
      if (pass_urls_ && !image.url.starts_with("data:")) {
        input[image_field_] = image.url;
      } else if (image.bytes.size() <= 256 * 1024) {
        input[image_field_] = image.data_url();
      } else {
        auto uploaded = upload(image);
        if (uploaded.what != provider_step::kind::done) {
          return uploaded;
        }
        input[image_field_] = uploaded.outputs.front().url;
      }
    }
    json::object body{{"input", std::move(input)}};
    if (!version_.empty()) {
      body["version"] = version_;
    }
    header_list headers{{"Content-Type", "application/json"}};
    if (prefer_wait_s_ > 0) {
      headers.emplace_back("Prefer", "wait=" + std::to_string(prefer_wait_s_));
    }
    // Under Prefer: wait the answer may inline the output as a data URI.
    const auto answer = client_->send("POST", model_path_.empty() ? "/v1/predictions" : model_path_, headers,
                                      json::serialize(body), client_->inline_answer_bytes());
    if (!answer) {
      return no_answer("replicate", answer.error());
    }
    return read(*answer);
  }

  provider_step poll(const provider_request&, const std::string& job) override {
    const auto answer = client_->send("GET", "/v1/predictions/" + job);
    if (!answer) {
      return no_answer("replicate", answer.error());
    }
    if (answer->status == 404) {
      return provider_step::failed(failure_kind::provider_unavailable,
                                   "replicate no longer knows the prediction");
    }
    return read(*answer);
  }

  void cancel(const std::string& job) override {
    static_cast<void>(client_->send("POST", "/v1/predictions/" + job + "/cancel"));
  }

 private:
  provider_step read(const http_answer& a) const {
    const auto body = json_of(a.body);
    if (a.status != 200 && a.status != 201) {
      // Problem details (RFC 7807): {"title", "detail", "status"}.
      const std::string detail = body ? string_at(*body, {"detail"}) : "";
      return answer_failure(a, "replicate", detail,
                            a.status == 422 || a.status == 400 ? failure_kind::invalid_input
                                                               : failure_kind::provider_unavailable,
                            5s);
    }
    if (!body) {
      return provider_step::retry("replicate answered something that is not JSON", 5s);
    }
    return read_prediction(*body, settings_->poll_interval);
  }

  provider_step upload(const provider_input& image) const {
    multipart_form form;
    form.file("content", "input", image.mime(), image.bytes);
    const std::string type = form.content_type();
    const auto answer = client_->send("POST", "/v1/files", {{"Content-Type", type}}, form.finish());
    if (!answer) {
      return no_answer("replicate", answer.error());
    }
    const auto body = json_of(answer->body);
    const std::string url = body ? string_at(*body, {"urls", "get"}) : "";
    if ((answer->status != 200 && answer->status != 201) || url.empty()) {
      return answer_failure(*answer, "replicate (file upload)", body ? string_at(*body, {"detail"}) : "",
                            failure_kind::invalid_input, 5s);
    }
    return provider_step::done({provider_output{.bytes = {}, .url = url, .with_auth = false}});
  }

  const provider_client* client_;
  const route_settings* settings_;
  std::int64_t prefer_wait_s_;
  std::string image_field_;
  bool pass_urls_;
  std::string version_;
  std::string model_path_;
  json::object extra_input_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_replicate(const route_settings& s, const provider_client& client,
                                                 const model_spec& model) {
  return std::make_unique<replicate>(s, client, model);
}

}  // namespace gesso::engines
