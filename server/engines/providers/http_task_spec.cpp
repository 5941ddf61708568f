#include "server/engines/providers/http_task_spec.hpp"

#include "server/engines/providers/http_task_readers.hpp"
#include "server/engines/providers/http_task_template.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace gesso::engines::http_task {
namespace json = boost::json;

namespace {

void read_auth(const route_settings& s, spec& out) {
  const json::value* v = s.extra.if_contains("auth");
  if (v == nullptr) {
    out.auth = s.api_key_env.empty() ? auth_kind::none : auth_kind::bearer;
  } else {
    const json::object& o = object_at(*v, "auth");
    only(o, {"type", "name", "prefix", "secret_key_env"}, "auth");
    const std::string type = text_at(o, "type", "auth", "", true);
    static const std::map<std::string, auth_kind> kinds{{"bearer", auth_kind::bearer},
                                                        {"header", auth_kind::header},
                                                        {"query", auth_kind::query},
                                                        {"jwt-hs256", auth_kind::jwt_hs256},
                                                        {"none", auth_kind::none}};
    const auto it = kinds.find(type);
    if (it == kinds.end()) {
      refuse("auth.type", "must be bearer, header, query, jwt-hs256 or none, not \"" + type + "\"");
    }
    out.auth = it->second;
    const bool named = out.auth == auth_kind::header || out.auth == auth_kind::query;
    out.auth_name = text_at(o, "name", "auth", "", named);
    if (out.auth == auth_kind::header) {
      check_header_name(out.auth_name, "auth.name");
    }
    out.auth_prefix =
        o.contains("prefix") && o.at("prefix").is_string() ? std::string(o.at("prefix").as_string()) : "";
    if (out.auth == auth_kind::jwt_hs256) {
      const std::string secret_env = text_at(o, "secret_key_env", "auth", "", true);
      const char* secret = std::getenv(secret_env.c_str());
      if (secret == nullptr || *secret == '\0') {
        refuse("auth.secret_key_env", "names " + secret_env + ", which is not set");
      }
      out.secret = secret;
    }
  }
  if (out.auth != auth_kind::none && s.api_key.empty()) {
    refuse("api_key_env",
           "is required: auth " + std::string(out.auth == auth_kind::jwt_hs256
                                                  ? "jwt-hs256 signs with the access key it names"
                                                  : "sends the key it names"));
  }
}

void read_maps(const route_settings& s, const model_spec& model, spec& out) {
  const json::value* v = s.extra.if_contains("maps");
  if (v == nullptr) {
    return;
  }
  for (const auto& [name, m] : object_at(*v, "maps")) {
    const std::string field = "maps." + std::string(name);
    if (!std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }) ||
        name.empty() || base_names(spec{}).contains(std::string(name)) || name == "id" ||
        is_indexed_placeholder(name) || is_list_placeholder(name)) {
      refuse(field, "must be a new lower-case name, not a placeholder of its own");
    }
    const json::object& o = object_at(m, field);
    only(o, {"from", "values"}, field);
    value_map vm;
    const std::string from = text_at(o, "from", field, "aspect_ratio");
    if (from != "aspect_ratio" && from != "duration") {
      refuse(field + ".from", "must be aspect_ratio or duration");
    }
    vm.by_duration = from == "duration";
    const json::value* values = o.if_contains("values");
    if (values == nullptr) {
      refuse(field + ".values", "is required");
    }
    for (const auto& [key, value] : object_at(*values, field + ".values")) {
      vm.values[std::string(key)] = value;
    }
    // Every value the model can ask for must be in the map.
    std::vector<std::string> needed;
    if (vm.by_duration) {
      needed.push_back(std::to_string(model.duration_seconds));
    } else {
      needed.assign(model.aspect_ratios.begin(), model.aspect_ratios.end());
    }
    for (const auto& key : needed) {
      if (!vm.values.contains(key)) {
        refuse(field + ".values", "has no value for " + key + ", which the model allows");
      }
    }
    out.maps[std::string(name)] = std::move(vm);
  }
}

