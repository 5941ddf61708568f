#pragma once
// What the API reads from request headers before any database work: the bearer key's shape and the
// body's content type.

#include "core/error.hpp"
#include "server/api/http_types.hpp"
#include "server/api/query_params.hpp"

#include <optional>
#include <string>

namespace gesso::api {

/// The API key of "Authorization: Bearer sk-…" (scheme case-insensitive, spaces around the key
/// ignored), checked for shape only; unauthorized with a message saying what is wrong otherwise.
outcome<std::string> bearer_key(const request& req);

/// The Idempotency-Key of a create (docs/api.md#idempotency): nullopt when absent; invalid_field when
/// sent twice, empty, longer than 255 characters or not printable ASCII.
outcome<std::optional<std::string>> idempotency_key(const request& req);

/// What every keyed endpoint beside create reads first, before any database work: the hash of a
/// well-shaped key (unauthorized otherwise) and the query parameters it accepts.
struct keyed_request {
  std::string key_hash;
  query_params params;
};
outcome<keyed_request> read_keyed_request(const request& req,
                                          std::initializer_list<std::string_view> accepted,
                                          query_params::unknown others = query_params::unknown::refused);

/// Whether Content-Type is application/json (parameters such as charset allowed).
bool is_json_content(const request& req);

}  // namespace gesso::api
