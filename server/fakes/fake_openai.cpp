// OpenAI Images as PROVIDERS.md §1 describes it: synchronous generations (JSON) and edits (multipart
// image / image[] / repeated image), b64_json for GPT image models and url (valid 60 min) for dall-e
// when asked, the {"error": {message, type, param, code}} envelope, and moderation_blocked rejections.

#include "core/base64.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/fakes/fake_providers.hpp"

#include <boost/json.hpp>

#include <ctime>
#include <set>

namespace gesso::fakes {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string error_body(unsigned status, const std::string& message, const std::string& type,
                       const std::string& code, const std::string& param = "") {
  json::object error{{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}};
  if (!param.empty()) {
    error["param"] = param;
  }
  static_cast<void>(status);
  return json::serialize(json::object{{"error", std::move(error)}});
}

std::string fault_body(unsigned status, const std::string& message) {
  return status == 429 ? error_body(status, message, "requests", "rate_limit_exceeded")
                       : error_body(status, message, "server_error", "server_error");
}

fake_response invalid(const std::string& message, const std::string& param,
                      const std::string& code = "invalid_value") {
  return json_response(400, error_body(400, message, "invalid_request_error", code, param));
}

}  // namespace

std::multimap<std::string, std::string> multipart_parts(const fake_request& r) {
  std::multimap<std::string, std::string> parts;
  const std::string type = r.header("content-type");
  const auto b = type.find("boundary=");
  if (b == std::string::npos) {
    return parts;
  }
  const std::string boundary = "--" + type.substr(b + 9);
  std::size_t at = r.body.find(boundary);
  while (at != std::string::npos) {
    at += boundary.size();
    if (r.body.compare(at, 2, "--") == 0) {
      break;
    }
    const auto head_end = r.body.find("\r\n\r\n", at);
    const auto next = r.body.find(boundary, head_end == std::string::npos ? at : head_end);
    if (head_end == std::string::npos || next == std::string::npos) {
      break;
    }
    const std::string head = r.body.substr(at, head_end - at);
    const auto n = head.find("name=\"");
    if (n != std::string::npos) {
      const std::string name = head.substr(n + 6, head.find('"', n + 6) - n - 6);
      parts.emplace(name, r.body.substr(head_end + 4, next - head_end - 4 - 2));  // minus the CRLF
    }
    at = next;
  }
  return parts;
}

