#include "server/engines/providers/routes.hpp"

#include "server/engines/providers/adapters.hpp"
#include "server/engines/providers/remote_engine.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <cstdlib>
#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;

namespace {

bool is_variable_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

std::int64_t whole(const json::value& v, std::string_view key, std::int64_t lo, std::int64_t hi) {
  if (!v.is_int64() || v.as_int64() < lo || v.as_int64() > hi) {
    throw std::invalid_argument("settings." + std::string(key) + " must be a whole number from " +
                                std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v.as_int64();
}

std::string text(const json::value& v, std::string_view key) {
  if (!v.is_string() || v.as_string().empty()) {
    throw std::invalid_argument("settings." + std::string(key) + " must be a non-empty string");
  }
  return std::string(v.as_string());
}

// One common setting into `s`; false when `key` is not one of them.
bool read_common(route_settings& s, std::string_view key, const json::value& v) {
  if (key == "base_url") {
    s.base_url = text(v, key);
    const auto url = boost::urls::parse_absolute_uri(s.base_url);
    if (!url || (url->scheme() != "http" && url->scheme() != "https") || url->encoded_host().empty()) {
      throw std::invalid_argument("settings.base_url must be an http or https URL");
    }
  } else if (key == "api_key_env") {
    s.api_key_env = text(v, key);
    if (!is_variable_name(s.api_key_env)) {
      throw std::invalid_argument(
          "settings.api_key_env must name an environment variable, such as OPENAI_API_KEY");
    }
  } else if (key == "model") {
    s.model = text(v, key);
  } else if (key == "request_timeout_ms") {
    s.request_timeout = std::chrono::milliseconds(whole(v, key, 100, 600'000));
  } else if (key == "poll_interval_ms") {
    s.poll_interval = std::chrono::milliseconds(whole(v, key, 10, 3'600'000));
  } else if (key == "max_output_bytes") {
    s.max_output_bytes = static_cast<std::size_t>(whole(v, key, 1024, 4LL * 1024 * 1024 * 1024));
  } else if (key == "max_concurrency") {
    s.max_concurrency = static_cast<int>(whole(v, key, 0, 100'000));
  } else {
    return false;
  }
  return true;
}

route_settings parse_route(const route_spec& spec, const adapter_kind& kind) {
  route_settings s;
  s.engine = spec.engine;
  s.priority = spec.priority;
  s.weight = spec.weight;
  s.base_url = std::string(kind.default_base_url);
  s.model = std::string(kind.default_model);
  s.request_timeout = kind.default_timeout;
  const json::value settings = json::parse(spec.settings);
  for (const auto& [key, value] : settings.as_object()) {
    if (read_common(s, key, value)) {
      continue;
    }
    if (std::find(kind.own_settings.begin(), kind.own_settings.end(), key) == kind.own_settings.end()) {
      throw std::invalid_argument("unknown setting \"" + std::string(key) + "\"");
    }
    s.extra[key] = value;
  }
  while (s.base_url.ends_with('/')) {
    s.base_url.pop_back();
  }
  if (s.base_url.empty()) {
    throw std::invalid_argument("settings.base_url is required: " + s.engine + " has no public URL");
  }
  if (s.model.empty() && kind.needs_model) {
    throw std::invalid_argument("settings.model is required");
  }
  if (s.api_key_env.empty() && kind.needs_key) {
    throw std::invalid_argument("settings.api_key_env is required: it names the variable holding the key");
  }
  if (!s.api_key_env.empty()) {
    const char* key = std::getenv(s.api_key_env.c_str());
    if (key == nullptr || *key == '\0') {
      throw std::invalid_argument("settings.api_key_env: " + s.api_key_env + " is not set");
    }
    s.api_key = key;
  }
  return s;
}

}  // namespace

std::unique_ptr<engine> make_provider_engine(const model_spec& model, const engine_environment& environment) {
  std::vector<std::unique_ptr<route>> routes;
  for (std::size_t i = 0; i < model.routes.size(); ++i) {
    const route_spec& spec = model.routes[i];
    const std::string where =
        "model \"" + model.id + "\": routes[" + std::to_string(i) + "] (" + spec.engine + "): ";
    const adapter_kind* kind = find_adapter_kind(spec.engine);
    if (kind == nullptr) {
      throw std::invalid_argument("model \"" + model.id + "\": routes[" + std::to_string(i) +
                                  "]: unknown engine \"" + spec.engine +
                                  "\" (available: builtin, task-api, " + adapter_engine_names() +
                                  "; builtin and task-api only as a model's one route)");
    }
    try {
      auto r = std::make_unique<route>();
      r->settings = parse_route(spec, *kind);
      r->settings.label = "routes[" + std::to_string(i) + "]";
      header_list auth;
      if (kind->auth_headers != nullptr) {
        auth = kind->auth_headers(r->settings);
      } else if (!r->settings.api_key.empty() && !kind->auth_header.empty()) {
        auth.emplace_back(std::string(kind->auth_header),
                          std::string(kind->auth_prefix) + r->settings.api_key);
      }
      r->client = std::make_unique<provider_client>(r->settings, environment.fetching, std::move(auth));
      r->adapter = kind->make(r->settings, *r->client, model);
      routes.push_back(std::move(r));
    } catch (const std::exception& e) {
      throw std::invalid_argument(where + e.what());
    }
  }
  return std::make_unique<provider_engine>(model, std::move(routes), environment);
}

}  // namespace gesso::engines
