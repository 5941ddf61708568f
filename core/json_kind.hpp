#pragma once
// A JSON value's kind in words, for messages that say what was found instead of what was wanted
// ("must be a URL string, not an object").

#include <boost/json/value.hpp>

#include <string_view>

namespace gesso {

/// "null", "a boolean", "a number", "a string", "an array" or "an object".
std::string_view json_kind_name(const boost::json::value& v);

}  // namespace gesso
