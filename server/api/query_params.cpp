#include "server/api/query_params.hpp"

#include <charconv>

namespace gesso::api {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// Percent-decoding with '+' as a space (HTML forms), or nullopt when a '%' is not followed by two hex
// digits.
std::optional<std::string> decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] != '%') {
      out += s[i];
    } else if (i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string accepted_list(std::initializer_list<std::string_view> accepted) {
  if (accepted.size() == 0) {
    return "this endpoint accepts no parameters";
  }
  std::string out = "accepted parameters are ";
  for (const std::string_view name : accepted) {
    out += (out.ends_with(" are ") ? "" : ", ") + std::string(name);
  }
  return out;
}

}  // namespace

outcome<query_params> query_params::parse(std::string_view target,
                                          std::initializer_list<std::string_view> accepted, unknown others) {
  query_params out;
  const auto question = target.find('?');
  std::string_view query = question == std::string_view::npos ? "" : target.substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    const auto eq = pair.find('=');
    const auto name = decode(pair.substr(0, eq));
    bool known = false;
    for (const std::string_view a : accepted) {
      known = known || (name && a == *name);
    }
    if (!known && others == unknown::ignored) {
      continue;  // an ignored parameter is not read at all, even when it is malformed
    }
    const auto value = decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!name || !value) {
      return fail(errc::invalid_field, "the query string is not valid percent-encoding near \"" +
                                           std::string(pair.substr(0, 64)) + "\"");
    }
    if (!known) {
      return fail(errc::invalid_field,
                  "unknown parameter \"" + name->substr(0, 64) + "\"; " + accepted_list(accepted));
    }
    if (!out.values_.emplace(*name, *value).second) {
      return fail(errc::invalid_field, "parameter \"" + *name + "\" is given more than once");
    }
  }
  return out;
}

std::optional<std::string_view> query_params::get(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::nullopt : std::optional<std::string_view>(it->second);
}

outcome<std::optional<std::int64_t>> query_params::integer(std::string_view name, std::int64_t min,
                                                           std::int64_t max) const {
  const auto text = get(name);
  if (!text) {
    return std::optional<std::int64_t>();
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty()) {
    return fail(errc::invalid_field, std::string(name) + " must be an integer from " + range);
  }
  if (value < min || value > max) {
    return fail(errc::invalid_field,
                std::string(name) + " must be from " + range + " (it is " + std::to_string(value) + ")");
  }
  return std::optional<std::int64_t>(value);
}

}  // namespace gesso::api
