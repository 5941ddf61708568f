#include "server/engines/picture.hpp"

#include <openssl/evp.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gesso::engines {
namespace {

// splitmix64: a small, well-mixed deterministic generator seeded from the inputs' digest.
class generator {
 public:
  explicit generator(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) / static_cast<double>(1ULL << 53); }

 private:
  std::uint64_t state_;
};

std::uint64_t digest64(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> d{};
  unsigned int n = 0;
  EVP_Digest(text.data(), text.size(), d.data(), &n, EVP_sha256(), nullptr);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v = (v << 8) | d[static_cast<std::size_t>(i)];
  }
  return v;
}

void hsv(double h, double s, double v, std::uint8_t out[3]) {
  const double c = v * s;
  const double hp = std::fmod(h, 1.0) * 6.0;
  const double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c, g = x;
  } else if (hp < 2) {
    r = x, g = c;
  } else if (hp < 3) {
    g = c, b = x;
  } else if (hp < 4) {
    g = x, b = c;
  } else if (hp < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  const double m = v - c;
  out[0] = static_cast<std::uint8_t>(std::lround((r + m) * 255));
  out[1] = static_cast<std::uint8_t>(std::lround((g + m) * 255));
  out[2] = static_cast<std::uint8_t>(std::lround((b + m) * 255));
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') {
      ++i;
    }
    if (i > start) {
      words.push_back(text.substr(start, i - start));
    }
  }
  return words;
}

}  // namespace

std::pair<int, int> frame_size(std::string_view aspect_ratio, int long_side) {
  int w = 1;
  int h = 1;
  const auto colon = aspect_ratio.find(':');
  if (colon != std::string_view::npos) {
    std::from_chars(aspect_ratio.data(), aspect_ratio.data() + colon, w);
    std::from_chars(aspect_ratio.data() + colon + 1, aspect_ratio.data() + aspect_ratio.size(), h);
  }
  w = std::max(w, 1);
  h = std::max(h, 1);
  const double scale = static_cast<double>(long_side) / std::max(w, h);
  auto even = [](double v) { return std::max(2, static_cast<int>(std::lround(v / 2)) * 2); };
  return {even(w * scale), even(h * scale)};
}

scene::scene(std::string_view prompt, std::string_view aspect_ratio, std::span<const std::string> image_urls,
             int width, int height, std::vector<rgb_image> inputs)
    : width_(width), height_(height), inputs_(std::move(inputs)) {
  std::string all(prompt);
  all += '\n';
  all += aspect_ratio;
  for (const auto& url : image_urls) {
    all += '\n' + url;
  }
  generator g(digest64(all));
  angle_ = g.unit() * 2 * M_PI;
  const double base_hue = g.unit();
  hsv(base_hue, 0.55, 0.35 + 0.3 * g.unit(), from_);
  hsv(base_hue + 0.35 + 0.3 * g.unit(), 0.6, 0.85, to_);
  // One disc per word (up to 12): its colour comes from the word itself, so words are visible.
  const auto words = words_of(prompt);
  const std::size_t count = std::clamp<std::size_t>(words.size(), 3, 12);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view word = words.empty() ? prompt : words[i % words.size()];
    generator wg(digest64(word) ^ g.next());
    disc d{};
    d.x = wg.unit() * width;
    d.y = wg.unit() * height;
    d.radius = (0.06 + 0.18 * wg.unit()) * std::min(width, height);
    d.dx = (wg.unit() - 0.5) * 0.25 * width;
    d.dy = (wg.unit() - 0.5) * 0.25 * height;
    d.phase = wg.unit() * 2 * M_PI;
    std::uint8_t rgb[3];
    generator colour(digest64(word));
    hsv(colour.unit(), 0.7, 0.95, rgb);
    d.r = rgb[0], d.g = rgb[1], d.b = rgb[2];
    discs_.push_back(d);
  }
  const double root = 220.0 * std::pow(2.0, std::floor(g.unit() * 12) / 12.0);
  tones_ = {root, root * 1.5};
}

