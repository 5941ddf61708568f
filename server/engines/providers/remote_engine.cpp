#include "server/engines/providers/remote_engine.hpp"

#include "core/base64.hpp"
#include "core/create_request.hpp"
#include "server/engines/image_decoder.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

bool circuit::allows(steady::time_point now) {
  std::lock_guard lock(mutex_);
  if (consecutive_failures_ < failures_to_open) {
    return true;
  }
  if (now - opened_at_ < open_for || probing_) {
    return false;
  }
  probing_ = true;  // half-open: one request finds out whether the route is back
  return true;
}

void circuit::succeeded() {
  std::lock_guard lock(mutex_);
  consecutive_failures_ = 0;
  probing_ = false;
}

void circuit::failed(steady::time_point now) {
  std::lock_guard lock(mutex_);
  if (++consecutive_failures_ >= failures_to_open &&
      (probing_ || consecutive_failures_ == failures_to_open)) {
    opened_at_ = now;
  }
  probing_ = false;
}

void circuit::rate_limited(steady::time_point now, std::chrono::milliseconds retry_after) {
  std::lock_guard lock(mutex_);
  consecutive_failures_ = 0;
  probing_ = false;
  paced_until_ = std::max(paced_until_, now + retry_after);
}

std::chrono::milliseconds circuit::paced_for(steady::time_point now) const {
  std::lock_guard lock(mutex_);
  return now < paced_until_ ? std::chrono::ceil<std::chrono::milliseconds>(paced_until_ - now) : 0ms;
}

std::chrono::milliseconds circuit::opens_in(steady::time_point now) const {
  std::lock_guard lock(mutex_);
  if (consecutive_failures_ < failures_to_open || now - opened_at_ >= open_for) {
    return 0ms;
  }
  return std::chrono::ceil<std::chrono::milliseconds>(opened_at_ + open_for - now);
}

circuit::state circuit::current(steady::time_point now) const {
  std::lock_guard lock(mutex_);
  if (consecutive_failures_ < failures_to_open) {
    return state::closed;
  }
  return probing_ || now - opened_at_ >= open_for ? state::half_open : state::open;
}

std::string provider_job_text(std::size_t route_index, const route_settings& settings, const std::string& job,
                              const std::string& cost) {
  json::object o{
      {"route", route_index}, {"engine", settings.engine}, {"model", settings.model}, {"job", job}};
  if (auto parsed = cost.empty() ? std::nullopt : json_of(cost)) {
    o["cost"] = std::move(*parsed);
  }
  return json::serialize(o);
}

std::optional<remembered_job> read_provider_job(std::string_view text) {
  const auto v = json_of(text);
  const json::object* o = v ? v->if_object() : nullptr;
  const json::value* route = o != nullptr ? o->if_contains("route") : nullptr;
  const json::value* job = o != nullptr ? o->if_contains("job") : nullptr;
  if (route == nullptr || !route->is_int64() || route->as_int64() < 0 || job == nullptr ||
      !job->is_string()) {
    return std::nullopt;
  }
  return remembered_job{static_cast<std::size_t>(route->as_int64()), std::string(job->as_string())};
}

namespace {

engine_outcome failed_outcome(failure_kind kind, std::string message) {
  engine_outcome out;
  out.result = engine_outcome::kind::failed;
  out.failure = std::string(failure_kind_name(kind));
  out.error = std::move(message);
  return out;
}

// -1 portrait, 0 square, 1 landscape.
int orientation(long w, long h) {
  return w == h ? 0 : (w > h ? 1 : -1);
}

int orientation_of_ratio(std::string_view ratio) {
  const auto colon = ratio.find(':');
  if (colon == std::string_view::npos) {
    return 0;
  }
  return orientation(std::stol(std::string(ratio.substr(0, colon))),
                     std::stol(std::string(ratio.substr(colon + 1))));
}

std::string_view extension_of(image_format f) {
  return f == image_format::png ? "png" : f == image_format::jpeg ? "jpg" : "webp";
}

bool is_mp4(std::string_view bytes) {
  return bytes.size() >= 12 && bytes.substr(4, 4) == "ftyp";
}

}  // namespace

provider_engine::provider_engine(const model_spec& model, std::vector<std::unique_ptr<route>> routes,
                                 const engine_environment& environment)
    : model_id_(model.id),
      type_(model.type),
      duration_seconds_(model.duration_seconds),
      take_route_slot_(environment.take_route_slot),
      observe_route_(environment.observe_route),
      routes_(std::move(routes)),
      fetching_(environment.fetching) {}

engine_outcome provider_engine::run(const engine_job& job, media_store& media) {
  return job.provider_job ? poll(job, media) : submit(job, media);
}

provider_request provider_engine::request_for(const engine_job& job) const {
  provider_request r;
  r.task_id = job.task_id;
  r.attempt = job.attempt;
  r.image_count = job.image_urls.size();
  r.type = type_;
  r.prompt = job.prompt;
  r.aspect_ratio = job.aspect_ratio;
  r.duration_seconds = duration_seconds_;
  return r;
}

