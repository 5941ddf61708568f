// http-task: any provider that follows the usual pattern — submit a JSON task, get an id, poll a status,
// read an output URL or base64, read an error message — described in the catalog instead of written in
// C++ (docs/engines.md#http-task). The settings are read and checked once (http_task_spec.cpp); every
// answer that does not match them fails the task as `internal`, naming the route and the pointer.

#include "core/base64.hpp"
#include "server/engines/providers/adapters.hpp"
#include "server/engines/providers/http_task_spec.hpp"
#include "server/engines/providers/http_task_template.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;
using namespace http_task;

namespace {

// A stable seed from the task id (FNV-1a, 31 bits): the same on every attempt and every build.
std::int64_t seed_of(std::string_view task_id) {
  std::uint32_t h = 2166136261U;
  for (const char c : task_id) {
    h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
  }
  return static_cast<std::int64_t>(h & 0x7FFFFFFFU);
}

// An answer read as JSON, or the step that ends this exchange (a retry or a failure).
struct exchanged {
  std::optional<provider_step> stop;
  json::value body;
  http_answer http;
};

class http_task_adapter : public provider_adapter {
 public:
  http_task_adapter(const route_settings& s, const provider_client& client, const model_spec& model)
      : settings_(&s), client_(&client), spec_(parse_spec(s, model)), label_("http-task " + s.label) {}

  provider_step submit(const provider_request& r) override {
    template_values values = values_for(r);
    exchanged a = exchange(spec_.create.pick(r.images.size()), values, "create");
    if (a.stop) {
      return std::move(*a.stop);
    }
    if (spec_.sync) {
      return output_of(a.body, "create");
    }
    const json::value* id = find(a.body, spec_.id_pointer);
    const auto text = id != nullptr ? text_of(*id) : std::nullopt;
    if (!text || text->empty()) {
      return mismatch("create", spec_.id_pointer, "create.id", id, "a string or number");
    }
    return provider_step::pending(*text, next_poll(a.http));
  }

  provider_step poll(const provider_request& r, const std::string& job) override {
    template_values values = values_for(r);
    values.named["id"] = job;
    exchanged a = exchange(spec_.poll.pick(r.image_count), values, "poll");
    if (a.stop) {
      return std::move(*a.stop);
    }
    const json::value* status = find(a.body, spec_.status_pointer);
    const auto text = status != nullptr ? text_of(*status) : std::nullopt;
    if (!text) {
      return mismatch("poll", spec_.status_pointer, "poll.status", status, "a string");
    }
    const auto state = spec_.status_map.find(*text);
    if (state == spec_.status_map.end()) {
      return provider_step::failed(failure_kind::internal,
                                   label_ + ": the poll answer's " + spec_.status_pointer + " is \"" +
                                       short_message(*text) + "\", which settings.poll.status_map does not name");
    }
    switch (state->second) {
      case task_state::queued:
      case task_state::running:
        return provider_step::pending(job, next_poll(a.http), progress_of(a.body));
      case task_state::canceled:
        return provider_step::failed(failure_kind::canceled, label_ + ": the provider canceled the job");
      case task_state::failed:
        return job_failed(a.body);
      case task_state::succeeded:
        break;
    }
    if (!spec_.result) {
      return output_of(a.body, "poll");
    }
    for (const auto& [name, pointer] : spec_.captures) {
      const json::value* v = find(a.body, pointer);
      if (v == nullptr || !text_of(*v)) {
        return mismatch("poll", pointer, "poll.capture." + name, v, "a string or number");
      }
      values.named[name] = *v;
    }
    exchanged result = exchange(*spec_.result, values, "result");
    if (result.stop) {
      // The job is done at the provider; a failed follow-up is retried by polling again.
      return result.stop->what == provider_step::kind::retry ? provider_step::pending(job, next_poll(a.http))
                                                              : std::move(*result.stop);
    }
    return output_of(result.body, "result");
  }

  void cancel(const std::string& job) override {
    if (spec_.cancel) {
      template_values values;
      values.named["id"] = job;
      values.named["model"] = settings_->model;
      static_cast<void>(send(*spec_.cancel, values));
    }
  }

 private:
  template_values values_for(const provider_request& r) const {
    template_values v;
    v.named["prompt"] = r.prompt;
    v.named["aspect_ratio"] = r.aspect_ratio;
    v.named["seed"] = seed_of(r.task_id);
    v.named["duration"] = r.duration_seconds;
    v.named["model"] = settings_->model;
    v.named["task_id"] = r.task_id;
    for (const auto& [name, map] : spec_.maps) {
      const auto it = map.values.find(map.by_duration ? std::to_string(r.duration_seconds) : r.aspect_ratio);
      if (it != map.values.end()) {
        v.named[name] = it->second;
      }
    }
    for (const provider_input& image : r.images) {
      v.image_urls.push_back(image.url);
      v.image_base64.push_back(encode_base64(image.bytes));
      v.image_data_urls.push_back(image.data_url());
    }
    return v;
  }

