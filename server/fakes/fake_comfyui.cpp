// ComfyUI's server as PROVIDERS.md §8 describes it: POST /upload/image (multipart image, type,
// overwrite) answering {name, subfolder, type}; POST /prompt with an API-format workflow, validated the
// way ComfyUI does (a LoadImage must name an uploaded file, the workflow must have an output node),
// answering {prompt_id, number, node_errors} or 400 {error: {type, message, details}, node_errors};
// GET /history/{prompt_id} answering {} until the prompt has run; GET /queue; GET /view. No auth.

#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <set>

namespace gesso::fakes {
namespace json = boost::json;

namespace {

struct comfy_prompt {
  int polls = 0;
  markers m;
  json::object outputs;
  bool failed = false;
};

struct comfy_state {
  std::map<std::string, std::string> uploads;  ///< name → bytes
  std::map<std::string, std::string> files;    ///< output filename → bytes
  std::map<std::string, comfy_prompt> prompts;
};

comfy_state& state() {
  static comfy_state s;
  return s;
}

fake_response validation_error(const std::string& node, const std::string& class_type,
                               const std::string& type, const std::string& message) {
  json::object node_errors{
      {node,
       {{"errors", json::array{json::object{{"type", type}, {"message", message}, {"details", message}}}},
        {"dependent_outputs", json::array{}},
        {"class_type", class_type}}}};
  return json_response(400, json::serialize(json::object{{"error",
                                                          {{"type", "prompt_outputs_failed_validation"},
                                                           {"message", "Prompt outputs failed validation"},
                                                           {"details", ""},
                                                           {"extra_info", json::object{}}}},
                                                         {"node_errors", std::move(node_errors)}}));
}

fake_response submit(fake_world& world, const fake_request& r) {
  static const std::set<std::string> output_nodes{"SaveImage", "SaveVideo", "VHS_VideoCombine"};
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  const json::object* o = ec ? nullptr : body.if_object();
  const json::object* workflow =
      o != nullptr && o->contains("prompt") ? o->at("prompt").if_object() : nullptr;
  if (workflow == nullptr) {
    return json_response(
        400,
        R"({"error":{"type":"no_prompt","message":"No prompt provided","details":"","extra_info":{}},"node_errors":{}})");
  }
  std::string text;
  int width = 512;
  int height = 512;
  std::string output_class;
  std::lock_guard lock(world.mutex);
  for (const auto& [id, node] : *workflow) {
    const json::object* n = node.if_object();
    const std::string class_type =
        n != nullptr && n->contains("class_type") && n->at("class_type").is_string()
            ? std::string(n->at("class_type").as_string())
            : "";
    const json::object* inputs =
        n != nullptr && n->contains("inputs") ? n->at("inputs").if_object() : nullptr;
    if (class_type.empty() || inputs == nullptr) {
      return validation_error(id, class_type, "invalid_prompt", "node is not {class_type, inputs}");
    }
    if (class_type == "LoadImage") {
      const std::string image = inputs->contains("image") && inputs->at("image").is_string()
                                    ? std::string(inputs->at("image").as_string())
                                    : "";
      if (!state().uploads.contains(image)) {
        return validation_error(id, class_type, "value_not_in_list",
                                "Value not in list: image: '" + image + "' not in (list of uploaded files)");
      }
    }
    if (class_type == "CLIPTextEncode" && text.empty() && inputs->contains("text") &&
        inputs->at("text").is_string()) {
      text = std::string(inputs->at("text").as_string());
    }
    if (class_type == "EmptyLatentImage") {
      width = inputs->contains("width") && inputs->at("width").is_int64()
                  ? static_cast<int>(inputs->at("width").as_int64())
                  : 0;
      height = inputs->contains("height") && inputs->at("height").is_int64()
                   ? static_cast<int>(inputs->at("height").as_int64())
                   : 0;
      if (width < 16 || height < 16 || width % 8 != 0 || height % 8 != 0) {
        return validation_error(id, class_type, "value_smaller_than_min",
                                "width and height must be multiples of 8");
      }
    }
    if (output_nodes.contains(class_type)) {
      output_class = class_type;
    }
  }
  if (output_class.empty()) {
    return json_response(
        400,
        R"({"error":{"type":"prompt_no_outputs","message":"Prompt has no outputs","details":"","extra_info":{}},"node_errors":{}})");
  }
  const std::string prompt_id = o->contains("prompt_id") && o->at("prompt_id").is_string()
                                    ? std::string(o->at("prompt_id").as_string())
                                    : world.new_id("p");
  comfy_prompt p;
  p.m = read_markers(text);
  const bool video = (output_class != "SaveImage") != p.m.wrong_type;
  const std::string filename = world.new_id("gesso_") + (video ? ".mp4" : ".png");
  state().files[filename] = video ? fake_mp4() : fake_png(width / 4, height / 4, text);
  p.outputs = {
      {"9",
       {{video ? "gifs" : "images",
         json::array{json::object{{"filename", filename}, {"subfolder", ""}, {"type", "output"}}}}}}};
  p.failed = p.m.fail || p.m.policy;
  state().prompts[prompt_id] = std::move(p);
  return json_response(200, json::serialize(json::object{{"prompt_id", prompt_id},
                                                         {"number", state().prompts.size()},
                                                         {"node_errors", json::object{}}}));
}

fake_response history(const std::string& id) {
  const auto it = state().prompts.find(id);
  if (it == state().prompts.end() || ++it->second.polls < it->second.m.steps) {
    return json_response(200, "{}");
  }
  const comfy_prompt& p = it->second;
  json::array messages{json::array{"execution_start", {{"prompt_id", id}}}};
  if (p.failed) {
    messages.push_back(
        json::array{"execution_error",
                    {{"prompt_id", id},
                     {"node_id", "3"},
                     {"node_type", "KSampler"},
                     {"exception_message",
                      p.m.policy ? "NSFW content detected by the safety checker" : "CUDA out of memory"},
                     {"exception_type", "RuntimeError"}}});
  } else {
    messages.push_back(json::array{"execution_success", {{"prompt_id", id}}});
  }
  json::object run{{"prompt", json::array{}},
                   {"outputs", p.failed ? json::object{} : p.outputs},
                   {"status",
                    {{"status_str", p.failed ? "error" : "success"},
                     {"completed", !p.failed},
                     {"messages", std::move(messages)}}},
                   {"meta", json::object{}}};
  return json_response(200, json::serialize(json::object{{id, std::move(run)}}));
}

}  // namespace

std::optional<fake_response> fake_comfyui(fake_world& world, const fake_request& r, std::string_view path) {
  const std::string p(path.starts_with("/api/") ? path.substr(4) : path);  // every route also under /api
  if (p == "/upload/image" && r.method == "POST") {
    const auto parts = multipart_parts(r);
    const auto image = parts.find("image");
    if (image == parts.end() || !engines::sniff_image(image->second)) {
      return json_response(400, "");
    }
    const std::string name = world.new_id("upload_") + ".png";
    std::lock_guard lock(world.mutex);
    state().uploads[name] = image->second;
    return json_response(200,
                         json::serialize(json::object{{"name", name}, {"subfolder", ""}, {"type", "input"}}));
  }
  if (p == "/prompt" && r.method == "POST") {
    return submit(world, r);
  }
  if (p.starts_with("/history/") && r.method == "GET") {
    std::lock_guard lock(world.mutex);
    return history(p.substr(9));
  }
  if (p == "/queue" && r.method == "GET") {
    return json_response(200, R"({"queue_running":[],"queue_pending":[]})");
  }
  if (p == "/queue" && r.method == "POST") {
    return json_response(200, "{}");
  }
  if (p == "/view" && r.method == "GET") {
    std::lock_guard lock(world.mutex);
    const auto it = state().files.find(r.query_value("filename"));
    if (it == state().files.end() || r.query_value("type") != "output") {
      return json_response(404, "");
    }
    const bool video = it->first.ends_with(".mp4");
    return fake_response{
        .status = 200, .content_type = video ? "video/mp4" : "image/png", .headers = {}, .body = it->second};
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
