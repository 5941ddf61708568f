#pragma once
// Signed, expiring media URLs: /media/<object>?expires=<unix>&sig=<hex HMAC-SHA256>.

#include <cstdint>
#include <string>
#include <string_view>

namespace gesso {

/// Whether `object` is a key the media store could have written: lower-case letters, digits, '-', '_'
/// and '.', in '/'-separated segments, no empty, "." or ".." segment, at most 200 characters.
bool is_media_object_key(std::string_view object);

/// The path and query of a signed URL for `object`, valid until `expires` (Unix seconds).
std::string sign_media_path(std::string_view secret, std::string_view object, std::int64_t expires);

/// Whether `signature` (hex) is the signature of `object` until `expires` and `now` is not past it.
/// Compares in constant time.
bool verify_media_signature(std::string_view secret, std::string_view object, std::int64_t expires,
                            std::string_view signature, std::int64_t now);

}  // namespace gesso
