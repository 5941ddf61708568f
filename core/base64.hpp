#pragma once
// Standard base64 (RFC 4648 §4), for data: URLs.

#include <optional>
#include <string>
#include <string_view>

namespace gesso {

/// Encodes bytes with padding.
std::string encode_base64(std::string_view bytes);

/// Decodes padded or unpadded base64; nullopt on any character outside the alphabet or a bad length.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace gesso