  checked<http_answer> send(const request_spec& req, const template_values& values) const {
    std::string target = render_text(req.path, values, true);
    header_list headers;
    for (const auto& [name, value] : req.headers) {
      std::string text = render_text(value, values, false);
      std::erase_if(text, [](char c) { return c == '\r' || c == '\n'; });  // a value cannot add a header
      headers.emplace_back(name, std::move(text));
    }
    if (spec_.auth == auth_kind::query) {
      target += (target.find('?') == std::string::npos ? "?" : "&") + spec_.auth_name + "=" +
                boost::urls::encode(settings_->api_key, boost::urls::unreserved_chars);
    } else if (spec_.auth == auth_kind::jwt_hs256) {
      headers.emplace_back("Authorization",
                           "Bearer " + kling_jwt(settings_->api_key, spec_.secret, std::time(nullptr)));
    }
    std::string body;
    if (req.body) {
      body = json::serialize(render(*req.body, values));
      headers.emplace_back("Content-Type", "application/json");
    }
    return client_->send(req.method, target, std::move(headers), std::move(body), client_->inline_answer_bytes());
  }

  // Sends one request and reads its answer: a retry for no answer or a retryable status, a failure of
  // its kind for an error answer (HTTP or an envelope code), `internal` for an answer that is not JSON.
  exchanged exchange(const request_spec& req, const template_values& values, std::string_view step) const {
    exchanged out;
    auto answer = send(req, values);
    if (!answer) {
      out.stop = no_answer(label_, answer.error());
      return out;
    }
    out.http = std::move(*answer);
    const auto parsed = json_of(out.http.body);
    const bool success = out.http.status >= 200 && out.http.status < 300;
    if (!success) {
      out.stop = http_failure(out.http, parsed);
      return out;
    }
    if (!parsed) {
      out.stop = provider_step::failed(failure_kind::internal,
                                       label_ + ": the " + std::string(step) +
                                           " answer is not JSON (it begins \"" +
                                           short_message(out.http.body.substr(0, 40)) + "\")");
      return out;
    }
    out.body = std::move(*parsed);
    if (auto refused = envelope_failure(out.body)) {
      out.stop = std::move(*refused);
    }
    return out;
  }

  bool retry_status(const http_answer& a) const {
    if (spec_.retry_statuses.empty()) {
      return retryable(a);
    }
    return std::find(spec_.retry_statuses.begin(), spec_.retry_statuses.end(), a.status) !=
           spec_.retry_statuses.end();
  }

  // The error's message and code from the configured pointers ("" where absent).
  std::pair<std::string, std::string> error_of(const std::optional<json::value>& body) const {
    if (!body) {
      return {};
    }
    const auto at = [&](const std::string& pointer) {
      const json::value* v = pointer.empty() ? nullptr : find(*body, pointer);
      return v != nullptr ? text_of(*v).value_or("") : std::string();
    };
    return {at(spec_.errors.message), at(spec_.errors.code)};
  }

  bool is_policy(const std::string& message, const std::string& code) const {
    if (looks_like_policy(message) || looks_like_policy(code) ||
        std::find(spec_.errors.policy_codes.begin(), spec_.errors.policy_codes.end(), code) !=
            spec_.errors.policy_codes.end()) {
      return true;
    }
    return std::any_of(spec_.errors.policy_patterns.begin(), spec_.errors.policy_patterns.end(),
                       [&](const std::string& p) {
                         return boost::algorithm::icontains(message, p) || boost::algorithm::icontains(code, p);
                       });
  }

  static bool among(const std::vector<std::string>& codes, const std::string& code) {
    return !code.empty() && std::find(codes.begin(), codes.end(), code) != codes.end();
  }

  static std::string described(const std::string& message, const std::string& code) {
    return short_message(message) + (code.empty() ? "" : " (code " + code + ")");
  }

  provider_step http_failure(const http_answer& a, const std::optional<json::value>& body) const {
    auto [message, code] = error_of(body);
    const std::string text = message.empty() && code.empty() ? short_message(a.body.substr(0, 200))
                                                             : described(message, code);
    if (is_policy(message, code)) {
      return provider_step::failed(failure_kind::content_policy, label_ + ": " + text);
    }
    if (retry_status(a) || among(spec_.errors.retry_codes, code)) {
      provider_step step = provider_step::retry(label_ + " answered HTTP " + std::to_string(a.status) + ": " + text,
                                                retry_after(a).value_or(2s));
      step.rate_limited = a.status == 429;
      return step;
    }
    const bool invalid = a.status == 400 || a.status == 422 || among(spec_.errors.invalid_codes, code);
    return provider_step::failed(invalid ? failure_kind::invalid_input : failure_kind::provider_unavailable,
                                 label_ + " answered HTTP " + std::to_string(a.status) + ": " + text);
  }

