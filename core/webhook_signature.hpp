#pragma once
// Standard Webhooks signatures (docs/api.md#webhooks): `v1,` + base64 of HMAC-SHA256 over
// "{webhook-id}.{webhook-timestamp}.{body}", keyed with the base64-decoded part of a `whsec_` secret.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso {

/// A new secret: "whsec_" + base64 of 32 random bytes.
std::string new_webhook_secret();

/// The webhook-signature header for `secrets` (each a whsec_ secret), space-separated, in their order;
/// nullopt when a secret is malformed.
std::optional<std::string> webhook_signature(const std::vector<std::string>& secrets, std::string_view id,
                                             std::string_view timestamp, std::string_view body);

}  // namespace gesso
