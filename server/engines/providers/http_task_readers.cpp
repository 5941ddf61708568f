#include "server/engines/providers/http_task_readers.hpp"

#include "server/engines/providers/http_task_template.hpp"

#include <algorithm>
#include <stdexcept>

namespace gesso::engines::http_task {
namespace json = boost::json;

void check_header_name(const std::string& name, const std::string& field) {
  const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
  if (!token) {
    refuse(field, "\"" + name + "\" is not a header name");
  }
}

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw std::invalid_argument("settings." + field + " " + why);
}

const json::object& object_at(const json::value& v, const std::string& field) {
  if (!v.is_object()) {
    refuse(field, "must be an object");
  }
  return v.as_object();
}

// Refuses a member of `o` that is not one of `known`.
void only(const json::object& o, std::span<const std::string_view> known, const std::string& field) {
  for (const auto& [key, value] : o) {
    if (std::find(known.begin(), known.end(), std::string_view(key)) == known.end()) {
      std::string names;
      for (const auto k : known) {
        names += (names.empty() ? "" : ", ") + std::string(k);
      }
      refuse(field + "." + std::string(key), "is unknown (known: " + names + ")");
    }
  }
}

std::string text_at(const json::object& o, std::string_view key, const std::string& field,
                    std::string fallback, bool required) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    if (required) {
      refuse(field + "." + std::string(key), "is required");
    }
    return fallback;
  }
  if (!v->is_string() || v->as_string().empty()) {
    refuse(field + "." + std::string(key), "must be a non-empty string");
  }
  return std::string(v->as_string());
}

std::string pointer_at(const json::object& o, std::string_view key, const std::string& field, bool required) {
  const std::string p = text_at(o, key, field, "", required);
  if (!p.empty() && !valid_pointer(p)) {
    refuse(field + "." + std::string(key),
           "is not a JSON Pointer (RFC 6901): \"" + p + "\" (it starts with \"/\"; \"~\" only as ~0 or ~1)");
  }
  return p;
}

std::vector<std::string> texts_at(const json::object& o, std::string_view key, const std::string& field) {
  std::vector<std::string> out;
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    return out;
  }
  if (!v->is_array()) {
    refuse(field + "." + std::string(key), "must be a list");
  }
  for (const json::value& item : v->as_array()) {
    const auto t = text_of(item);
    if (!t || t->empty()) {
      refuse(field + "." + std::string(key), "must hold strings or numbers");
    }
    out.push_back(*t);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> read_headers(const json::value& v, const std::string& field,
                                                              const std::set<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : object_at(v, field)) {
    const std::string where = field + "." + std::string(name);
    check_header_name(std::string(name), where);
    if (!value.is_string()) {
      refuse(where, "must be a string");
    }
    if (std::string problem = check_text_template(value.as_string(), names, "settings." + where);
        !problem.empty()) {
      throw std::invalid_argument(problem);
    }
    out.emplace_back(std::string(name), std::string(value.as_string()));
  }
  return out;
}

// A request: method, path, headers, body; `names` are the placeholders its templates may use. A
// variant inherits what it does not give from `base`; `also` are the members its caller reads.
request_spec read_request(const json::value& v, const std::string& field, const std::set<std::string>& names,
                          const request_spec* base, std::vector<std::string_view> also,
                          std::string default_method) {
  const json::object& o = object_at(v, field);
  also.insert(also.begin(), {"method", "path", "headers", "body"});
  only(o, also, field);
  request_spec r;
  if (base != nullptr) {
    r = *base;
  } else {
    r.method = std::move(default_method);
  }
  r.method = text_at(o, "method", field, r.method);
  static constexpr std::string_view methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  if (std::find(std::begin(methods), std::end(methods), r.method) == std::end(methods)) {
    refuse(field + ".method", "must be GET, POST, PUT, PATCH or DELETE");
  }
  r.path = text_at(o, "path", field, r.path, base == nullptr);
  if (!r.path.starts_with("/")) {
    refuse(field + ".path", "must start with \"/\" (it is appended to base_url)");
  }
  if (std::string problem = check_text_template(r.path, names, "settings." + field + ".path");
      !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  if (const json::value* h = o.if_contains("headers")) {
    r.headers = read_headers(*h, field + ".headers", names);
  }
  if (const json::value* b = o.if_contains("body")) {
    if (std::string problem = check_template(*b, names, "settings." + field + ".body"); !problem.empty()) {
      throw std::invalid_argument(problem);
    }
    r.body = *b;
  }
  return r;
}

request_variants read_variants(const json::value& v, const std::string& field,
                               const std::set<std::string>& names, std::vector<std::string_view> also,
                               const std::string& default_method) {
  also.push_back("with_images");
  request_variants out;
  out.plain = read_request(v, field, names, nullptr, also, default_method);
  if (const json::value* w = v.as_object().if_contains("with_images")) {
    out.with_images = read_request(*w, field + ".with_images", names, &out.plain);
  }
  return out;
}

}  // namespace gesso::engines::http_task
