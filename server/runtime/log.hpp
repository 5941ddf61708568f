#pragma once
// Structured logs: one JSON object per line on standard error. Never given keys, signatures or whole prompts.

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

namespace gesso::log {

enum class level { debug, info, warn, error };

/// Sets the lowest level written ("debug", "info", "warn" or "error").
void set_level(std::string_view name);

/// Whether a line at `l` would be written.
bool enabled(level l);

/// Writes {"ts":…,"level":…,"event":event, fields…} as one line.
void write(level l, std::string_view event, boost::json::object fields);

/// `text` cut to `max` bytes with non-printable and non-ASCII bytes replaced, safe for any log line.
std::string printable(std::string_view text, std::size_t max = 200);

}  // namespace gesso::log
