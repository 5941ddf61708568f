#include "core/task.hpp"

namespace gesso {

std::optional<task_type> parse_task_type(std::string_view s) {
  if (s == "image") {
    return task_type::image;
  }
  if (s == "video") {
    return task_type::video;
  }
  return std::nullopt;
}

}  // namespace gesso
