#include "server/engines/task_api_engine.hpp"

#include "core/ids.hpp"
#include "server/engines/fetcher.hpp"
#include "server/engines/image_decoder.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// The envelope {code, msg, data} of an answer, when the body is one.
struct envelope {
  std::int64_t code = -1;
  std::string msg;
  const json::object* data = nullptr;
};

std::optional<envelope> read_envelope(const json::value& root) {
  const json::object* o = root.if_object();
  if (o == nullptr) {
    return std::nullopt;
  }
  envelope e;
  if (const auto* code = o->if_contains("code"); code != nullptr && code->is_int64()) {
    e.code = code->as_int64();
  }
  if (const auto* msg = o->if_contains("msg"); msg != nullptr && msg->is_string()) {
    e.msg = std::string(msg->as_string().subview().substr(0, 300));
  }
  if (const auto* data = o->if_contains("data"); data != nullptr) {
    e.data = data->if_object();
  }
  return e;
}

// The envelope of a body, or nothing when the body is not JSON or not an envelope. The data object
// is copied out so the envelope does not borrow from a parsed document.
struct owned_envelope {
  std::int64_t code = -1;
  std::string msg;
  std::optional<json::object> data;
};

std::optional<owned_envelope> envelope_of(std::string_view body) {
  boost::system::error_code ec;
  const json::value root = json::parse(body, ec);
  const auto e = ec ? std::nullopt : read_envelope(root);
  if (!e) {
    return std::nullopt;
  }
  return owned_envelope{e->code, e->msg, e->data ? std::optional<json::object>(*e->data) : std::nullopt};
}

std::optional<std::string> url_field(const json::object& data, std::string_view name) {
  const auto* v = data.if_contains(name);
  if (v == nullptr || !v->is_string() || v->as_string().empty()) {
    return std::nullopt;
  }
  return std::string(v->as_string());
}

bool unavailable_status(unsigned status) {
  return status >= 500 || status == 429 || status == 408;
}

}  // namespace