rgb_image scene::render(double seconds) const {
  rgb_image img{width_, height_, std::vector<std::uint8_t>(static_cast<std::size_t>(width_) * height_ * 3)};
  const double cx = std::cos(angle_);
  const double cy = std::sin(angle_);
  const double span = std::fabs(cx) * width_ + std::fabs(cy) * height_;
  const double offset = std::min(0.0, cx * width_) + std::min(0.0, cy * height_);
  for (int y = 0; y < height_; ++y) {
    std::uint8_t* row = img.pixels.data() + static_cast<std::size_t>(y) * width_ * 3;
    for (int x = 0; x < width_; ++x) {
      const double t = (cx * x + cy * y - offset) / span;
      for (int c = 0; c < 3; ++c) {
        row[x * 3 + c] = static_cast<std::uint8_t>(from_[c] + (to_[c] - from_[c]) * t);
      }
    }
  }
  if (!inputs_.empty()) {
    // The first input covers the frame (centre crop), blended over the gradient; in a video it pans.
    const rgb_image& in = inputs_.front();
    const double scale =
        std::max(static_cast<double>(width_) / in.width, static_cast<double>(height_) / in.height) * 1.1;
    const double slack_x = in.width * scale - width_;
    const double slack_y = in.height * scale - height_;
    const double pan = 0.5 + 0.5 * std::sin(seconds * 0.4);
    for (int y = 0; y < height_; ++y) {
      std::uint8_t* row = img.pixels.data() + static_cast<std::size_t>(y) * width_ * 3;
      const int sy = std::clamp(static_cast<int>((y + slack_y * pan) / scale), 0, in.height - 1);
      for (int x = 0; x < width_; ++x) {
        const int sx = std::clamp(static_cast<int>((x + slack_x * pan) / scale), 0, in.width - 1);
        const std::uint8_t* p = in.pixels.data() + (static_cast<std::size_t>(sy) * in.width + sx) * 3;
        for (int c = 0; c < 3; ++c) {
          row[x * 3 + c] = static_cast<std::uint8_t>(row[x * 3 + c] * 0.3 + p[c] * 0.7);
        }
      }
    }
  }
  for (const disc& d : discs_) {
    const double px = d.x + d.dx * std::sin(seconds * 0.8 + d.phase);
    const double py = d.y + d.dy * std::cos(seconds * 0.6 + d.phase);
    const double edge = std::max(1.5, d.radius * 0.08);
    const int x0 = std::max(0, static_cast<int>(px - d.radius - edge));
    const int x1 = std::min(width_ - 1, static_cast<int>(px + d.radius + edge));
    const int y0 = std::max(0, static_cast<int>(py - d.radius - edge));
    const int y1 = std::min(height_ - 1, static_cast<int>(py + d.radius + edge));
    const std::uint8_t colour[3] = {d.r, d.g, d.b};
    for (int y = y0; y <= y1; ++y) {
      std::uint8_t* row = img.pixels.data() + static_cast<std::size_t>(y) * width_ * 3;
      for (int x = x0; x <= x1; ++x) {
        const double dist = std::hypot(x - px, y - py);
        const double alpha = std::clamp((d.radius - dist) / edge, 0.0, 1.0) * 0.85;
        if (alpha <= 0) {
          continue;
        }
        for (int c = 0; c < 3; ++c) {
          row[x * 3 + c] = static_cast<std::uint8_t>(row[x * 3 + c] * (1 - alpha) + colour[c] * alpha);
        }
      }
    }
  }
  // Further inputs: thumbnails along the bottom edge, a fifth of the frame high.
  const int thumb_h = std::max(2, height_ / 5);
  int x_at = thumb_h / 8;
  for (std::size_t i = 1; i < inputs_.size() && x_at < width_; ++i) {
    const rgb_image& in = inputs_[i];
    const int thumb_w = std::max(2, in.width * thumb_h / std::max(1, in.height));
    const int top = height_ - thumb_h - thumb_h / 8;
    for (int y = 0; y < thumb_h && top + y < height_; ++y) {
      for (int x = 0; x < thumb_w && x_at + x < width_; ++x) {
        const int sx = std::min(in.width - 1, x * in.width / thumb_w);
        const int sy = std::min(in.height - 1, y * in.height / thumb_h);
        const std::uint8_t* p = in.pixels.data() + (static_cast<std::size_t>(sy) * in.width + sx) * 3;
        std::uint8_t* q = img.pixels.data() + (static_cast<std::size_t>(top + y) * width_ + x_at + x) * 3;
        q[0] = p[0], q[1] = p[1], q[2] = p[2];
      }
    }
    x_at += thumb_w + thumb_h / 8;
  }
  return img;
}

std::string encode_png(const rgb_image& image) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr) == 0) {
    throw std::runtime_error(std::string("PNG encoding failed: ") + png.message);
  }
  std::string out(size, '\0');
  if (png_image_write_to_memory(&png, out.data(), &size, 0, image.pixels.data(), 0, nullptr) == 0) {
    throw std::runtime_error(std::string("PNG encoding failed: ") + png.message);
  }
  out.resize(size);
  return out;
}

}  // namespace gesso::engines
