#pragma once
// UTF-8 checks for untrusted text: strict validation, code point counting, Unicode-aware trimming.

#include <cstddef>
#include <optional>
#include <string_view>

namespace gesso::utf8 {

/// The byte offset of the first byte that is not well-formed UTF-8 (overlong forms, surrogates and
/// values above U+10FFFF included), or nullopt when the whole text is valid.
std::optional<std::size_t> first_invalid_byte(std::string_view text);

/// The number of code points in valid UTF-8 text.
std::size_t count_code_points(std::string_view valid);

/// `valid` without leading and trailing characters of Unicode's White_Space property.
std::string_view trim_space(std::string_view valid);

}  // namespace gesso::utf8
