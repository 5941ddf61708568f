#pragma once
// Decoding untrusted input images: the format is sniffed from the bytes (PNG, JPEG, WebP), and the
// dimensions are read from the header and checked before any pixel is decoded (decode bombs).

#include "core/error.hpp"
#include "server/engines/picture.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gesso::engines {

/// Limits on an input image.
struct image_limits {
  int max_side = 4096;
  std::uint64_t max_pixels = 16 * 1024 * 1024;
};

enum class image_format { png, jpeg, webp };

/// The format the bytes start like, or nothing.
std::optional<image_format> sniff_image(std::string_view bytes);

/// Decodes to RGB, or explains (one sentence) why the bytes are not an acceptable image.
checked<rgb_image> decode_image(std::string_view bytes, const image_limits& limits = {});

}  // namespace gesso::engines