namespace {

struct image_call {
  std::string model;
  std::string prompt;
  std::string size;
  std::string response_format;
  int images = 0;
};

fake_response generate(fake_world& world, const image_call& call) {
  static const std::set<std::string> gpt_sizes{"1024x1024", "1536x1024", "1024x1536", "auto"};
  static const std::set<std::string> dalle3_sizes{"1024x1024", "1792x1024", "1024x1792"};
  static const std::set<std::string> dalle2_sizes{"256x256", "512x512", "1024x1024"};
  const bool dalle = call.model.starts_with("dall-e");
  if (!dalle && !call.response_format.empty()) {
    return invalid("Unknown parameter: 'response_format'.", "response_format", "unknown_parameter");
  }
  const auto& sizes = call.model.starts_with("dall-e-3")   ? dalle3_sizes
                      : call.model.starts_with("dall-e-2") ? dalle2_sizes
                                                           : gpt_sizes;
  const std::string size = call.size.empty() ? "1024x1024" : call.size;
  if (!sizes.contains(size)) {
    return invalid(
        "Invalid value: '" + size + "'. Supported values are: 1024x1024, 1536x1024, 1024x1536 and auto.",
        "size");
  }
  const markers m = read_markers(call.prompt);
  fake_response answer;
  answer.delay = std::chrono::seconds(m.slow_seconds);
  if (m.policy) {
    json::object error{
        {"message",
         "Your request was rejected by the safety system. If you believe this is an error, "
         "contact us at help.openai.com and include the request ID."},
        {"type", "image_generation_user_error"},
        {"param", nullptr},
        {"code", "moderation_blocked"},
        {"moderation_details", {{"moderation_stage", "input"}, {"categories", json::array{"violence"}}}}};
    answer.status = 400;
    answer.body = json::serialize(json::object{{"error", std::move(error)}});
    return answer;
  }
  if (m.invalid) {
    answer.status = 400;
    answer.body = error_body(400, "Invalid prompt: the prompt is too long.", "invalid_request_error",
                             "invalid_value", "prompt");
    return answer;
  }
  if (m.fail) {
    answer.status = 500;
    answer.body = fault_body(500, "The server had an error while processing your request.");
    return answer;
  }
  auto [w, h] = parse_size(size == "auto" ? "1024x1024" : size);
  std::string bytes = m.wrong_type ? fake_mp4() : fake_png(w / 8, h / 8, call.prompt);  // small, same shape
  json::object item;
  if (dalle && call.response_format == "url") {
    item["url"] = world.publish(
        {std::move(bytes), "image/png", std::chrono::steady_clock::now() + (m.expire ? 0s : 3600s), ""});
  } else {
    item["b64_json"] = encode_base64(bytes);
  }
  answer.body = json::serialize(
      json::object{{"created", std::time(nullptr)},
                   {"data", json::array{std::move(item)}},
                   {"output_format", "png"},
                   {"size", size},
                   {"usage", {{"input_tokens", 10}, {"output_tokens", 100}, {"total_tokens", 110}}}});
  return answer;
}

fake_response generations(fake_world& world, const fake_request& r) {
  boost::system::error_code ec;
  const json::value body = json::parse(r.body, ec);
  if (ec || !body.is_object()) {
    return invalid("We could not parse the JSON body of your request.", "", "invalid_json");
  }
  const json::object& o = body.as_object();
  image_call call;
  if (!o.contains("prompt") || !o.at("prompt").is_string()) {
    return invalid("Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
  }
  call.prompt = std::string(o.at("prompt").as_string());
  call.model =
      o.contains("model") && o.at("model").is_string() ? std::string(o.at("model").as_string()) : "dall-e-2";
  call.size = o.contains("size") && o.at("size").is_string() ? std::string(o.at("size").as_string()) : "";
  call.response_format = o.contains("response_format") && o.at("response_format").is_string()
                             ? std::string(o.at("response_format").as_string())
                             : "";
  if (auto fault = create_fault(world, "openai", call.prompt, fault_body)) {
    return *fault;
  }
  return generate(world, call);
}

fake_response edits(fake_world& world, const fake_request& r) {
  if (r.header("content-type").find("multipart/form-data") == std::string::npos) {
    return invalid("The edits endpoint takes multipart/form-data.", "", "invalid_content_type");
  }
  const auto parts = multipart_parts(r);
  image_call call;
  auto field = [&](const std::string& name) {
    const auto it = parts.find(name);
    return it == parts.end() ? std::string() : it->second;
  };
  call.prompt = field("prompt");
  if (call.prompt.empty()) {
    return invalid("Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
  }
  call.model = field("model").empty() ? "gpt-image-1.5" : field("model");
  call.size = field("size");
  for (const std::string name : {"image", "image[]"}) {
    for (auto [it, end] = parts.equal_range(name); it != end; ++it) {
      if (!engines::sniff_image(it->second)) {
        return invalid("Invalid image file or mode for image " + std::to_string(call.images + 1) +
                           ", please check your image file.",
                       "image", "invalid_image_file");
      }
      ++call.images;
    }
  }
  if (call.images == 0) {
    return invalid("Missing required parameter: 'image'.", "image", "missing_required_parameter");
  }
  if (call.images > 16) {
    return invalid("Too many images: at most 16.", "image");
  }
  if (auto fault = create_fault(world, "openai", call.prompt, fault_body)) {
    return *fault;
  }
  return generate(world, call);
}

}  // namespace

std::optional<fake_response> fake_openai(fake_world& world, const fake_request& r, std::string_view path) {
  const std::string auth = r.header("authorization");
  if (!auth.starts_with("Bearer ") || auth.size() <= 7) {
    return json_response(
        401, error_body(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));
  }
  if (path == "/v1/images/generations" && r.method == "POST") {
    return generations(world, r);
  }
  if (path == "/v1/images/edits" && r.method == "POST") {
    return edits(world, r);
  }
  if (path.starts_with("/v1/videos")) {
    return fake_openai_videos(world, r, path);
  }
  return std::nullopt;
}

}  // namespace gesso::fakes
