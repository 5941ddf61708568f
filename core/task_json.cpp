#include "core/task_json.hpp"

#include "core/client_error.hpp"
#include "core/media_url.hpp"

#include <chrono>

namespace gesso {
namespace json = boost::json;

namespace {

// An absolute, signed URL for a stored output. The expiry is rounded up to the hour so that polls
// within the hour see the same URL (caches and clients can tell it has not changed).
json::value media_url(const media_links& links, const std::optional<std::string>& object) {
  if (!object) {
    return nullptr;
  }
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::int64_t expires = (now + links.ttl.count() + 3599) / 3600 * 3600;
  return json::value(links.public_url + sign_media_path(links.signing_key, *object, expires));
}

// Why a failed task failed (docs/api.md#failures); null for any other task.
json::value error_json(const task_record& t) {
  if (t.status != task_status::failed) {
    return nullptr;
  }
  const std::optional<std::string_view> kind =
      t.error_kind ? std::optional<std::string_view>(*t.error_kind) : std::nullopt;
  return json::object{{"kind", kind.value_or("internal")},
                      {"message", client_failure_message(kind, t.error.value_or(""))}};
}

// 0 while queued, 100 once succeeded, otherwise what the provider last reported (null: not known).
json::value progress_json(const task_record& t) {
  if (t.status == task_status::queued) {
    return 0;
  }
  if (t.status == task_status::succeeded) {
    return 100;
  }
  return t.progress ? json::value(*t.progress) : json::value(nullptr);
}

// The last delivery of the task's webhook, or null when it has no callback_url.
json::value webhook_json(const task_record& t) {
  if (!t.webhook) {
    return nullptr;
  }
  return json::object{
      {"status", t.webhook->status},
      {"attempts", t.webhook->attempts},
      {"last_status_code",
       t.webhook->last_status_code ? json::value(*t.webhook->last_status_code) : json::value(nullptr)}};
}

}  // namespace

// The spec's fields first, in its order and unchanged; the fields added beside them follow.
json::value task_json(const task_record& t, const media_links& links) {
  return json::object{
      {"task_id", t.id},
      {"task_status", static_cast<int>(t.status)},
      {"task_type", to_string(t.type)},
      {"model_id", t.model_id},
      {"image_url", media_url(links, t.image_object)},
      {"video_url", media_url(links, t.video_object)},
      {"audio_url", media_url(links, t.audio_object)},
      {"credits", t.credits},
      {"created_at", t.created_at},
      {"error", error_json(t)},
      {"progress", progress_json(t)},
      {"finished_at", t.finished_at ? json::value(*t.finished_at) : json::value(nullptr)},
      {"cancel_requested", t.cancel_requested},
      {"webhook", webhook_json(t)},
  };
}

}  // namespace gesso
