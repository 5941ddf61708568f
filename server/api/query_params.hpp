#pragma once
// The query string of an API request, read against the parameters its endpoint accepts: an unknown or
// repeated parameter, or one that is not valid percent-encoding, is refused with a message naming it.

#include "core/error.hpp"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gesso::api {

class query_params {
 public:
  /// How a parameter that is not accepted is met.
  enum class unknown { refused, ignored };

  /// The decoded parameters of `target` ("/path?a=1&b=x"), each one of `accepted`. Others are refused,
  /// or ignored where an endpoint of the specification has always ignored them (the query).
  static outcome<query_params> parse(std::string_view target,
                                     std::initializer_list<std::string_view> accepted,
                                     unknown others = unknown::refused);

  /// The parameter's decoded value, if it was given.
  std::optional<std::string_view> get(std::string_view name) const;

  /// An integer parameter in [min, max]; nullopt when absent; invalid_field naming it otherwise.
  outcome<std::optional<std::int64_t>> integer(std::string_view name, std::int64_t min,
                                               std::int64_t max) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace gesso::api
