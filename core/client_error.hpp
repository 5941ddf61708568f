#pragma once
// What a client is told about a failed task (docs/api.md#failures): the kind, and a message that never
// carries a secret, an internal address or a stack trace. The stored reason stays whole for operators
// (`gesso task show`); only this rendering reaches the API.

#include <optional>
#include <string>
#include <string_view>

namespace gesso {

/// The failure kinds a client can act on, as the API names them.
inline constexpr std::string_view failure_kinds[] = {
    "invalid_input", "content_policy", "provider_unavailable", "deadline", "canceled", "internal"};

/// The client's message for a task that failed with `kind` (nullopt: failed before kinds were kept,
/// shown as internal) and the stored reason `stored`. Input and policy failures and cancellations show
/// the reason, scrubbed; the others a fixed sentence (the provider behind a route is the operator's).
std::string client_failure_message(std::optional<std::string_view> kind, std::string_view stored);

/// `text` cut to its first line and 300 bytes, with URLs, IP addresses, host names, host:port pairs and
/// key-like tokens replaced by <url>, <address>, <host> and <redacted>.
std::string scrub_message(std::string_view text);

}  // namespace gesso
