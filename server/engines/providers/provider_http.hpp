#pragma once
// How adapters talk HTTP to a provider: one client per route, which sends the route's auth only to the
// route's own host, trusts that host's addresses (a self-hosted ComfyUI on 10.x is the operator's
// choice), and fetches anything else under the worker's address policy. Plus what every provider
// shares: reading Retry-After, telling a retryable answer from a final one, multipart bodies.

#include "server/engines/fetcher.hpp"
#include "server/engines/providers/provider.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gesso::engines {

using header_list = std::vector<std::pair<std::string, std::string>>;

class provider_client {
 public:
  /// `auth` are the headers that authenticate to the route (sent only to its base_url host).
  provider_client(const route_settings& settings, fetch_policy worker_policy, header_list auth);

  /// Sends a request to `target`: a path (appended to base_url) or an absolute URL. Redirects are not
  /// followed. Fails only when no HTTP answer came (the message names the host, never a key).
  checked<http_answer> send(std::string_view method, std::string_view target, header_list headers = {},
                            std::string body = {}, std::size_t max_bytes = 4 * 1024 * 1024) const;

  /// Downloads an output (following up to 3 redirects; auth only to the route's host, and only when
  /// `with_auth`), at most max_output_bytes.
  checked<std::string> download(std::string_view url, bool with_auth) const;

  /// The most an answer that may carry an output inline (base64, a data: URI) is read: the output's
  /// limit plus base64's third and 64 KiB of JSON around it.
  std::size_t inline_answer_bytes() const { return settings_->max_output_bytes / 3 * 4 + 64 * 1024; }

  const route_settings& settings() const { return *settings_; }

  /// Told of every exchange of every provider client in the process (`gesso catalog try` prints them);
  /// set once, before any request, or never (workers do not).
  using exchange_observer =
      std::function<void(const route_settings&, const http_call&, const checked<http_answer>&,
                         std::chrono::steady_clock::duration)>;
  static void observe_exchanges(exchange_observer observer);
  std::string url_of(std::string_view target) const;

 private:
  bool is_route_host(std::string_view url) const;
  const route_settings* settings_;
  fetch_policy worker_policy_;
  fetch_policy trusted_policy_;
  header_list auth_;
  std::string host_;
  static exchange_observer exchange_observer_;
};

/// The value of a response header (case-insensitive name), or "".
std::string header_value(const http_answer& answer, std::string_view name);

/// The wait a provider asks for: `retry-after-ms`, then `Retry-After` in seconds or as an HTTP date.
std::optional<std::chrono::milliseconds> retry_after(const http_answer& answer);

/// The delay before the next poll: the provider's `header` (milliseconds, at most 10 min) when it gives
/// one, but never sooner than `floor` (the route's poll_interval_ms); `floor` otherwise.
std::chrono::milliseconds poll_delay(const http_answer& answer, std::string_view header,
                                     std::chrono::milliseconds floor);

/// 408, 409, 429 and 5xx are worth retrying (the official SDKs agree), unless `x-should-retry: false`;
/// `x-should-retry: true` makes any status retryable.
bool retryable(const http_answer& answer);

/// The step for an answer that is not a success: retry after what the provider asked (or `fallback`),
/// or fail as `kind` — both with "<provider> answered HTTP <status>: <message>".
provider_step answer_failure(const http_answer& answer, std::string_view provider, std::string_view message,
                             failure_kind kind, std::chrono::milliseconds fallback);

/// The step for a request that got no answer at all: a retry.
provider_step no_answer(std::string_view provider, const refusal& why);

/// The body as JSON, or nothing when it is not JSON.
std::optional<boost::json::value> json_of(std::string_view body);

/// A string found by walking object keys (`{"error","message"}`), or "" when any step is missing.
std::string string_at(const boost::json::value& root, std::initializer_list<std::string_view> path);

/// Whether a provider's message or code reads like a safety rejection (moderation, policy, NSFW, E005,
/// sensitive content).
bool looks_like_policy(std::string_view text);

/// A multipart/form-data body (RFC 7578).
class multipart_form {
 public:
  multipart_form();
  void field(std::string_view name, std::string_view value);
  void file(std::string_view name, std::string_view filename, std::string_view mime, std::string_view bytes);
  std::string content_type() const;
  std::string finish();

 private:
  std::string boundary_;
  std::string body_;
};

/// Trims a provider's message to one line of at most 300 bytes.
std::string short_message(std::string_view text);

}  // namespace gesso::engines
