#pragma once
// The HTTP Range header (RFC 9110 §14), single ranges only: what media downloads need for seeking.

#include <cstdint>
#include <optional>
#include <string_view>

namespace gesso {

/// An inclusive byte range within a resource.
struct byte_range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

/// What a Range header asks of a resource of `size` bytes.
struct range_request {
  enum class kind { whole, partial, unsatisfiable } outcome = kind::whole;
  byte_range range{};
};

/// Interprets `header` ("bytes=0-99", "bytes=100-", "bytes=-500"). A header that is not a single
/// well-formed bytes range is ignored (whole resource), as RFC 9110 allows; a well-formed range
/// that starts past the end is unsatisfiable (416).
range_request parse_range(std::string_view header, std::uint64_t size);

}  // namespace gesso
