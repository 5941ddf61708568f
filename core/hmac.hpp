#pragma once
// HMAC-SHA256, written once: signed media URLs, provider JWTs (Kling) and, later, webhook signatures.

#include <string>
#include <string_view>

namespace gesso {

/// The 32 raw bytes of HMAC-SHA256(key, message).
std::string hmac_sha256(std::string_view key, std::string_view message);

/// Lower-case hex of `bytes`.
std::string to_hex(std::string_view bytes);

}  // namespace gesso
