#include "server/engines/providers/http_task_answers.hpp"

#include "core/base64.hpp"
#include "core/json_kind.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gesso::engines::http_task {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

bool among(const std::vector<std::string>& codes, const std::string& code) {
  return !code.empty() && std::find(codes.begin(), codes.end(), code) != codes.end();
}

std::string described(const std::string& message, const std::string& code) {
  return short_message(message) + (code.empty() ? "" : " (code " + short_message(code) + ")");
}

}  // namespace

answer_reader::checked_answer answer_reader::check(const http_answer& a, std::string_view step) const {
  checked_answer out;
  auto parsed = json_of(a.body);
  if (a.status < 200 || a.status >= 300) {
    out.stop = http_failure(a, parsed ? &*parsed : nullptr);
    return out;
  }
  if (!parsed) {
    out.stop = provider_step::failed(failure_kind::internal, label_ + ": the " + std::string(step) +
                                                                 " answer is not JSON (it begins \"" +
                                                                 short_message(a.body.substr(0, 40)) + "\")");
    return out;
  }
  out.body = std::move(*parsed);
  out.stop = envelope_failure(out.body);
  return out;
}

provider_step answer_reader::job_of(const json::value& body, const http_answer& a) const {
  const json::value* id = find(body, spec_->id_pointer);
  const auto text = id != nullptr ? text_of(*id) : std::nullopt;
  if (!text || text->empty()) {
    return mismatch("create", spec_->id_pointer, "create.id", id, "a string or number");
  }
  return provider_step::pending(*text, next_poll(a));
}

std::optional<provider_step> answer_reader::state_of(const json::value& body, const http_answer& a,
                                                     const std::string& job) const {
  const json::value* status = find(body, spec_->status_pointer);
  const auto text = status != nullptr && !status->is_bool() ? text_of(*status) : std::nullopt;
  if (!text) {
    return mismatch("poll", spec_->status_pointer, "poll.status", status, "a string");
  }
  const auto state = spec_->status_map.find(*text);
  if (state == spec_->status_map.end()) {
    return provider_step::failed(failure_kind::internal,
                                 label_ + ": the poll answer's " + spec_->status_pointer + " is \"" +
                                     short_message(*text) +
                                     "\", which settings.poll.status_map does not name");
  }
  switch (state->second) {
    case task_state::queued:
    case task_state::running:
      return provider_step::pending(job, next_poll(a), progress_of(body));
    case task_state::canceled:
      return provider_step::failed(failure_kind::canceled, label_ + ": the provider canceled the job");
    case task_state::failed:
      return job_failed(body);
    case task_state::succeeded:
      break;
  }
  return std::nullopt;
}

std::optional<provider_step> answer_reader::capture(const json::value& body, template_values& values) const {
  for (const auto& [name, pointer] : spec_->captures) {
    const json::value* v = find(body, pointer);
    if (v == nullptr || v->is_bool() || !text_of(*v)) {
      return mismatch("poll", pointer, "poll.capture." + name, v, "a string or number");
    }
    values.named[name] = *v;
  }
  return std::nullopt;
}

provider_step answer_reader::output_of(const json::value& body, std::string_view step) const {
  const json::value* v = find(body, spec_->output_pointer);
  provider_output out;
  out.with_auth = spec_->download_auth;
  if (spec_->output == output_kind::urls) {
    const json::value* first =
        v != nullptr && v->is_array() && !v->as_array().empty() ? &v->as_array()[0] : nullptr;
    if (first == nullptr || !first->is_string() || first->as_string().empty()) {
      return mismatch(step, spec_->output_pointer, "output.urls", v, "a list of URLs");
    }
    out.url = std::string(first->as_string());
  } else if (v == nullptr || !v->is_string() || v->as_string().empty()) {
    return mismatch(step, spec_->output_pointer,
                    spec_->output == output_kind::url ? "output.url" : "output.base64", v, "a string");
  } else if (spec_->output == output_kind::url) {
    out.url = std::string(v->as_string());
  } else {
    std::string_view text = v->as_string();
    if (text.starts_with("data:")) {
      const auto comma = text.find(',');
      text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    }
    auto bytes = decode_base64(text);
    if (!bytes || bytes->empty()) {
      return provider_step::failed(failure_kind::internal, label_ + ": the " + std::string(step) +
                                                               " answer's " + spec_->output_pointer +
                                                               " is not base64 (settings.output.base64)");
    }
    out.bytes = std::move(*bytes);
  }
  provider_step done = provider_step::done({std::move(out)});
  if (const json::value* cost = spec_->cost_pointer.empty() ? nullptr : find(body, spec_->cost_pointer)) {
    done.cost = json::serialize(*cost);
  }
  return done;
}

