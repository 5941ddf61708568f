#include "server/runtime/log.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace gesso::log {
namespace {

std::atomic<level> threshold{level::info};

std::string_view name_of(level l) {
  switch (l) {
    case level::debug:
      return "debug";
    case level::info:
      return "info";
    case level::warn:
      return "warn";
    case level::error:
      return "error";
  }
  return "info";
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%.*s.%03dZ", static_cast<int>(n), text, static_cast<int>(millis));
  return out;
}

}  // namespace

void set_level(std::string_view name) {
  for (const level l : {level::debug, level::info, level::warn, level::error}) {
    if (name_of(l) == name) {
      threshold = l;
    }
  }
}

bool enabled(level l) {
  return l >= threshold.load(std::memory_order_relaxed);
}

void write(level l, std::string_view event, boost::json::object fields) {
  if (!enabled(l)) {
    return;
  }
  boost::json::object line;
  line.reserve(fields.size() + 3);
  line["ts"] = timestamp();
  line["level"] = name_of(l);
  line["event"] = event;
  for (const auto& [key, value] : fields) {
    line[key] = value;
  }
  std::string text = boost::json::serialize(line);
  text.push_back('\n');
  // One write per line keeps lines whole when threads log at once.
  std::fwrite(text.data(), 1, text.size(), stderr);
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max));
  for (const char c : text.substr(0, max)) {
    out.push_back(c >= 0x20 && c < 0x7F ? c : '?');
  }
  if (text.size() > max) {
    out += "...";
  }
  return out;
}

}  // namespace gesso::log
