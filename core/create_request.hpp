#pragma once
// The create-task request body: parsed and validated without touching the database.

#include "core/catalog.hpp"
#include "core/error.hpp"
#include "core/network_policy.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso {

/// Limits on a create request that are the same for every model (docs/api.md).
struct create_limits {
  static constexpr std::size_t max_prompt_code_points = 5000;
  static constexpr std::size_t max_url_length = 2048;
  static constexpr std::size_t max_data_url_image_bytes = 10 * 1024 * 1024;
  /// The JSON parse of a body may take the body's size plus this much memory (values and parser stack).
  static constexpr std::size_t parse_memory_slack = 64 * 1024;
};

/// A create request that passed validation; aspect_ratio holds the model's default when omitted.
struct create_request {
  const model_spec* model = nullptr;
  std::string prompt;
  std::string aspect_ratio;
  std::vector<std::string> image_urls;
  std::optional<std::string> callback_url;  ///< where the final task is POSTed (docs/api.md#webhooks)
};

/// Parses and validates a create body against the catalog. A failure is errc::invalid_json,
/// errc::invalid_field or errc::unknown_model with a message naming the problem.
/// An image URL whose host is written as an address (any numeric spelling) that `fetching` refuses is
/// invalid_field at once; a host name is resolved and checked by the worker (docs/security.md).
outcome<create_request> parse_create_request(std::string_view body, const catalog& models,
                                             const fetch_policy& fetching = {});

/// Checks a callback_url: https, or http to a host of fetching.webhook_http_hosts; a host, no user
/// information, at most 2048 characters, and not an address `fetching` refuses. Returns an empty string
/// when it is acceptable, otherwise the reason.
std::string check_callback_url(std::string_view url, const fetch_policy& fetching = {});

/// SHA-256 (hex) of the validated request with its defaults applied: two bodies that ask for the same
/// task (members in another order, an omitted default) have the same fingerprint (Idempotency-Key).
std::string request_fingerprint(const create_request& request);

/// Checks one image_urls entry: an http(s) URL or a base64 data: URL of a PNG, JPEG or WebP image,
/// and not an address that `fetching` refuses. Returns an empty string when it is acceptable,
/// otherwise the reason.
std::string check_image_url(std::string_view url, const fetch_policy& fetching = {});

/// Whether `url` is a data: URL; the scheme is case-insensitive (RFC 3986 §3.1).
bool is_data_url(std::string_view url);

/// `url` without its #fragment (a data: URL is returned whole: '#' is not special in its payload).
std::string_view without_fragment(std::string_view url);

}  // namespace gesso