void read_status_map(const json::object& poll, spec& out) {
  const json::value* v = poll.if_contains("status_map");
  if (v == nullptr) {
    refuse("poll.status_map", "is required: the provider's status values and the states they mean");
  }
  static const std::map<std::string, task_state> states{{"queued", task_state::queued},
                                                        {"running", task_state::running},
                                                        {"succeeded", task_state::succeeded},
                                                        {"failed", task_state::failed},
                                                        {"canceled", task_state::canceled}};
  for (const auto& [value, state] : object_at(*v, "poll.status_map")) {
    const auto it = state.is_string() ? states.find(std::string(state.as_string())) : states.end();
    if (it == states.end()) {
      refuse("poll.status_map." + std::string(value),
             "must be queued, running, succeeded, failed or canceled");
    }
    out.status_map[std::string(value)] = it->second;
  }
  for (const task_state final_state : {task_state::succeeded, task_state::failed}) {
    if (std::none_of(out.status_map.begin(), out.status_map.end(),
                     [final_state](const auto& entry) { return entry.second == final_state; })) {
      refuse("poll.status_map", std::string("has no ") +
                                    (final_state == task_state::succeeded ? "succeeded" : "failed") +
                                    " state: every job must be able to end");
    }
  }
}

void read_create(const route_settings& s, const std::set<std::string>& names, spec& out) {
  const json::value* v = s.extra.if_contains("create");
  if (v == nullptr) {
    refuse("create", "is required: the request that submits a task");
  }
  const json::object& o = object_at(*v, "create");
  only(o, {"method", "path", "headers", "body", "with_images", "id", "sync"}, "create");
  out.sync = o.contains("sync") && o.at("sync").is_bool() && o.at("sync").as_bool();
  if (o.contains("sync") && !o.at("sync").is_bool()) {
    refuse("create.sync", "must be true or false");
  }
  out.id_pointer = pointer_at(o, "id", "create", !out.sync);
  out.create = read_variants(*v, "create", names, {"id", "sync"}, "POST");
}

void read_poll(const route_settings& s, std::set<std::string> names, spec& out) {
  const json::value* v = s.extra.if_contains("poll");
  if (v == nullptr) {
    if (!out.sync) {
      refuse("poll", "is required unless create.sync is true");
    }
    return;
  }
  if (out.sync) {
    refuse("poll", "is not used when create.sync is true");
  }
  const json::object& o = object_at(*v, "poll");
  only(o,
       {"method", "path", "headers", "body", "with_images", "status", "status_map", "error",
        "interval_header", "capture"},
       "poll");
  names.insert("id");
  out.status_pointer = pointer_at(o, "status", "poll", true);
  read_status_map(o, out);
  out.failure_pointer = pointer_at(o, "error", "poll");
  out.interval_header = text_at(o, "interval_header", "poll", "");
  if (const json::value* c = o.if_contains("capture")) {
    for (const auto& [name, pointer] : object_at(*c, "poll.capture")) {
      if (names.contains(std::string(name)) || name.empty() ||
          !std::all_of(name.begin(), name.end(),
                       [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '_'; })) {
        refuse("poll.capture." + std::string(name), "must be a new lower-case name");
      }
      if (!pointer.is_string() || !valid_pointer(pointer.as_string())) {
        refuse("poll.capture." + std::string(name), "must be a JSON Pointer");
      }
      out.captures[std::string(name)] = std::string(pointer.as_string());
    }
  }
  out.poll = read_variants(*v, "poll", names, {"status", "status_map", "error", "interval_header", "capture"},
                           "GET");
  if (const json::value* r = s.extra.if_contains("result")) {
    std::set<std::string> with_captures = names;
    for (const auto& [name, pointer] : out.captures) {
      with_captures.insert(name);
    }
    out.result = read_request(*r, "result", with_captures, nullptr);
  }
}

void read_output(const route_settings& s, spec& out) {
  const json::value* v = s.extra.if_contains("output");
  if (v == nullptr) {
    refuse("output", "is required: {\"url\": pointer}, {\"urls\": pointer} or {\"base64\": pointer}");
  }
  const json::object& o = object_at(*v, "output");
  only(o, {"url", "urls", "base64"}, "output");
  if (o.size() != 1) {
    refuse("output", "must name exactly one of url, urls, base64");
  }
  const auto& [key, value] = *o.begin();
  out.output = key == "url" ? output_kind::url : key == "urls" ? output_kind::urls : output_kind::base64;
  out.output_pointer = pointer_at(o, key, "output", true);
}

