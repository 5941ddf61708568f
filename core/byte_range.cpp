#include "core/byte_range.hpp"

#include <charconv>

namespace gesso {
namespace {

std::optional<std::uint64_t> number(std::string_view s) {
  std::uint64_t value = 0;
  if (s.empty() || s.size() > 19) {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

range_request parse_range(std::string_view header, std::uint64_t size) {
  constexpr std::string_view unit = "bytes=";
  range_request whole;
  if (!header.starts_with(unit)) {
    return whole;
  }
  const std::string_view spec = header.substr(unit.size());
  const auto dash = spec.find('-');
  if (dash == std::string_view::npos || spec.find_first_of(", ") != std::string_view::npos) {
    return whole;
  }
  const std::string_view first_text = spec.substr(0, dash);
  const std::string_view last_text = spec.substr(dash + 1);
  range_request r;
  r.outcome = range_request::kind::partial;
  if (first_text.empty()) {  // suffix: the last N bytes
    const auto n = number(last_text);
    if (!n) {
      return whole;
    }
    if (*n == 0 || size == 0) {
      r.outcome = range_request::kind::unsatisfiable;
      return r;
    }
    r.range = {*n >= size ? 0 : size - *n, size - 1};
    return r;
  }
  const auto first = number(first_text);
  const auto last = last_text.empty() ? std::optional<std::uint64_t>(UINT64_MAX) : number(last_text);
  if (!first || !last || *last < *first) {
    return whole;
  }
  if (*first >= size) {
    r.outcome = range_request::kind::unsatisfiable;
    return r;
  }
  r.range = {*first, std::min(*last, size - 1)};
  return r;
}

}  // namespace gesso
