#include "server/engines/providers/provider_http.hpp"

#include "core/base64.hpp"
#include "core/ids.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <algorithm>
#include <charconv>
#include <ctime>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string host_of(std::string_view url) {
  const auto parsed = boost::urls::parse_absolute_uri(url);
  return parsed ? std::string(parsed->encoded_host_and_port()) : std::string();
}

fetch_policy everything() {
  return fetch_policy{parse_networks("0.0.0.0/0,::/0").value()};
}

// An HTTP date (RFC 9110 §5.6.7, IMF-fixdate) as seconds from now, or nothing.
std::optional<std::chrono::milliseconds> from_http_date(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) {
    return std::nullopt;
  }
  const std::time_t at = timegm(&tm);
  const std::time_t now = std::time(nullptr);
  return std::chrono::milliseconds(std::max<std::int64_t>(0, static_cast<std::int64_t>(at - now)) * 1000);
}

}  // namespace

provider_client::provider_client(const route_settings& settings, fetch_policy worker_policy, header_list auth)
    : settings_(&settings),
      worker_policy_(std::move(worker_policy)),
      trusted_policy_(everything()),
      auth_(std::move(auth)),
      host_(host_of(settings.base_url)) {}

std::string provider_client::url_of(std::string_view target) const {
  if (target.starts_with("http://") || target.starts_with("https://")) {
    return std::string(target);
  }
  return settings_->base_url + std::string(target);
}

bool provider_client::is_route_host(std::string_view url) const {
  return !host_.empty() && boost::algorithm::iequals(host_of(url), host_);
}

provider_client::exchange_observer provider_client::exchange_observer_;

checked<http_answer> provider_client::send(std::string_view method, std::string_view target,
                                           header_list headers, std::string body,
                                           std::size_t max_bytes) const {
  http_call call{
      .method = std::string(method), .url = url_of(target), .headers = {}, .body = std::move(body)};
  const bool ours = is_route_host(call.url);
  if (ours) {
    call.headers = auth_;
  }
  call.headers.insert(call.headers.end(), headers.begin(), headers.end());
  const auto started = std::chrono::steady_clock::now();
  auto answer =
      http_request(call, max_bytes, settings_->request_timeout, ours ? trusted_policy_ : worker_policy_);
  if (exchange_observer_) {
    exchange_observer_(*settings_, call, answer, std::chrono::steady_clock::now() - started);
  }
  return answer;
}

void provider_client::observe_exchanges(exchange_observer observer) {
  exchange_observer_ = std::move(observer);
}

checked<std::string> provider_client::download(std::string_view url, bool with_auth) const {
  std::string current(url);
  for (int hop = 0; hop <= 3; ++hop) {
    http_call call{.method = "GET", .url = current, .headers = {}, .body = {}};
    const bool ours = is_route_host(current);
    if (ours && with_auth) {
      call.headers = auth_;
    }
    const auto started = std::chrono::steady_clock::now();
    const auto answer =
        http_request(call, settings_->max_output_bytes, std::max(settings_->request_timeout, 120'000ms),
                     ours ? trusted_policy_ : worker_policy_);
    if (exchange_observer_) {
      exchange_observer_(*settings_, call, answer, std::chrono::steady_clock::now() - started);
    }
    if (!answer) {
      return answer.error();
    }
    if (answer->status >= 300 && answer->status < 400 && !answer->location.empty()) {
      const auto base = boost::urls::parse_uri(current);
      const auto next = boost::urls::parse_uri_reference(answer->location);
      boost::urls::url resolved;
      if (!base || !next || !boost::urls::resolve(*base, *next, resolved)) {
        return refusal{"the output was redirected to an invalid URL"};
      }
      current = std::string(resolved.buffer());
      continue;
    }
    if (answer->status != 200) {
      return refusal{"downloading the output from " + host_of(current) + " answered HTTP " +
                     std::to_string(answer->status) +
                     (answer->status == 403 || answer->status == 404 || answer->status == 410
                          ? " (provider output URLs expire)"
                          : "")};
    }
    return checked<std::string>(boost::system::in_place_value, std::move(answer->body));
  }
  return refusal{"the output was redirected more than 3 times"};
}

std::string header_value(const http_answer& answer, std::string_view name) {
  for (const auto& [key, value] : answer.headers) {
    if (boost::algorithm::iequals(key, name)) {
      return value;
    }
  }
  return {};
}

std::optional<std::chrono::milliseconds> retry_after(const http_answer& answer) {
  const std::string ms = header_value(answer, "retry-after-ms");
  double value = 0;
  if (!ms.empty() && std::from_chars(ms.data(), ms.data() + ms.size(), value).ec == std::errc{} &&
      value >= 0) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(value));
  }
  const std::string after = header_value(answer, "retry-after");
  if (after.empty()) {
    return std::nullopt;
  }
  if (std::from_chars(after.data(), after.data() + after.size(), value).ec == std::errc{} && value >= 0) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(value * 1000));
  }
  return from_http_date(after);
}

