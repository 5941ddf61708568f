#include "core/webhook_signature.hpp"

#include "core/base64.hpp"
#include "core/hmac.hpp"
#include "core/ids.hpp"

#include <array>
#include <cstdint>

namespace gesso {

std::string new_webhook_secret() {
  std::array<std::uint8_t, 32> key{};
  fill_random(key);
  return "whsec_" + encode_base64(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
}

std::optional<std::string> webhook_signature(const std::vector<std::string>& secrets, std::string_view id,
                                             std::string_view timestamp, std::string_view body) {
  std::string header;
  const std::string signed_content = std::string(id) + "." + std::string(timestamp) + "." + std::string(body);
  for (const std::string& secret : secrets) {
    constexpr std::string_view prefix = "whsec_";
    if (!secret.starts_with(prefix)) {
      return std::nullopt;
    }
    const auto key = decode_base64(std::string_view(secret).substr(prefix.size()));
    if (!key || key->empty()) {
      return std::nullopt;
    }
    header += (header.empty() ? "v1," : " v1,") + encode_base64(hmac_sha256(*key, signed_content));
  }
  return header;
}

}  // namespace gesso
