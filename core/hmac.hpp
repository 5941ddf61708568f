#pragma once
// HMAC-SHA256 and SHA-256, written once: signed media URLs, provider JWTs (Kling), webhook signatures,
// stored key hashes and request fingerprints.

#include <string>
#include <string_view>

namespace gesso {

/// The 32 raw bytes of HMAC-SHA256(key, message).
std::string hmac_sha256(std::string_view key, std::string_view message);

/// Lower-case hex of SHA-256(`bytes`).
std::string sha256_hex(std::string_view bytes);

/// Lower-case hex of `bytes`.
std::string to_hex(std::string_view bytes);

}  // namespace gesso