void read_errors(const route_settings& s, spec& out) {
  const json::value* v = s.extra.if_contains("errors");
  if (v == nullptr) {
    return;
  }
  const json::object& o = object_at(*v, "errors");
  only(o, {"message", "code", "ok", "policy_codes", "invalid_codes", "retry_codes", "policy_patterns"},
       "errors");
  out.errors.message = pointer_at(o, "message", "errors");
  out.errors.code = pointer_at(o, "code", "errors");
  out.errors.ok = texts_at(o, "ok", "errors");
  out.errors.policy_codes = texts_at(o, "policy_codes", "errors");
  out.errors.invalid_codes = texts_at(o, "invalid_codes", "errors");
  out.errors.retry_codes = texts_at(o, "retry_codes", "errors");
  out.errors.policy_patterns = texts_at(o, "policy_patterns", "errors");
  if (!out.errors.ok.empty() && out.errors.code.empty()) {
    refuse("errors.ok", "needs errors.code: the pointer to the code it is compared with");
  }
}

void read_rest(const route_settings& s, const std::set<std::string>& names, spec& out) {
  if (const json::value* p = s.extra.if_contains("progress")) {
    const json::object& o = object_at(*p, "progress");
    only(o, {"pointer", "scale"}, "progress");
    out.progress_pointer = pointer_at(o, "pointer", "progress", true);
    if (const json::value* scale = o.if_contains("scale")) {
      if (!scale->is_number() || scale->to_number<double>() <= 0) {
        refuse("progress.scale", "must be a positive number (100 when the provider reports 0–1)");
      }
      out.progress_scale = scale->to_number<double>();
    }
  }
  if (const json::value* c = s.extra.if_contains("cost")) {
    if (!c->is_string() || !valid_pointer(c->as_string())) {
      refuse("cost", "must be a JSON Pointer to what the provider says the job cost");
    }
    out.cost_pointer = std::string(c->as_string());
  }
  if (const json::value* d = s.extra.if_contains("download_auth")) {
    if (!d->is_bool()) {
      refuse("download_auth", "must be true or false");
    }
    out.download_auth = d->as_bool();
  }
  if (const json::value* c = s.extra.if_contains("cancel")) {
    std::set<std::string> with_id = names;
    with_id.insert("id");
    out.cancel = read_request(*c, "cancel", with_id, nullptr);
  }
  if (const json::value* r = s.extra.if_contains("retry_statuses")) {
    if (!r->is_array()) {
      refuse("retry_statuses", "must be a list of HTTP statuses");
    }
    for (const json::value& status : r->as_array()) {
      if (!status.is_int64() || status.as_int64() < 400 || status.as_int64() > 599) {
        refuse("retry_statuses", "must hold HTTP error statuses (400–599)");
      }
      out.retry_statuses.push_back(static_cast<unsigned>(status.as_int64()));
    }
  }
}

}  // namespace

std::set<std::string> base_names(const spec& s) {
  std::set<std::string> names{"prompt", "aspect_ratio", "seed", "duration", "model", "task_id"};
  for (const auto& [name, m] : s.maps) {
    names.insert(name);
  }
  return names;
}

spec parse_spec(const route_settings& settings, const model_spec& model) {
  spec out;
  read_auth(settings, out);
  read_maps(settings, model, out);
  const std::set<std::string> names = base_names(out);
  if (const json::value* h = settings.extra.if_contains("headers")) {
    out.headers = read_headers(*h, "headers", names);
  }
  read_create(settings, names, out);
  read_poll(settings, names, out);
  if (settings.extra.contains("result") && out.sync) {
    refuse("result", "is not used when create.sync is true");
  }
  read_output(settings, out);
  read_errors(settings, out);
  read_rest(settings, names, out);
  return out;
}

header_list static_auth_headers(const route_settings& settings) {
  const json::value* v = settings.extra.if_contains("auth");
  const std::string type = v != nullptr && v->is_object() && v->as_object().contains("type") &&
                                   v->as_object().at("type").is_string()
                               ? std::string(v->as_object().at("type").as_string())
                               : "bearer";
  if (settings.api_key.empty()) {
    return {};
  }
  if (type == "bearer") {
    return {{"Authorization", "Bearer " + settings.api_key}};
  }
  if (type == "header") {
    const json::object& o = v->as_object();
    const std::string name =
        o.contains("name") && o.at("name").is_string() ? std::string(o.at("name").as_string()) : "";
    const std::string prefix =
        o.contains("prefix") && o.at("prefix").is_string() ? std::string(o.at("prefix").as_string()) : "";
    return name.empty() ? header_list{} : header_list{{name, prefix + settings.api_key}};
  }
  return {};
}

}  // namespace gesso::engines::http_task
