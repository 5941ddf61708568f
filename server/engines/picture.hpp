#pragma once
// Procedural pictures: a scene derived deterministically from a prompt, its aspect ratio and its
// input image URLs, rendered as RGB frames (a still for images, frames over time for videos).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gesso::engines {

/// Row-major RGB, 3 bytes per pixel.
struct rgb_image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;
};

/// Width and height for "W:H" with the longer side `long_side`, both even (H.264 needs that).
std::pair<int, int> frame_size(std::string_view aspect_ratio, int long_side);

/// The scene one task renders: same inputs, same pictures and tones.
class scene {
 public:
  /// `inputs` are the decoded input images: the first becomes the background, the rest a strip of
  /// thumbnails, so image-to-image and image-to-video visibly use them.
  scene(std::string_view prompt, std::string_view aspect_ratio, std::span<const std::string> image_urls,
        int width, int height, std::vector<rgb_image> inputs = {});

  /// The picture at `seconds` (0 for a still).
  rgb_image render(double seconds) const;

  /// Two tone frequencies (Hz) of the soundtrack.
  std::pair<double, double> tones() const { return tones_; }

 private:
  struct disc {
    double x, y, radius, dx, dy, phase;
    std::uint8_t r, g, b;
  };
  int width_;
  int height_;
  double angle_;
  std::uint8_t from_[3];
  std::uint8_t to_[3];
  std::vector<disc> discs_;
  std::pair<double, double> tones_;
  std::vector<rgb_image> inputs_;
};

/// Encodes an image as PNG.
std::string encode_png(const rgb_image& image);

}  // namespace gesso::engines
