#include "core/task_listing.hpp"

#include "core/base64.hpp"
#include "core/ids.hpp"

#include <algorithm>
#include <charconv>

namespace gesso {

std::string encode_cursor(const task_cursor& cursor) {
  std::string text = encode_base64("v1:" + std::to_string(cursor.created_us) + ":" + cursor.id);
  std::replace(text.begin(), text.end(), '+', '-');
  std::replace(text.begin(), text.end(), '/', '_');
  text.erase(std::find(text.begin(), text.end(), '='), text.end());
  return text;
}

std::optional<task_cursor> decode_cursor(std::string_view text) {
  if (text.empty() || text.size() > 128 ||
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
          std::string_view::npos) {
    return std::nullopt;
  }
  std::string standard(text);
  std::replace(standard.begin(), standard.end(), '-', '+');
  std::replace(standard.begin(), standard.end(), '_', '/');
  const auto plain = decode_base64(standard);
  if (!plain || !plain->starts_with("v1:")) {
    return std::nullopt;
  }
  const std::string_view rest = std::string_view(*plain).substr(3);
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  task_cursor cursor;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + colon, cursor.created_us);
  if (ec != std::errc() || end != rest.data() + colon || cursor.created_us < 0) {
    return std::nullopt;
  }
  cursor.id = std::string(rest.substr(colon + 1));
  if (!is_task_id(cursor.id)) {
    return std::nullopt;
  }
  return cursor;
}

}  // namespace gesso
