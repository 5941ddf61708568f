#include "core/media_url.hpp"

#include "core/hmac.hpp"

#include <openssl/crypto.h>

#include <stdexcept>

namespace gesso {
namespace {

std::string signature_of(std::string_view secret, std::string_view object, std::int64_t expires) {
  return to_hex(hmac_sha256(secret, std::string(object) + "\n" + std::to_string(expires)));
}

}  // namespace

bool is_media_object_key(std::string_view object) {
  if (object.empty() || object.size() > 200) {
    return false;
  }
  std::size_t segment_start = 0;
  for (std::size_t i = 0; i <= object.size(); ++i) {
    if (i == object.size() || object[i] == '/') {
      const std::string_view segment = object.substr(segment_start, i - segment_start);
      if (segment.empty() || segment == "." || segment == "..") {
        return false;
      }
      segment_start = i + 1;
      continue;
    }
    const char c = object[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::string sign_media_path(std::string_view secret, std::string_view object, std::int64_t expires) {
  return "/media/" + std::string(object) + "?expires=" + std::to_string(expires) +
         "&sig=" + signature_of(secret, object, expires);
}

bool verify_media_signature(std::string_view secret, std::string_view object, std::int64_t expires,
                            std::string_view signature, std::int64_t now) {
  if (now > expires || signature.size() != 64 || !is_media_object_key(object)) {
    return false;
  }
  const std::string expected = signature_of(secret, object, expires);
  return CRYPTO_memcmp(expected.data(), signature.data(), expected.size()) == 0;
}

}  // namespace gesso
