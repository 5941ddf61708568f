#include "server/load/api_answers.hpp"

namespace gesso::load {
namespace http = boost::beast::http;
namespace json = boost::json;

request api_request(const options& o, http::verb method, std::string target, const std::string* key) {
  request req{method, target, 11};
  req.set(http::field::host, o.host + ":" + o.port);
  req.set(http::field::user_agent, "gesso-load");
  if (key != nullptr) {
    req.set(http::field::authorization, "Bearer " + *key);
  }
  req.keep_alive(true);
  return req;
}

request create_request(const options& o, const std::string& key, const std::string& model,
                       const std::string& prompt) {
  request req = api_request(o, http::verb::post, "/api/v1/tasks/create", &key);
  req.set(http::field::content_type, "application/json");
  req.body() = json::serialize(json::object{{"model_id", model}, {"prompt", prompt}});
  req.prepare_payload();
  return req;
}

std::optional<json::object> data_of(const http_answer& answer) {
  if (answer.status != 200) {
    return std::nullopt;
  }
  boost::system::error_code ec;
  json::value v = json::parse(answer.body, ec);
  if (ec || !v.is_object()) {
    return std::nullopt;
  }
  const json::value* data = v.as_object().if_contains("data");
  if (data == nullptr || !data->is_object()) {
    return std::nullopt;
  }
  return data->as_object();
}

std::string string_field(const json::object& o, const char* name) {
  const json::value* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t integer_field(const json::object& o, const char* name) {
  const json::value* v = o.if_contains(name);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

std::string path_of(const std::string& url) {
  const auto scheme = url.find("://");
  const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return slash == std::string::npos ? "/" : url.substr(slash);
}

task_view task_view_of(const http_answer& answer) {
  task_view view;
  if (const std::optional<json::object> data = data_of(answer)) {
    view.status = static_cast<int>(integer_field(*data, "task_status"));
    std::string url = string_field(*data, "image_url");
    if (url.empty()) {
      url = string_field(*data, "video_url");
    }
    if (!url.empty()) {
      view.result_path = path_of(url);
    }
  }
  return view;
}

}  // namespace gesso::load