void provider_engine::cancel(const std::string& provider_job) {
  const auto remembered = read_provider_job(provider_job);
  if (remembered && remembered->route_index < routes_.size()) {
    routes_[remembered->route_index]->adapter->cancel(remembered->job);
  }
}

std::vector<route_health> provider_engine::routes_health() const {
  std::vector<route_health> out;
  const auto now = steady::now();
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const circuit::state state = routes_[i]->health.current(now);
    out.push_back({i, routes_[i]->settings.engine,
                   state == circuit::state::closed      ? 0
                   : state == circuit::state::half_open ? 1
                                                        : 2});
  }
  return out;
}

provider_step provider_engine::observed(std::size_t index, const std::function<provider_step()>& call) {
  const auto started = steady::now();
  provider_step step = call();
  if (observe_route_) {
    std::string outcome = step.what == provider_step::kind::retry ? "retry"
                          : step.what == provider_step::kind::failed
                              ? std::string(failure_kind_name(step.failure))
                              : "ok";
    observe_route_({model_id_, index, routes_[index]->settings.engine, std::move(outcome),
                    std::chrono::duration<double>(steady::now() - started).count()});
  }
  return step;
}

std::vector<std::size_t> provider_engine::route_order() {
  std::map<int, std::vector<std::size_t>> by_priority;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    by_priority[routes_[i]->settings.priority].push_back(i);
  }
  std::vector<std::size_t> order;
  std::lock_guard lock(random_mutex_);
  for (auto& [priority, group] : by_priority) {
    // Weighted draw without replacement: a route of weight 3 goes first three times as often as one of 1.
    while (!group.empty()) {
      int total = 0;
      for (const std::size_t i : group) {
        total += routes_[i]->settings.weight;
      }
      int pick = std::uniform_int_distribution<int>(0, total - 1)(random_);
      auto it = group.begin();
      while ((pick -= routes_[*it]->settings.weight) >= 0) {
        ++it;
      }
      order.push_back(*it);
      group.erase(it);
    }
  }
  return order;
}

std::optional<engine_outcome> provider_engine::fetch_inputs(const engine_job& job,
                                                            provider_request& request) const {
  std::size_t budget = input_limits::bytes_per_task;
  for (std::size_t i = 0; i < job.image_urls.size(); ++i) {
    const std::string where = "image_urls[" + std::to_string(i) + "]";
    auto bytes = fetch_input(job.image_urls[i],
                             {.max_bytes = budget, .timeout = 15s, .max_redirects = 3, .policy = fetching_});
    if (!bytes) {
      return failed_outcome(failure_kind::invalid_input,
                            where + " could not be fetched: " + bytes.error().reason);
    }
    const auto format = sniff_image(*bytes);
    if (!format || !image_dimensions(*bytes)) {
      return failed_outcome(failure_kind::invalid_input, where + " is not a PNG, JPEG or WebP image");
    }
    budget -= bytes->size();
    request.images.push_back({std::move(*bytes), *format, job.image_urls[i]});
  }
  return std::nullopt;
}

engine_outcome provider_engine::submit(const engine_job& job, media_store& media) {
  provider_request request = request_for(job);
  bool fetched = false;
  std::string last = "no route is configured";
  std::chrono::milliseconds delay = 1h;
  bool capped = false;
  std::chrono::milliseconds paced = 0ms;  // the shortest 429 pause among the routes skipped for one
  for (const std::size_t index : route_order()) {
    route& r = *routes_[index];
    if (const auto pause = r.health.paced_for(steady::now()); pause > 0ms) {
      paced = paced == 0ms ? pause : std::min(paced, pause);  // no request until its Retry-After passed
      continue;
    }
    if (r.settings.max_concurrency > 0 && take_route_slot_ &&
        !take_route_slot_(model_id_ + "/" + std::to_string(index) + "/" + r.settings.engine,
                          r.settings.max_concurrency, job.task_id)) {
      capped = true;  // at its max_concurrency across all workers: try the next route
      continue;
    }
    // Inputs are fetched once, and only when a route can take the task: a task waiting for a slot
    // fetches nothing. Before the circuit check, so a half-open probe is always answered.
    if (!fetched) {
      if (auto refused = fetch_inputs(job, request)) {
        return std::move(*refused);
      }
      fetched = true;
    }
    if (!r.health.allows(steady::now())) {
      last = r.settings.engine + " is skipped: its circuit is open after repeated failures";
      // Not again before it lets a probe through.
      delay = std::min(delay, std::max<std::chrono::milliseconds>(r.health.opens_in(steady::now()), 1s));
      continue;
    }
    provider_step step = observed(index, [&] { return r.adapter->submit(request); });
    if (step.what == provider_step::kind::retry) {
      if (step.rate_limited) {
        r.health.rate_limited(steady::now(), step.delay);
      } else {
        r.health.failed(steady::now());
      }
      last = step.message;
      delay = std::min(delay, step.delay);
      continue;  // fail over to the next route
    }
    r.health.succeeded();
    return finish(job, index, "", std::move(step), media);
  }
  engine_outcome out;
  if ((capped || paced > 0ms) && delay == 1h) {
    // Every route is capped or paced by a 429, none unavailable and nothing sent: wait without spending
    // an attempt, for a slot or until the provider's Retry-After has passed.
    out.result = engine_outcome::kind::waiting;
    out.delay = paced > 0ms && !capped
                    ? paced
                    : std::min<std::chrono::milliseconds>(1s, routes_.front()->settings.poll_interval);
    return out;
  }
  out.result = engine_outcome::kind::retry;
  out.failure = std::string(failure_kind_name(failure_kind::provider_unavailable));
  out.error = last;
  out.delay = delay;
  return out;
}