  // An error inside a successful HTTP answer: the code at errors.code is not one of errors.ok.
  std::optional<provider_step> envelope_failure(const json::value& body) const {
    if (spec_.errors.ok.empty()) {
      return std::nullopt;
    }
    const auto [message, code] = error_of(body);
    if (among(spec_.errors.ok, code)) {
      return std::nullopt;
    }
    const std::string text = label_ + " refused the request: " + described(message, code);
    if (code.empty()) {
      return provider_step::failed(failure_kind::internal,
                                   label_ + ": the answer has no " + spec_.errors.code + " (settings.errors.code)");
    }
    if (is_policy(message, code)) {
      return provider_step::failed(failure_kind::content_policy, text);
    }
    if (among(spec_.errors.retry_codes, code)) {
      return provider_step::retry(text, 5s);
    }
    return provider_step::failed(
        among(spec_.errors.invalid_codes, code) ? failure_kind::invalid_input : failure_kind::provider_unavailable,
        text);
  }

  provider_step job_failed(const json::value& body) const {
    std::string why;
    if (const json::value* v = spec_.failure_pointer.empty() ? nullptr : find(body, spec_.failure_pointer)) {
      why = text_of(*v).value_or(json::serialize(*v));
    }
    const auto [message, code] = error_of(body);
    if (why.empty()) {
      why = message;
    }
    return provider_step::failed(is_policy(why, code) ? failure_kind::content_policy : failure_kind::provider_unavailable,
                                 label_ + ": the job failed" + (why.empty() && code.empty() ? "" : ": " + described(why, code)));
  }

  provider_step mismatch(std::string_view step, const std::string& pointer, const std::string& setting,
                         const json::value* found, std::string_view wanted) const {
    return provider_step::failed(
        failure_kind::internal,
        label_ + ": the " + std::string(step) + " answer's " + (pointer.empty() ? "root" : pointer) +
            (found == nullptr ? " is missing" : " is " + std::string(kind_name(*found)) + ", not " + std::string(wanted)) +
            " (settings." + setting + ")");
  }

  provider_step output_of(const json::value& body, std::string_view step) const {
    const json::value* v = find(body, spec_.output_pointer);
    provider_output out;
    out.with_auth = spec_.download_auth;
    if (spec_.output == output_kind::urls) {
      const json::value* first = v != nullptr && v->is_array() && !v->as_array().empty() ? &v->as_array()[0] : nullptr;
      if (first == nullptr || !first->is_string()) {
        return mismatch(step, spec_.output_pointer, "output.urls", v, "a list of URLs");
      }
      out.url = std::string(first->as_string());
    } else if (v == nullptr || !v->is_string() || v->as_string().empty()) {
      return mismatch(step, spec_.output_pointer, spec_.output == output_kind::url ? "output.url" : "output.base64",
                      v, "a string");
    } else if (spec_.output == output_kind::url) {
      out.url = std::string(v->as_string());
    } else {
      std::string_view text = v->as_string();
      if (text.starts_with("data:")) {
        text.remove_prefix(std::min(text.size(), text.find(',') + 1));
      }
      auto bytes = decode_base64(text);
      if (!bytes || bytes->empty()) {
        return provider_step::failed(failure_kind::internal, label_ + ": the " + std::string(step) + " answer's " +
                                                                 spec_.output_pointer + " is not base64 (settings.output.base64)");
      }
      out.bytes = std::move(*bytes);
    }
    provider_step done = provider_step::done({std::move(out)});
    if (const json::value* cost = spec_.cost_pointer.empty() ? nullptr : find(body, spec_.cost_pointer)) {
      done.cost = json::serialize(*cost);
    }
    return done;
  }

  int progress_of(const json::value& body) const {
    const json::value* v = spec_.progress_pointer.empty() ? nullptr : find(body, spec_.progress_pointer);
    if (v == nullptr || !v->is_number()) {
      return -1;
    }
    const double p = v->to_number<double>() * spec_.progress_scale;
    return std::isfinite(p) ? static_cast<int>(std::clamp(p, 0.0, 100.0)) : -1;
  }

  // The route's poll_interval_ms, or longer when the provider's header asks (milliseconds).
  std::chrono::milliseconds next_poll(const http_answer& a) const {
    const std::string header = spec_.interval_header.empty() ? "" : header_value(a, spec_.interval_header);
    std::int64_t ms = 0;
    if (!header.empty() && std::from_chars(header.data(), header.data() + header.size(), ms).ec == std::errc{} &&
        ms > 0) {
      return std::max(settings_->poll_interval, std::chrono::milliseconds(std::min<std::int64_t>(ms, 600'000)));
    }
    return settings_->poll_interval;
  }

  const route_settings* settings_;
  const provider_client* client_;
  spec spec_;
  std::string label_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_http_task(const route_settings& s, const provider_client& client,
                                                 const model_spec& model) {
  return std::make_unique<http_task_adapter>(s, client, model);
}

}  // namespace gesso::engines
