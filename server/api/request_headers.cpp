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

outcome<std::optional<std::string>> idempotency_key(const request& req) {
  const auto [first, last] = req.equal_range("Idempotency-Key");
  if (first == last) {
    return std::optional<std::string>();
  }
  if (std::next(first) != last) {
    return fail(errc::invalid_field, "Idempotency-Key was sent more than once; send it once");
  }
  const std::string_view value = first->value();
  if (value.empty() || value.size() > 255) {
    return fail(errc::invalid_field, "Idempotency-Key must be 1 to 255 characters long (it is " +
                                         std::to_string(value.size()) + ")");
  }
  for (const char c : value) {
    if (c < 0x20 || c > 0x7E) {
      return fail(errc::invalid_field, "Idempotency-Key must be printable ASCII characters only");
    }
  }
  return std::optional<std::string>(value);
}

outcome<keyed_request> read_keyed_request(const request& req,
                                          std::initializer_list<std::string_view> accepted,
                                          query_params::unknown others) {
  auto key = bearer_key(req);
  if (!key) {
    return key.error();
  }
  auto params = query_params::parse(req.target(), accepted, others);
  if (!params) {
    return params.error();
  }
  return keyed_request{hash_api_key(*key), std::move(*params)};
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