engine_outcome provider_engine::poll(const engine_job& job, media_store& media) {
  const auto remembered = read_provider_job(*job.provider_job);
  if (!remembered || remembered->route_index >= routes_.size()) {
    return failed_outcome(failure_kind::internal, "the provider job recorded on the task cannot be read");
  }
  route& r = *routes_[remembered->route_index];
  const provider_request request = request_for(job);
  provider_step step =
      observed(remembered->route_index, [&] { return r.adapter->poll(request, remembered->job); });
  if (step.what == provider_step::kind::retry) {
    // A failed poll is not a failed task: poll again later; the deadline bounds the wait.
    step = provider_step::pending(remembered->job, std::max(step.delay, r.settings.poll_interval));
  }
  return finish(job, remembered->route_index, remembered->job, std::move(step), media);
}

engine_outcome provider_engine::finish(const engine_job& job, std::size_t route_index,
                                       const std::string& job_id, provider_step step, media_store& media) {
  route& r = *routes_[route_index];
  engine_outcome out;
  out.provider_job = provider_job_text(
      route_index, r.settings, step.what == provider_step::kind::pending ? step.job : job_id, step.cost);
  switch (step.what) {
    case provider_step::kind::pending:
      out.result = engine_outcome::kind::waiting;
      out.delay = step.delay;
      out.progress = step.progress;
      return out;
    case provider_step::kind::failed:
    case provider_step::kind::retry:
      out.result = step.what == provider_step::kind::failed ? engine_outcome::kind::failed
                                                            : engine_outcome::kind::retry;
      out.failure = std::string(failure_kind_name(step.failure));
      out.error = std::move(step.message);
      out.delay = step.delay;
      return out;
    case provider_step::kind::done:
      break;
  }
  if (step.outputs.empty()) {
    return failed_outcome(failure_kind::internal, r.settings.engine + " finished without an output");
  }
  provider_output& output = step.outputs.front();
  std::string bytes = std::move(output.bytes);
  if (bytes.empty() && is_data_url(output.url)) {
    const auto comma = output.url.find(',');
    bytes =
        decode_base64(
            std::string_view(output.url).substr(comma == std::string::npos ? output.url.size() : comma + 1))
            .value_or("");
  } else if (bytes.empty()) {
    auto downloaded = r.client->download(output.url, output.with_auth);
    if (!downloaded) {
      // The job is still there: poll again (a fresh URL where the provider gives one) until the deadline.
      out.result = job_id.empty() ? engine_outcome::kind::retry : engine_outcome::kind::waiting;
      out.failure = std::string(failure_kind_name(failure_kind::provider_unavailable));
      out.error = "could not copy the output: " + downloaded.error().reason;
      out.delay = r.settings.poll_interval;
      if (job_id.empty()) {
        out.provider_job.reset();
      }
      return out;
    }
    bytes = std::move(*downloaded);
  }
  if (type_ == task_type::image) {
    const auto format = sniff_image(bytes);
    const auto size = image_dimensions(bytes);
    if (!format || !size) {
      return failed_outcome(failure_kind::internal,
                            r.settings.engine + " returned something that is not an image");
    }
    if (orientation(size->first, size->second) != orientation_of_ratio(job.aspect_ratio)) {
      return failed_outcome(failure_kind::internal,
                            r.settings.engine + " returned a " + std::to_string(size->first) + "x" +
                                std::to_string(size->second) + " image for aspect ratio " + job.aspect_ratio);
    }
    out.image = media_store::object_key(job.task_id, extension_of(*format));
    media.put(*out.image, bytes);
  } else {
    if (!is_mp4(bytes)) {
      return failed_outcome(failure_kind::internal,
                            r.settings.engine + " returned something that is not an MP4 video");
    }
    out.video = media_store::object_key(job.task_id, "mp4");
    media.put(*out.video, bytes);
  }
  out.result = engine_outcome::kind::succeeded;
  return out;
}

}  // namespace gesso::engines
