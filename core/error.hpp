#pragma once
// Expected, input-dependent outcomes are values of this enum; infrastructure failures throw.
// server/api/api_response.cpp is the single place that maps both to HTTP.

#include <boost/assert/source_location.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <system_error>

namespace gesso {

/// Every expected failure the API can answer with.
enum class errc {
  malformed_request = 1,   ///< not parseable as HTTP/1.1
  invalid_json,            ///< body is not JSON / not UTF-8
  invalid_field,           ///< a field is missing, unknown, of the wrong type or out of range
  unknown_model,           ///< model_id is not in the catalog
  unauthorized,            ///< missing, malformed, unknown or revoked API key
  insufficient_credits,    ///< the account cannot pay for the task
  forbidden,               ///< a media link whose signature is missing, wrong or expired
  not_found,               ///< no such task for this account, or no such route
  method_not_allowed,      ///< the route exists for another method
  payload_too_large,       ///< body above the configured limit
  unsupported_media_type,  ///< Content-Type is not application/json
  header_too_large,        ///< request header block above the limit
  range_not_satisfiable,   ///< a Range that starts past the end of the file
  unavailable,             ///< overloaded, draining or database unreachable
  not_implemented,         ///< a transfer coding the server does not understand (RFC 9112 §6.1)
  conflict,                ///< the request conflicts with the resource's state (final task, key in flight)
  unprocessable,           ///< an Idempotency-Key reused with a different request
  rate_limited,            ///< the key sent more requests than its rate allows
};

/// The category of gesso::errc.
const boost::system::error_category& gesso_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), gesso_category()};
}

/// An expected failure: what kind, and a sentence for the client that names the problem.
struct problem {
  errc code;
  std::string message;
};

/// Thrown only when a caller insists on the value of a failed outcome.
[[noreturn]] void throw_exception_from_error(const problem& p, const boost::source_location& loc);

/// A one-line reason why operator input (configuration, catalog, CLI arguments) was refused.
struct refusal {
  std::string reason;
};

/// Thrown only when a caller insists on the value of a refused input.
[[noreturn]] void throw_exception_from_error(const refusal& r, const boost::source_location& loc);

/// The result of reading operator input: the value, or why it was refused.
template <class T>
using checked = boost::system::result<T, refusal>;

/// The result of an operation whose failure is an expected, client-visible condition.
template <class T>
using outcome = boost::system::result<T, problem>;

/// Shorthand for returning a failed outcome.
inline problem fail(errc code, std::string message) {
  return problem{code, std::move(message)};
}

}  // namespace gesso

template <>
struct boost::system::is_error_code_enum<gesso::errc> : std::true_type {};
