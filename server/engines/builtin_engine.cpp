#include "server/engines/builtin_engine.hpp"

#include "server/engines/fetcher.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/engines/picture.hpp"
#include "server/engines/providers/routes.hpp"
#include "server/engines/task_api_engine.hpp"
#include "server/engines/video_encoder.hpp"

#include <boost/json.hpp>

#include <stdexcept>

namespace gesso::engines {
namespace json = boost::json;

builtin_settings parse_builtin_settings(std::string_view json_text) {
  builtin_settings s;
  const json::object o = json::parse(json_text).as_object();
  for (const auto& member : o) {
    const std::string_view key = member.key();
    const json::value& value = member.value();
    auto number = [&](double lo, double hi) {
      if (!value.is_number() || value.to_number<double>() < lo || value.to_number<double>() > hi) {
        throw std::invalid_argument("engine_settings." + std::string(key) + " must be a number from " +
                                    std::to_string(lo) + " to " + std::to_string(hi));
      }
      return value.to_number<double>();
    };
    if (key == "latency_ms") {
      s.latency_ms = static_cast<int>(number(0, 3'600'000));
    } else if (key == "failure_rate") {
      s.failure_rate = number(0, 1);
    } else if (key == "retry_rate") {
      s.retry_rate = number(0, 1);
    } else if (key == "long_side") {
      s.long_side = static_cast<int>(number(16, 4096));
    } else if (key == "fps") {
      s.fps = static_cast<int>(number(1, 60));
    } else {
      throw std::invalid_argument("unknown builtin engine setting \"" + std::string(key) + "\"");
    }
  }
  return s;
}

std::chrono::milliseconds builtin_engine::latency(const engine_job&) const {
  return std::chrono::milliseconds(settings_.latency_ms);
}

double builtin_engine::chance() {
  std::lock_guard lock(random_mutex_);
  return std::uniform_real_distribution<double>(0, 1)(random_);
}

engine_outcome builtin_engine::run(const engine_job& job, media_store& media) {
  engine_outcome out;
  if (settings_.failure_rate > 0 && chance() < settings_.failure_rate) {
    out.result = engine_outcome::kind::failed;
    out.error = "the builtin engine failed this task (simulated failure)";
    return out;
  }
  if (settings_.retry_rate > 0 && chance() < settings_.retry_rate) {
    out.result = engine_outcome::kind::retry;
    out.error = "the builtin engine was briefly unavailable (simulated transient failure)";
    out.delay = std::chrono::milliseconds(200);
    return out;
  }
  // Every input image goes through the one fetcher and the sniffing decoder; a bad one fails the
  // task (and so refunds it) with a reason the client can act on. One input at a time: its bytes are
  // dropped once it is decoded, and it is decoded straight to the size the frame needs, so a task holds
  // at most one input's bytes and the small pictures (docs/security.md#bounds).
  const auto [width, height] = frame_size(job.aspect_ratio, settings_.long_side);
  std::uint64_t pixels_left = input_limits::pixels_per_task;
  std::size_t bytes_left = input_limits::bytes_per_task;
  std::vector<rgb_image> inputs;
  for (std::size_t i = 0; i < job.image_urls.size(); ++i) {
    const std::string where = "image_urls[" + std::to_string(i) + "]";
    if (bytes_left == 0) {
      out.result = engine_outcome::kind::failed;
      out.failure = "invalid_input";
      out.error = where + " was not fetched: the task's input images passed " +
                  std::to_string(input_limits::bytes_per_task) + " bytes in all";
      return out;
    }
    fetch_limits fetching{.policy = environment_.fetching};
    fetching.max_bytes = std::min(fetching.max_bytes, bytes_left);
    auto bytes = fetch_input(job.image_urls[i], fetching);
    if (!bytes) {
      out.result = engine_outcome::kind::failed;
      out.failure = "invalid_input";
      out.error = where + " could not be fetched: " + bytes.error().reason;
      return out;
    }
    bytes_left -= bytes->size();
    auto decoded =
        decode_image(*bytes, {.cover_width = width, .cover_height = height, .pixels_left = &pixels_left});
    if (!decoded) {
      out.result = engine_outcome::kind::failed;
      out.failure = "invalid_input";
      out.error = where + " is not a usable image: " + decoded.error().reason;
      return out;
    }
    inputs.push_back(std::move(*decoded));
  }
  const scene picture(job.prompt, job.aspect_ratio, job.image_urls, width, height, std::move(inputs));
  if (job.model->type == task_type::image) {
    out.image = media_store::object_key(job.task_id, "png");
    media.put(*out.image, encode_png(picture.render(0)));
  } else {
    const auto scratch = media.scratch();
    video_request request;
    request.width = width;
    request.height = height;
    request.fps = settings_.fps;
    request.seconds = job.model->duration_seconds;
    request.tones = picture.tones();
    request.video = scratch / (job.task_id + ".mp4");
    request.audio = scratch / (job.task_id + ".m4a");
    encode_video(
        request, [&](int i) { return picture.render(static_cast<double>(i) / settings_.fps); },
        environment_.ffmpeg);
    out.video = media_store::object_key(job.task_id, "mp4");
    out.audio = media_store::object_key(job.task_id, "m4a");
    media.adopt(*out.video, request.video);
    media.adopt(*out.audio, request.audio);
  }
  out.result = engine_outcome::kind::succeeded;
  return out;
}

std::unique_ptr<engine> make_engine(const model_spec& model, const engine_environment& environment) {
  // A model with one route may name a built-in engine; a provider engine takes any number of routes.
  const std::string& name = model.routes.empty() ? model.engine : model.routes.front().engine;
  const std::string& settings = model.routes.empty() ? model.engine_settings : model.routes.front().settings;
  if (model.routes.size() <= 1 && name == "builtin") {
    try {
      return std::make_unique<builtin_engine>(parse_builtin_settings(settings), environment);
    } catch (const std::exception& e) {
      throw std::invalid_argument("model \"" + model.id + "\": " + e.what());
    }
  }
  if (model.routes.size() <= 1 && name == "task-api") {
    try {
      return std::make_unique<task_api_engine>(parse_task_api_settings(settings, model), model,
                                               environment.fetching);
    } catch (const std::exception& e) {
      throw std::invalid_argument("model \"" + model.id + "\": " + e.what());
    }
  }
  if (model.routes.empty()) {
    model_spec one_route = model;
    one_route.routes.push_back({name, 1, 1, settings});
    return make_provider_engine(one_route, environment);
  }
  return make_provider_engine(model, environment);
}

}  // namespace gesso::engines
