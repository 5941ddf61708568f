#include "server/api/request_headers.hpp"

#include "core/ids.hpp"

#include <boost/algorithm/string/predicate.hpp>

namespace gesso::api {

outcome<std::string> bearer_key(const request& req) {
  const auto header = req.find(http::field::authorization);
  if (header == req.end()) {
    return fail(errc::unauthorized, "missing Authorization header; send \"Authorization: Bearer sk-...\"");
  }
  const std::string_view value = header->value();
  constexpr std::string_view scheme = "bearer ";
  if (value.size() < scheme.size() || !boost::algorithm::iequals(value.substr(0, scheme.size()), scheme)) {
    return fail(errc::unauthorized, "the Authorization header must use the Bearer scheme: \"Bearer sk-...\"");
  }
  std::string_view key = value.substr(scheme.size());
  while (!key.empty() && key.front() == ' ') {
    key.remove_prefix(1);
  }
  while (!key.empty() && key.back() == ' ') {
    key.remove_suffix(1);
  }
  if (!is_api_key_shaped(key)) {
    return fail(errc::unauthorized,
                "malformed API key: keys start with \"sk-\" followed by letters and digits");
  }
  return std::string(key);
}

bool is_json_content(const request& req) {
  const auto header = req.find(http::field::content_type);
  if (header == req.end()) {
    return false;
  }
  std::string_view type = header->value();
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') {
    type.remove_suffix(1);
  }
  return boost::algorithm::iequals(type, "application/json");
}

}  // namespace gesso::api
