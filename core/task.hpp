#pragma once
// The task as the API sees it: its states, its kinds, and the fields a query returns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gesso {

/// The API's task_status values (docs/api.md).
enum class task_status : int { queued = 1, running = 2, succeeded = 3, failed = 4 };

/// Whether a status is final (3 or 4): polling stops there.
constexpr bool is_final(task_status s) {
  return s == task_status::succeeded || s == task_status::failed;
}

/// The kind of output a model produces (docs/api.md: task_type).
enum class task_type { image, video };

/// The wire name of a task type: "image" or "video".
constexpr std::string_view to_string(task_type t) {
  return t == task_type::image ? "image" : "video";
}

/// Parses "image" / "video".
std::optional<task_type> parse_task_type(std::string_view s);

/// The webhook of a task created with a callback_url (docs/api.md#webhooks).
struct task_webhook {
  std::string status = "waiting";  ///< waiting (the task is not final), pending, delivered or failed
  int attempts = 0;
  std::optional<int> last_status_code;
};

/// A task as stored, with what the query endpoint needs. Media fields hold store object keys,
/// not URLs: URLs are signed when a response is rendered.
struct task_record {
  std::string id;
  std::int64_t account_id = 0;
  std::string model_id;
  task_type type = task_type::image;
  task_status status = task_status::queued;
  std::int64_t credits = 0;
  std::int64_t created_at = 0;  ///< Unix seconds
  std::optional<std::string> image_object;
  std::optional<std::string> video_object;
  std::optional<std::string> audio_object;
  std::optional<std::string> error;         ///< the stored reason of a failure (operators' text)
  std::optional<std::string> error_kind;    ///< docs/api.md#failures; nullopt unless failed
  std::optional<int> progress;              ///< 0–100 as the provider last reported it
  std::optional<std::int64_t> finished_at;  ///< Unix seconds, once final
  bool cancel_requested = false;            ///< the client asked to cancel it (docs/api.md#cancel)
  std::optional<task_webhook> webhook;      ///< set when the task was created with a callback_url
};

}  // namespace gesso
