#pragma once
// Request framing rules the Beast parser leaves to the server (RFC 9112 §3.2, §6.1, §6.3): a
// Transfer-Encoding other than exactly "chunked" is refused (request smuggling), HTTP/1.1 needs
// exactly one Host, and absolute-form targets are reduced to their path.

#include "core/error.hpp"
#include "server/api/http_types.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gesso::api {

/// Why a request's header cannot be served (400, or 501 for a transfer coding the server does not
/// implement); nothing when its framing is sound. The connection closes after such a refusal.
std::optional<problem> framing_problem(const http::request_header<>& header);

/// The origin-form of `target`: "http://host:port/path?q" becomes "/path?q" (RFC 9112 §3.2.2: a
/// server MUST accept the absolute form); other targets are returned unchanged.
std::string_view origin_form(std::string_view target);

}  // namespace gesso::api
