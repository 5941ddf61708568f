// ComfyUI: an API-format workflow file named in the catalog, with the prompt, the input images
// (uploaded with POST /upload/image), the size and a seed put into named nodes; POST /prompt, then
// GET /history/{prompt_id} until it holds the run, then the outputs from GET /view. The prompt_id is
// chosen by Gesso from the task id, so a submission whose answer was lost is found in the queue or the
// history instead of being sent again. docs/engines.md#comfyui.

#include "core/hmac.hpp"
#include "server/engines/providers/adapters.hpp"

#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// A UUID-shaped prompt id derived from the task id (ComfyUI accepts a client-chosen prompt_id).
std::string prompt_id_of(const std::string& task_id) {
  std::string hex = to_hex(task_id);
  // The task id's last 16 characters: its random part (the first ones are its creation time).
  hex = hex.size() > 32 ? hex.substr(hex.size() - 32) : std::string(32 - hex.size(), '0') + hex;
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20, 12);
}

std::string query_encoded(std::string_view text) {
  return boost::urls::encode(text, boost::urls::unreserved_chars);
}

class comfyui final : public provider_adapter {
 public:
  comfyui(const route_settings& s, const provider_client& client, const model_spec& model)
      : client_(&client),
        settings_(&s),
        long_side_(static_cast<int>(number_setting(s, "long_side", 64, 8192, 1024))) {
    const std::string path = text_setting(s, "workflow", "");
    if (path.empty()) {
      throw std::invalid_argument("settings.workflow is required: the path of an API-format workflow file");
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    const json::value parsed = json::parse(text.str(), ec);
    if (!in || ec || !parsed.is_object() || parsed.as_object().empty()) {
      throw std::invalid_argument("settings.workflow: " + path +
                                  " is not an API-format workflow (a JSON object of nodes)");
    }
    workflow_ = parsed.as_object();
    prompt_node_ = node_setting("prompt_node", "text", true);
    size_node_ = node_setting("size_node", "width", false);
    seed_node_ = node_setting("seed_node", "seed", false);
    if (const json::value* images = s.extra.if_contains("image_nodes")) {
      if (!images->is_array()) {
        throw std::invalid_argument("settings.image_nodes must be an array of node ids");
      }
      for (const json::value& id : images->as_array()) {
        image_nodes_.push_back(
            checked_node(id.is_string() ? std::string(id.as_string()) : "", "image_nodes", "image"));
      }
    }
    check_input_count(model, image_nodes_.size(), "the workflow", "its settings.image_nodes");
  }

  provider_step submit(const provider_request& r) override {
    const std::string prompt_id = prompt_id_of(r.task_id);
    if (provider_step found = find(r, prompt_id); found.what != provider_step::kind::failed) {
      return found;  // sent before: the answer was lost, the run was not
    }
    json::object workflow = workflow_;
    input_of(workflow, prompt_node_)["text"] = r.prompt;
    if (!size_node_.empty()) {
      const auto [w, h] = size_for_ratio(r.aspect_ratio, long_side_, 8);
      input_of(workflow, size_node_)["width"] = w;
      input_of(workflow, size_node_)["height"] = h;
    }
    if (!seed_node_.empty()) {
      input_of(workflow, seed_node_)["seed"] =
          static_cast<std::int64_t>(std::hash<std::string>{}(r.task_id) >> 12);
    }
    for (std::size_t i = 0; i < r.images.size() && i < image_nodes_.size(); ++i) {
      auto name = upload(r.images[i], r.task_id + "-" + std::to_string(i));
      if (!name) {
        return provider_step::retry(name.error().reason, 2s);
      }
      input_of(workflow, image_nodes_[i])["image"] = *name;
    }
    const json::object body{
        {"prompt", std::move(workflow)}, {"client_id", "gesso"}, {"prompt_id", prompt_id}};
    const auto answer =
        client_->send("POST", "/prompt", {{"Content-Type", "application/json"}}, json::serialize(body));
    if (!answer) {
      return no_answer("comfyui", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed) {
      // 400: {"error": {type, message, details}, "node_errors": {…}}: the workflow or its inputs.
      const std::string type = parsed ? string_at(*parsed, {"error", "type"}) : "";
      const std::string message = parsed ? string_at(*parsed, {"error", "message"}) : "";
      const std::string details = parsed ? string_at(*parsed, {"error", "details"}) : "";
      return answer_failure(*answer, "comfyui",
                            type + ": " + message + (details.empty() ? "" : " (" + details + ")"),
                            failure_kind::invalid_input, 2s);
    }
    const std::string id = string_at(*parsed, {"prompt_id"});
    return provider_step::pending(id.empty() ? prompt_id : id, settings_->poll_interval);
  }

  provider_step poll(const provider_request& r, const std::string& job) override {
    const auto answer = client_->send("GET", "/history/" + job, {}, {}, 16 * 1024 * 1024);
    if (!answer) {
      return no_answer("comfyui", answer.error());
    }
    const auto parsed = json_of(answer->body);
    if (answer->status != 200 || !parsed || !parsed->is_object()) {
      return answer_failure(*answer, "comfyui", "", failure_kind::provider_unavailable, 2s);
    }
    const json::value* run = parsed->as_object().if_contains(job);
    if (run == nullptr || !run->is_object()) {
      return provider_step::pending(job, settings_->poll_interval);  // {} until the prompt has run
    }
    const std::string status = string_at(*run, {"status", "status_str"});
    if (status == "error") {
      const std::string why = execution_error(*run);
      return provider_step::failed(
          looks_like_policy(why) ? failure_kind::content_policy : failure_kind::provider_unavailable,
          "comfyui: the workflow failed: " + why);
    }
    if (status != "success") {
      return provider_step::pending(job, settings_->poll_interval);
    }
    return output_of(r, *run);
  }

  void cancel(const std::string& job) override {
    // Removes it from the queue if it is still waiting; a running prompt is left (POST /interrupt would
    // stop whichever prompt runs, possibly another client's).
    static_cast<void>(
        client_->send("POST", "/queue", {{"Content-Type", "application/json"}},
                      json::serialize(json::object{{"delete", json::array{json::value(job)}}})));
  }

 private:
  std::string checked_node(const std::string& id, std::string_view setting, std::string_view input) const {
    const json::value* node = workflow_.if_contains(id);
    if (id.empty() || node == nullptr || !node->is_object() || !node->as_object().contains("inputs") ||
        !node->as_object().at("inputs").is_object()) {
      throw std::invalid_argument("settings." + std::string(setting) + ": node \"" + id +
                                  "\" is not in the workflow");
    }
    if (!node->as_object().at("inputs").as_object().contains(input)) {
      throw std::invalid_argument("settings." + std::string(setting) + ": node \"" + id +
                                  "\" has no input \"" + std::string(input) + "\"");
    }
    return id;
  }

  std::string node_setting(std::string_view name, std::string_view input, bool required) const {
    const std::string id = text_setting(*settings_, name, "");
    if (id.empty()) {
      if (required) {
        throw std::invalid_argument("settings." + std::string(name) +
                                    " is required: the node that takes the " + std::string(input));
      }
      return id;
    }
    return checked_node(id, name, input);
  }

  static json::object& input_of(json::object& workflow, const std::string& node) {
    return workflow.at(node).as_object().at("inputs").as_object();
  }

  // The history or the queue already holds this prompt id: it was submitted; poll it.
  provider_step find(const provider_request& r, const std::string& prompt_id) const {
    const auto history = client_->send("GET", "/history/" + prompt_id);
    if (history && history->status == 200) {
      if (const auto h = json_of(history->body); h && h->is_object() && h->as_object().contains(prompt_id)) {
        return provider_step::pending(prompt_id, 0ms);
      }
    }
    const auto queue = client_->send("GET", "/queue");
    if (queue && queue->status == 200 && queue->body.find("\"" + prompt_id + "\"") != std::string::npos) {
      return provider_step::pending(prompt_id, settings_->poll_interval);
    }
    static_cast<void>(r);
    return provider_step::failed(failure_kind::internal, "not submitted");
  }

  checked<std::string> upload(const provider_input& image, const std::string& name) const {
    multipart_form form;
    form.file("image", "gesso-" + name + "." + std::string(image.mime().substr(6)), image.mime(),
              image.bytes);
    form.field("type", "input");
    form.field("overwrite", "true");
    const std::string type = form.content_type();
    const auto answer = client_->send("POST", "/upload/image", {{"Content-Type", type}}, form.finish());
    if (!answer || answer->status != 200) {
      return refusal{
          "comfyui did not take an input image" +
          (answer ? " (HTTP " + std::to_string(answer->status) + ")" : ": " + answer.error().reason)};
    }
    const auto parsed = json_of(answer->body);
    const std::string stored = parsed ? string_at(*parsed, {"name"}) : "";
    const std::string subfolder = parsed ? string_at(*parsed, {"subfolder"}) : "";
    if (stored.empty()) {
      return refusal{"comfyui answered the upload without a name"};
    }
    return checked<std::string>(boost::system::in_place_value,
                                subfolder.empty() ? stored : subfolder + "/" + stored);
  }

  static std::string execution_error(const json::value& run) {
    const json::value* messages =
        run.as_object().contains("status") && run.as_object().at("status").is_object()
            ? run.as_object().at("status").as_object().if_contains("messages")
            : nullptr;
    if (messages != nullptr && messages->is_array()) {
      for (const json::value& m : messages->as_array()) {
        if (m.is_array() && m.as_array().size() == 2 && m.as_array()[0] == "execution_error") {
          return short_message(string_at(m.as_array()[1], {"exception_message"}));
        }
      }
    }
    return "no execution_error message";
  }

  // The first output file of the task's type: images under "images", videos under node-specific keys
  // ("images" with "animated", "gifs", "videos"), told apart by their file names.
  provider_step output_of(const provider_request& r, const json::value& run) const {
    const json::value* outputs = run.as_object().if_contains("outputs");
    if (outputs != nullptr && outputs->is_object()) {
      for (const auto& [node, value] : outputs->as_object()) {
        if (!value.is_object()) {
          continue;
        }
        for (const auto& [key, files] : value.as_object()) {
          if (!files.is_array()) {
            continue;
          }
          for (const json::value& f : files.as_array()) {
            const std::string filename = string_at(f, {"filename"});
            const bool video = filename.ends_with(".mp4");
            const bool image =
                filename.ends_with(".png") || filename.ends_with(".jpg") || filename.ends_with(".webp");
            if ((r.type == task_type::video && video) || (r.type == task_type::image && image)) {
              const std::string type = string_at(f, {"type"}).empty() ? "output" : string_at(f, {"type"});
              return provider_step::done({provider_output{
                  .bytes = {},
                  .url = client_->url_of("/view?filename=" + query_encoded(filename) +
                                         "&subfolder=" + query_encoded(string_at(f, {"subfolder"})) +
                                         "&type=" + query_encoded(type)),
                  .with_auth = true}});
            }
          }
        }
      }
    }
    return provider_step::failed(failure_kind::internal,
                                 std::string("comfyui's workflow saved no ") +
                                     (r.type == task_type::video ? "MP4" : "PNG, JPEG or WebP") + " output");
  }

  const provider_client* client_;
  const route_settings* settings_;
  int long_side_;
  json::object workflow_;
  std::string prompt_node_;
  std::string size_node_;
  std::string seed_node_;
  std::vector<std::string> image_nodes_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_comfyui(const route_settings& s, const provider_client& client,
                                               const model_spec& model) {
  return std::make_unique<comfyui>(s, client, model);
}

}  // namespace gesso::engines