std::chrono::milliseconds poll_delay(const http_answer& answer, std::string_view header,
                                     std::chrono::milliseconds floor) {
  const std::string value = header.empty() ? "" : header_value(answer, header);
  std::int64_t ms = 0;
  if (!value.empty() && std::from_chars(value.data(), value.data() + value.size(), ms).ec == std::errc{} &&
      ms > 0) {
    return std::max(floor, std::chrono::milliseconds(std::min<std::int64_t>(ms, 600'000)));
  }
  return floor;
}

bool retryable(const http_answer& answer) {
  const std::string should = header_value(answer, "x-should-retry");
  if (should == "true") {
    return true;
  }
  if (should == "false") {
    return false;
  }
  const unsigned s = answer.status;
  return s == 408 || s == 409 || s == 429 || s >= 500;
}

provider_step answer_failure(const http_answer& answer, std::string_view provider, std::string_view message,
                             failure_kind kind, std::chrono::milliseconds fallback) {
  std::string text = std::string(provider) + " answered HTTP " + std::to_string(answer.status);
  if (!message.empty()) {
    text += ": " + short_message(message);
  }
  if (retryable(answer)) {
    provider_step step = provider_step::retry(std::move(text), retry_after(answer).value_or(fallback));
    step.rate_limited = answer.status == 429;
    return step;
  }
  return provider_step::failed(kind, std::move(text));
}

provider_step no_answer(std::string_view provider, const refusal& why) {
  return provider_step::retry(std::string(provider) + " did not answer: " + why.reason, 2s);
}

std::optional<json::value> json_of(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    return std::nullopt;
  }
  return v;
}

std::string string_at(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* at = &root;
  for (const std::string_view key : path) {
    const json::object* o = at->if_object();
    at = o == nullptr ? nullptr : o->if_contains(key);
    if (at == nullptr) {
      return {};
    }
  }
  if (at->is_string()) {
    return std::string(at->as_string());
  }
  if (at->is_int64()) {
    return std::to_string(at->as_int64());
  }
  return {};
}

bool looks_like_policy(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const std::string_view marker :
       {"moderation", "policy", "safety", "nsfw", "sensitive", "e005", "content_filter", "flagged"}) {
    if (lower.find(marker) != std::string::npos) {
      return true;
    }
  }
  return false;
}

multipart_form::multipart_form() : boundary_("gesso-" + new_request_id()) {}

void multipart_form::field(std::string_view name, std::string_view value) {
  body_ +=
      "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n";
  body_ += value;
  body_ += "\r\n";
}

void multipart_form::file(std::string_view name, std::string_view filename, std::string_view mime,
                          std::string_view bytes) {
  body_ += "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + std::string(name) +
           "\"; filename=\"" + std::string(filename) + "\"\r\nContent-Type: " + std::string(mime) +
           "\r\n\r\n";
  body_ += bytes;
  body_ += "\r\n";
}

std::string multipart_form::content_type() const {
  return "multipart/form-data; boundary=" + boundary_;
}

std::string multipart_form::finish() {
  body_ += "--" + boundary_ + "--\r\n";
  return std::move(body_);
}

std::string short_message(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 300)) {
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return out;
}

}  // namespace gesso::engines