task_api_settings parse_task_api_settings(std::string_view json_text, const model_spec& model) {
  task_api_settings s;
  s.model_id = model.id;
  const json::object o = json::parse(json_text).as_object();
  for (const auto& member : o) {
    const std::string_view key = member.key();
    const json::value& value = member.value();
    auto text = [&] {
      if (!value.is_string() || value.as_string().empty()) {
        throw std::invalid_argument("engine_settings." + std::string(key) + " must be a non-empty string");
      }
      return std::string(value.as_string());
    };
    auto number = [&](std::int64_t lo, std::int64_t hi) {
      if (!value.is_int64() || value.as_int64() < lo || value.as_int64() > hi) {
        throw std::invalid_argument("engine_settings." + std::string(key) + " must be a whole number from " +
                                    std::to_string(lo) + " to " + std::to_string(hi));
      }
      return value.as_int64();
    };
    if (key == "base_url") {
      s.base_url = text();
      while (s.base_url.ends_with('/')) {
        s.base_url.pop_back();
      }
    } else if (key == "api_key") {
      s.api_key = text();
    } else if (key == "model_id") {
      s.model_id = text();
    } else if (key == "poll_interval_ms") {
      s.poll_interval_ms = static_cast<int>(number(10, 3'600'000));
    } else if (key == "request_timeout_ms") {
      s.request_timeout_ms = static_cast<int>(number(100, 600'000));
    } else if (key == "max_output_bytes") {
      s.max_output_bytes = static_cast<std::size_t>(number(1024, 4LL * 1024 * 1024 * 1024));
    } else {
      throw std::invalid_argument("unknown task-api engine setting \"" + std::string(key) + "\"");
    }
  }
  const auto url = boost::urls::parse_absolute_uri(s.base_url);
  if (!url || (url->scheme() != "http" && url->scheme() != "https")) {
    throw std::invalid_argument("engine_settings.base_url must be an http or https URL");
  }
  if (!is_api_key_shaped(s.api_key)) {
    throw std::invalid_argument("engine_settings.api_key must be an sk- API key");
  }
  return s;
}

upstream_created read_create_answer(unsigned status, std::string_view body) {
  upstream_created r;
  const auto e = envelope_of(body);
  if (status == 401) {
    r.outcome = upstream_created::kind::unauthorized;
    r.message = e ? e->msg : "";
    return r;
  }
  if (unavailable_status(status) || !e) {
    r.outcome = upstream_created::kind::unavailable;
    r.message = "HTTP " + std::to_string(status);
    return r;
  }
  r.message = e->msg;
  if (status == 200 && e->code == 200 && e->data.has_value()) {
    if (const auto id = url_field(*e->data, "task_id"); id && id->size() <= 200) {
      r.outcome = upstream_created::kind::accepted;
      r.task_id = *id;
      return r;
    }
  }
  r.outcome =
      status >= 400 && status < 500 ? upstream_created::kind::refused : upstream_created::kind::unavailable;
  return r;
}

upstream_task read_query_answer(unsigned status, std::string_view body) {
  upstream_task r;
  const auto e = envelope_of(body);
  if (e) {
    r.message = e->msg;
  }
  if (status == 401) {
    r.outcome = upstream_task::kind::unauthorized;
    return r;
  }
  if (status == 404) {
    r.outcome = upstream_task::kind::not_found;
    return r;
  }
  if (status != 200 || !e || e->code != 200 || !e->data.has_value()) {
    r.outcome = upstream_task::kind::unavailable;
    return r;
  }
  const auto* task_status = e->data->if_contains("task_status");
  if (task_status == nullptr || !task_status->is_int64() || task_status->as_int64() < 1 ||
      task_status->as_int64() > 4) {
    r.outcome = upstream_task::kind::unavailable;
    return r;
  }
  r.outcome = upstream_task::kind::found;
  r.task_status = static_cast<int>(task_status->as_int64());
  r.image_url = url_field(*e->data, "image_url");
  r.video_url = url_field(*e->data, "video_url");
  r.audio_url = url_field(*e->data, "audio_url");
  return r;
}

engine_outcome task_api_engine::run(const engine_job& job, media_store& media) {
  return job.provider_job ? poll(job, media) : submit(job);
}

engine_outcome task_api_engine::submit(const engine_job& job) {
  engine_outcome out;
  json::array urls;
  for (const auto& u : job.image_urls) {
    urls.emplace_back(u);
  }
  const http_call call{
      .method = "POST",
      .url = settings_.base_url + "/api/v1/tasks/create",
      .headers = {{"Authorization", "Bearer " + settings_.api_key}, {"Content-Type", "application/json"}},
      .body = json::serialize(json::object{{"model_id", settings_.model_id},
                                           {"prompt", job.prompt},
                                           {"aspect_ratio", job.aspect_ratio},
                                           {"image_urls", std::move(urls)}})};
  const auto answer =
      http_request(call, 1024 * 1024, std::chrono::milliseconds(settings_.request_timeout_ms), policy_);
  if (!answer) {
    out.result = engine_outcome::kind::retry;
    out.error = "the upstream did not answer: " + answer.error().reason;
    return out;
  }
  const auto created = read_create_answer(answer->status, answer->body);
  switch (created.outcome) {
    case upstream_created::kind::accepted:
      out.result = engine_outcome::kind::waiting;
      out.provider_job = created.task_id;
      out.delay = std::chrono::milliseconds(settings_.poll_interval_ms);
      return out;
    case upstream_created::kind::refused:
      out.result = engine_outcome::kind::failed;
      out.error = "the upstream refused the task: " + created.message;
      return out;
    case upstream_created::kind::unauthorized:
      out.result = engine_outcome::kind::failed;
      out.error = "the upstream rejected Gesso's API key";
      return out;
    case upstream_created::kind::unavailable:
      break;
  }
  out.result = engine_outcome::kind::retry;
  out.error = "the upstream is unavailable (" + created.message + ")";
  return out;
}

engine_outcome task_api_engine::poll(const engine_job& job, media_store& media) {
  engine_outcome out;
  // Unless the task ends here, keep the provider's job so the next claim polls it again.
  out.result = engine_outcome::kind::waiting;
  out.provider_job = job.provider_job;
  out.delay = std::chrono::milliseconds(settings_.poll_interval_ms);
  const http_call call{.method = "GET",
                       .url = settings_.base_url + "/api/v1/tasks/" + *job.provider_job,
                       .headers = {{"Authorization", "Bearer " + settings_.api_key}}};
  const auto answer =
      http_request(call, 1024 * 1024, std::chrono::milliseconds(settings_.request_timeout_ms), policy_);
  if (!answer) {
    return out;  // a failed poll is not a failed task: the deadline bounds the wait
  }
  const auto task = read_query_answer(answer->status, answer->body);
  if (task.outcome == upstream_task::kind::unavailable ||
      (task.outcome == upstream_task::kind::found && task.task_status < 3)) {
    return out;
  }
  out.provider_job.reset();
  out.result = engine_outcome::kind::failed;
  if (task.outcome == upstream_task::kind::not_found) {
    out.error = "the upstream no longer knows the task";
    return out;
  }
  if (task.outcome == upstream_task::kind::unauthorized) {
    out.error = "the upstream rejected Gesso's API key";
    return out;
  }
  if (task.task_status == 4) {
    out.error = "the upstream task failed";
    return out;
  }
  // Succeeded upstream: copy the outputs, so our URLs do not depend on the upstream's retention.
  const fetch_limits limits{
      .max_bytes = settings_.max_output_bytes, .timeout = 120s, .max_redirects = 3, .policy = policy_};
  auto copy = [&](const std::optional<std::string>& url, std::string_view what,
                  std::optional<std::string>* object) -> bool {
    if (!url) {
      out.error = "the upstream finished without " + std::string(what);
      return false;
    }
    auto bytes = fetch_input(*url, limits);
    if (!bytes) {
      out.result = engine_outcome::kind::retry;
      out.provider_job = job.provider_job;
      out.error = "could not copy the upstream's " + std::string(what) + ": " + bytes.error().reason;
      return false;
    }
    std::string extension = what == "video_url" ? "mp4" : "m4a";
    if (what == "image_url") {
      const auto format = sniff_image(*bytes);
      if (!format) {
        out.error = "the upstream's image_url is not a PNG, JPEG or WebP image";
        return false;
      }
      extension = *format == image_format::png ? "png" : *format == image_format::jpeg ? "jpg" : "webp";
    }
    *object = media_store::object_key(job.task_id, extension);
    media.put(**object, *bytes);
    return true;
  };
  if (type_ == task_type::image) {
    if (!copy(task.image_url, "image_url", &out.image)) {
      return out;
    }
  } else {
    if (!copy(task.video_url, "video_url", &out.video)) {
      return out;
    }
    if (task.audio_url && !copy(task.audio_url, "audio_url", &out.audio)) {
      return out;
    }
  }
  out.result = engine_outcome::kind::succeeded;
  return out;
}

}  // namespace gesso::engines
