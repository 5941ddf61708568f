#pragma once
// Readers of an http-task route's settings (http_task_spec.cpp): JSON members of a given kind, refused
// with "settings.<field> …" naming the member, and a request's method, path, headers and body checked
// as templates.

#include "server/engines/providers/http_task_spec.hpp"

#include <boost/json.hpp>

#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gesso::engines::http_task {

/// Throws std::invalid_argument("settings.<field> <why>").
[[noreturn]] void refuse(const std::string& field, const std::string& why);
const boost::json::object& object_at(const boost::json::value& v, const std::string& field);
/// Refuses a member of `o` that is not one of `known`.
void only(const boost::json::object& o, std::span<const std::string_view> known, const std::string& field);
inline void only(const boost::json::object& o, std::initializer_list<std::string_view> known,
                 const std::string& field) {
  only(o, std::span<const std::string_view>(known.begin(), known.size()), field);
}
std::string text_at(const boost::json::object& o, std::string_view key, const std::string& field,
                    std::string fallback, bool required = false);
/// A member that must be a JSON Pointer (RFC 6901).
std::string pointer_at(const boost::json::object& o, std::string_view key, const std::string& field,
                       bool required = false);
/// A list of strings or numbers, as text.
std::vector<std::string> texts_at(const boost::json::object& o, std::string_view key,
                                  const std::string& field);
/// Refuses a header name that is not a token.
void check_header_name(const std::string& name, const std::string& field);
std::vector<std::pair<std::string, std::string>> read_headers(const boost::json::value& v,
                                                              const std::string& field,
                                                              const std::set<std::string>& names);
/// A request: method, path, headers, body; `names` are the placeholders its templates may use. A variant
/// inherits what it does not give from `base`; `also` are the members its caller reads.
request_spec read_request(const boost::json::value& v, const std::string& field,
                          const std::set<std::string>& names, const request_spec* base,
                          std::vector<std::string_view> also = {}, std::string default_method = "GET");
/// A request and its `with_images` variant.
request_variants read_variants(const boost::json::value& v, const std::string& field,
                               const std::set<std::string>& names, std::vector<std::string_view> also,
                               const std::string& default_method);

}  // namespace gesso::engines::http_task
