#pragma once
// Decoding untrusted input images: the format is sniffed from the bytes (PNG, JPEG, WebP), and the
// dimensions are read from the header and checked before any pixel is decoded (decode bombs).

#include "core/error.hpp"
#include "server/engines/picture.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace gesso::engines {

/// Limits on an input image, and the size it is wanted at.
struct image_limits {
  int max_side = 4096;
  std::uint64_t max_pixels = 16 * 1024 * 1024;
  /// When both are set, the image is shrunk while it is decoded (never enlarged) to the smallest size of
  /// the same aspect that still covers cover_width x cover_height, so a large input never exists in
  /// memory at full size: rows are averaged into the smaller image as they are decoded (JPEG and WebP
  /// also scale inside their decoders). Interlaced PNGs are the exception: decoded whole, then shrunk.
  int cover_width = 0;
  int cover_height = 0;
  /// When set, a budget of source pixels shared by several images (one task's inputs): an image larger
  /// than what is left is refused before any pixel is decoded, otherwise its pixels are taken from it.
  std::uint64_t* pixels_left = nullptr;
};

enum class image_format { png, jpeg, webp };

/// The format the bytes start like, or nothing.
std::optional<image_format> sniff_image(std::string_view bytes);

/// The width and height an image's header gives, without decoding any pixel; nothing when the bytes
/// are not a PNG, JPEG or WebP image with a readable header.
std::optional<std::pair<int, int>> image_dimensions(std::string_view bytes);

/// Decodes to RGB (shrunk to cover the wanted size, if any), or explains (one sentence) why the bytes
/// are not an acceptable image. Transparent pixels are composited onto black.
checked<rgb_image> decode_image(std::string_view bytes, const image_limits& limits = {});

/// The width and height an image of `width` x `height` is decoded at under `limits`.
std::pair<int, int> decoded_size(int width, int height, const image_limits& limits);

}  // namespace gesso::engines
