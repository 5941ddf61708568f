// Fuzzes the sniffing and decoding of input images (PNG, JPEG, WebP) as a fetched URL delivers them.
// The limits are smaller than production's so that the fuzzer spends its time in the parsers rather
// than on big, valid pictures; the checks are the same.

#include "server/engines/image_decoder.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using gesso::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = gesso::fuzz::as_text(data, size);
  const gesso::engines::image_limits limits{.max_side = 1024, .max_pixels = 256 * 1024};
  const auto sniffed = gesso::engines::sniff_image(bytes);
  const auto image = gesso::engines::decode_image(bytes, limits);
  if (!image) {
    require(!image.error().reason.empty(), "a refused image comes with a reason");
    return 0;
  }
  require(sniffed.has_value(), "only a sniffed format is decoded");
  require(image->width > 0 && image->height > 0, "a decoded image has pixels");
  require(image->width <= limits.max_side && image->height <= limits.max_side, "the side limit holds");
  require(static_cast<std::uint64_t>(image->width) * static_cast<std::uint64_t>(image->height) <=
              limits.max_pixels,
          "the pixel limit holds");
  require(image->pixels.size() ==
              static_cast<std::size_t>(image->width) * static_cast<std::size_t>(image->height) * 3,
          "an RGB image has three bytes a pixel");
  return 0;
}
