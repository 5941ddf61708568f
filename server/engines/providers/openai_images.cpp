// OpenAI Images (and what speaks it: stable-diffusion.cpp's server, vLLM-Omni, LocalAI):
// POST /v1/images/generations (JSON) without input images, /v1/images/edits (multipart image[]) with
// them. Synchronous: the answer carries the image as b64_json (GPT image models) or a url (dall-e,
// valid 60 min). docs/engines.md#openai-images.

#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>

#include <map>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// The size each aspect ratio gets: the closest orientation the model offers (a table; docs/engines.md).
std::string default_size(std::string_view model, std::string_view ratio) {
  const auto [w, h] = size_for_ratio(ratio, 100, 1);
  const int orientation = w == h ? 0 : (w > h ? 1 : -1);
  if (model.starts_with("dall-e-2")) {
    return orientation == 0 ? "1024x1024" : "";
  }
  if (model.starts_with("dall-e-3")) {
    return orientation == 0 ? "1024x1024" : orientation > 0 ? "1792x1024" : "1024x1792";
  }
  return orientation == 0 ? "1024x1024" : orientation > 0 ? "1536x1024" : "1024x1536";
}

class openai_images final : public provider_adapter {
 public:
  openai_images(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        model_(s.model),
        quality_(text_setting(s, "quality", "")),
        moderation_(text_setting(s, "moderation", "")),
        output_format_(text_setting(s, "output_format", "png")) {
    const json::value* sizes = s.extra.if_contains("sizes");
    if (sizes != nullptr && !sizes->is_object()) {
      throw std::invalid_argument("settings.sizes must be an object from aspect ratio to \"WxH\"");
    }
    for (const std::string& ratio : model.aspect_ratios) {
      std::string size = default_size(model_, ratio);
      if (sizes != nullptr) {
        if (const json::value* given = sizes->as_object().if_contains(ratio);
            given != nullptr && given->is_string()) {
          size = std::string(given->as_string());
        }
      }
      if (size.empty()) {
        throw std::invalid_argument("aspect ratio " + ratio + " cannot be honoured by " + model_ +
                                    " (square sizes only); give settings.sizes or remove the ratio");
      }
      sizes_[ratio] = size;
    }
    check_input_count(model, 16, "openai-images", "");
    if (model.type != task_type::image) {
      throw std::invalid_argument("openai-images makes images; use openai-videos for a video model");
    }
  }

  provider_step submit(const provider_request& r) override {
    const std::string size = sizes_.at(r.aspect_ratio);
    checked<http_answer> answer = r.images.empty() ? generate(r, size) : edit(r, size);
    if (!answer) {
      return no_answer("openai-images", answer.error());
    }
    return read_answer(*answer);
  }

  provider_step poll(const provider_request&, const std::string&) override {
    return provider_step::failed(failure_kind::internal,
                                 "openai-images is synchronous: there is nothing to poll");
  }

 private:
  checked<http_answer> generate(const provider_request& r, const std::string& size) const {
    json::object body{{"model", model_}, {"prompt", r.prompt}, {"n", 1}, {"size", size}};
    if (model_.starts_with("dall-e")) {
      body["response_format"] =
          "b64_json";  // the GPT image models always answer base64 and refuse this field
    } else {
      body["output_format"] = output_format_;
    }
    if (!quality_.empty()) {
      body["quality"] = quality_;
    }
    if (!moderation_.empty()) {
      body["moderation"] = moderation_;
    }
    return client_->send("POST", "/v1/images/generations", {{"Content-Type", "application/json"}},
                         json::serialize(body), client_->inline_answer_bytes());
  }

  checked<http_answer> edit(const provider_request& r, const std::string& size) const {
    multipart_form form;
    form.field("model", model_);
    form.field("prompt", r.prompt);
    form.field("n", "1");
    form.field("size", size);
    if (!quality_.empty()) {
      form.field("quality", quality_);
    }
    for (std::size_t i = 0; i < r.images.size(); ++i) {
      const provider_input& image = r.images[i];
      const std::string name =
          "input-" + std::to_string(i) + "." + std::string(image.mime().substr(image.mime().find('/') + 1));
      form.file("image[]", name, image.mime(), image.bytes);
    }
    const std::string type = form.content_type();
    return client_->send("POST", "/v1/images/edits", {{"Content-Type", type}}, form.finish(),
                         client_->inline_answer_bytes());
  }

  static provider_step read_answer(const http_answer& a) {
    const auto body = json_of(a.body);
    if (a.status != 200) {
      const std::string code = body ? string_at(*body, {"error", "code"}) : "";
      const std::string message = body ? string_at(*body, {"error", "message"}) : "";
      const std::string detail = message.empty() && body ? string_at(*body, {"detail"}) : message;
      failure_kind kind = failure_kind::provider_unavailable;
      if (code == "moderation_blocked" || code == "content_policy_violation" || looks_like_policy(code)) {
        kind = failure_kind::content_policy;
      } else if (a.status == 400 || a.status == 422) {
        kind = failure_kind::invalid_input;
      }
      return answer_failure(a, "openai-images", detail, kind, 2s);
    }
    const json::object* o = body ? body->if_object() : nullptr;
    const json::array* data = o != nullptr && o->contains("data") ? o->at("data").if_array() : nullptr;
    if (data == nullptr || data->empty() || !(*data)[0].is_object()) {
      return provider_step::failed(failure_kind::internal, "openai-images answered 200 without data[0]");
    }
    const json::object& first = (*data)[0].as_object();
    provider_output out;
    if (const json::value* b64 = first.if_contains("b64_json"); b64 != nullptr && b64->is_string()) {
      out.url = "data:image/png;base64," + std::string(b64->as_string());
    } else if (const json::value* url = first.if_contains("url"); url != nullptr && url->is_string()) {
      out.url = std::string(url->as_string());
    } else {
      return provider_step::failed(failure_kind::internal, "openai-images answered without b64_json or url");
    }
    provider_step done = provider_step::done({std::move(out)});
    if (const json::value* usage = body->as_object().if_contains("usage");
        usage != nullptr && usage->is_object()) {
      done.cost = json::serialize(json::object{{"usage", *usage}});  // tokens, as OpenAI bills images
    }
    return done;
  }

  const provider_client* client_;
  std::string model_;
  std::string quality_;
  std::string moderation_;
  std::string output_format_;
  std::map<std::string, std::string> sizes_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_openai_images(const route_settings& s, const provider_client& client,
                                                     const model_spec& model) {
  return std::make_unique<openai_images>(s, client, model);
}

}  // namespace gesso::engines