std::chrono::milliseconds answer_reader::next_poll(const http_answer& a) const {
  return poll_delay(a, spec_->interval_header, poll_interval_);
}

std::pair<std::string, std::string> answer_reader::error_of(const json::value* body) const {
  if (body == nullptr) {
    return {};
  }
  const auto at = [&](const std::string& pointer) {
    const json::value* v = pointer.empty() ? nullptr : find(*body, pointer);
    return v != nullptr ? text_of(*v).value_or("") : std::string();
  };
  return {at(spec_->errors.message), at(spec_->errors.code)};
}

bool answer_reader::is_policy(const std::string& message, const std::string& code) const {
  if (looks_like_policy(message) || looks_like_policy(code) || among(spec_->errors.policy_codes, code)) {
    return true;
  }
  return std::any_of(spec_->errors.policy_patterns.begin(), spec_->errors.policy_patterns.end(),
                     [&](const std::string& p) {
                       return boost::algorithm::icontains(message, p) || boost::algorithm::icontains(code, p);
                     });
}

provider_step answer_reader::http_failure(const http_answer& a, const json::value* body) const {
  const auto [message, code] = error_of(body);
  const std::string text =
      "HTTP " + std::to_string(a.status) + ": " +
      (message.empty() && code.empty() ? short_message(a.body.substr(0, 200)) : described(message, code));
  if (is_policy(message, code)) {
    return provider_step::failed(failure_kind::content_policy, label_ + " refused the task: " + text);
  }
  const bool retry = spec_->retry_statuses.empty()
                         ? retryable(a)
                         : std::find(spec_->retry_statuses.begin(), spec_->retry_statuses.end(), a.status) !=
                               spec_->retry_statuses.end();
  if (retry || among(spec_->errors.retry_codes, code)) {
    provider_step step = provider_step::retry(label_ + " answered " + text, retry_after(a).value_or(2s));
    step.rate_limited = a.status == 429;
    return step;
  }
  const bool invalid = a.status == 400 || a.status == 422 || among(spec_->errors.invalid_codes, code);
  return provider_step::failed(invalid ? failure_kind::invalid_input : failure_kind::provider_unavailable,
                               label_ + " answered " + text);
}

std::optional<provider_step> answer_reader::envelope_failure(const json::value& body) const {
  if (spec_->errors.ok.empty()) {
    return std::nullopt;
  }
  const auto [message, code] = error_of(&body);
  if (among(spec_->errors.ok, code)) {
    return std::nullopt;
  }
  if (code.empty()) {
    return provider_step::failed(failure_kind::internal, label_ + ": the answer has no " +
                                                             spec_->errors.code + " (settings.errors.code)");
  }
  const std::string text = label_ + " refused the request: " + described(message, code);
  if (is_policy(message, code)) {
    return provider_step::failed(failure_kind::content_policy, text);
  }
  if (among(spec_->errors.retry_codes, code)) {
    return provider_step::retry(text, 5s);
  }
  return provider_step::failed(among(spec_->errors.invalid_codes, code) ? failure_kind::invalid_input
                                                                        : failure_kind::provider_unavailable,
                               text);
}

provider_step answer_reader::job_failed(const json::value& body) const {
  std::string why;
  if (const json::value* v = spec_->failure_pointer.empty() ? nullptr : find(body, spec_->failure_pointer)) {
    why = text_of(*v).value_or(json::serialize(*v));
  }
  auto [message, code] = error_of(&body);
  if (among(spec_->errors.ok, code)) {
    message.clear();  // the envelope says the request succeeded ("success", 0): not the job's reason
    code.clear();
  }
  if (why.empty()) {
    why = message;
  }
  return provider_step::failed(
      is_policy(why, code) ? failure_kind::content_policy : failure_kind::provider_unavailable,
      label_ + ": the job failed" + (why.empty() && code.empty() ? "" : ": " + described(why, code)));
}

provider_step answer_reader::mismatch(std::string_view step, const std::string& pointer,
                                      const std::string& setting, const json::value* found,
                                      std::string_view wanted) const {
  return provider_step::failed(
      failure_kind::internal,
      label_ + ": the " + std::string(step) + " answer's " + (pointer.empty() ? "root" : pointer) +
          (found == nullptr ? " is missing"
                            : " is " + std::string(json_kind_name(*found)) + ", not " + std::string(wanted)) +
          " (settings." + setting + ")");
}

int answer_reader::progress_of(const json::value& body) const {
  const json::value* v = spec_->progress_pointer.empty() ? nullptr : find(body, spec_->progress_pointer);
  if (v == nullptr || !v->is_number()) {
    return -1;
  }
  const double p = v->to_number<double>() * spec_->progress_scale;
  return std::isfinite(p) ? static_cast<int>(std::clamp(p, 0.0, 100.0)) : -1;
}

}  // namespace gesso::engines::http_task
