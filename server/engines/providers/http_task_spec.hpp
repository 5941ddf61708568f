#pragma once
// An http-task route's settings, read and checked once when the catalog loads (docs/engines.md#http-task):
// how to authenticate, the create request and where its answer holds the job id, the poll request and
// how its answer maps to a state, where the output, progress and error are, and the optional result and
// cancel requests. Every refusal names the field: "settings.poll.status_map has no succeeded state".

#include "core/catalog.hpp"
#include "server/engines/providers/provider.hpp"
#include "server/engines/providers/provider_http.hpp"

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gesso::engines::http_task {

enum class auth_kind { bearer, header, query, jwt_hs256, none };
enum class task_state { queued, running, succeeded, failed, canceled };
enum class output_kind { url, urls, base64 };

/// One request: method, a path template (appended to base_url), header templates, a body template.
struct request_spec {
  std::string method = "GET";
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<boost::json::value> body;
};

/// A request and, optionally, the variant a task with input images sends instead (Kling's image2video).
struct request_variants {
  request_spec plain;
  std::optional<request_spec> with_images;
  const request_spec& pick(std::size_t images) const {
    return images > 0 && with_images ? *with_images : plain;
  }
};

/// How error answers are read: the message and code pointers, the codes an HTTP 200 envelope uses for
/// success (`ok`), and which codes or message patterns mean which failure.
struct error_spec {
  std::string message;  ///< JSON Pointer, "" for none
  std::string code;     ///< JSON Pointer, "" for none
  std::vector<std::string> ok;
  std::vector<std::string> policy_codes;
  std::vector<std::string> invalid_codes;
  std::vector<std::string> retry_codes;
  std::vector<std::string> policy_patterns;  ///< case-insensitive, beside the built-in policy language
};

/// A per-route map that turns the task's aspect ratio (or duration) into a provider's value: {{size}}.
struct value_map {
  bool by_duration = false;
  std::map<std::string, boost::json::value> values;
};

struct spec {
  auth_kind auth = auth_kind::bearer;
  std::string auth_name;    ///< header: the header's name; query: the parameter's
  std::string auth_prefix;  ///< header: before the key
  std::string secret;       ///< jwt-hs256: the secret key, read from auth.secret_key_env
  std::vector<std::pair<std::string, std::string>> headers;  ///< on every request (X-Runway-Version)

  request_variants create;
  std::string id_pointer;  ///< where the create answer holds the job id
  bool sync = false;       ///< the create answer holds the output itself

  request_variants poll;
  std::string interval_header;  ///< a poll answer header giving the next poll's delay in milliseconds
  std::string status_pointer;
  std::map<std::string, task_state> status_map;
  std::string failure_pointer;                  ///< a failed job's message in the poll answer
  std::map<std::string, std::string> captures;  ///< name → pointer in the final poll answer
  std::optional<request_spec> result;           ///< a follow-up request for the output (MiniMax's file)

  output_kind output = output_kind::url;
  std::string output_pointer;
  std::string progress_pointer;
  double progress_scale = 1;  ///< progress × scale is 0–100
  std::string cost_pointer;
  error_spec errors;
  bool download_auth = false;
  std::optional<request_spec> cancel;
  std::map<std::string, value_map> maps;
  std::vector<unsigned> retry_statuses;  ///< empty: 408, 409, 429 and 5xx (and x-should-retry)
};

/// The route's http-task settings; throws std::invalid_argument naming the field.
spec parse_spec(const route_settings& settings, const model_spec& model);

/// The headers that authenticate every request for `bearer` and `header` auth (the provider client
/// sends them to the route's host only); none for the others, which the adapter adds per request.
header_list static_auth_headers(const route_settings& settings);

/// The placeholders every template may use: prompt, aspect_ratio, seed, duration, model, task_id and
/// the route's maps.
std::set<std::string> base_names(const spec& s);

}  // namespace gesso::engines::http_task
