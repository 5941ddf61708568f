#pragma once
// Shrinking a picture while it is decoded: rows of the source arrive one at a time and are averaged
// into the smaller picture (a box filter), so the source is never held whole.

#include "server/engines/picture.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gesso::engines {

/// Averages a source_width x source_height image, fed row by row, into a width x height one (each no
/// larger than the source's). Rows are RGB, or RGBA composited onto black.
class row_shrinker {
 public:
  row_shrinker(int source_width, int source_height, int width, int height)
      : source_width_(source_width),
        source_height_(source_height),
        out_{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)},
        sums_(static_cast<std::size_t>(width) * 3),
        counts_(static_cast<std::size_t>(width)),
        column_(static_cast<std::size_t>(source_width)) {
    for (int x = 0; x < source_width; ++x) {
      column_[static_cast<std::size_t>(x)] =
          static_cast<int>(static_cast<std::int64_t>(x) * width / source_width);
    }
  }

  /// The next source row: source_width pixels of `channels` (3 or 4) bytes; rows past the last are ignored.
  void add_row(const std::uint8_t* pixels, int channels) {
    if (row_ >= source_height_) {
      return;
    }
    const int target = static_cast<int>(static_cast<std::int64_t>(row_) * out_.height / source_height_);
    if (target != current_) {
      flush();
      current_ = target;
    }
    for (int x = 0; x < source_width_; ++x) {
      const std::uint8_t* p = pixels + static_cast<std::size_t>(x) * channels;
      const unsigned alpha = channels == 4 ? p[3] : 255U;
      const std::size_t t = static_cast<std::size_t>(column_[static_cast<std::size_t>(x)]);
      for (std::size_t c = 0; c < 3; ++c) {
        sums_[t * 3 + c] += p[c] * alpha / 255U;
      }
      ++counts_[t];
    }
    if (++row_ == source_height_) {
      flush();
    }
  }

  /// The shrunk picture, once every row was added (rows never added stay black).
  rgb_image take() { return std::move(out_); }

 private:
  void flush() {
    if (current_ < 0) {
      return;
    }
    std::uint8_t* out = out_.pixels.data() + static_cast<std::size_t>(current_) * out_.width * 3;
    for (std::size_t t = 0; t < counts_.size(); ++t) {
      for (std::size_t c = 0; c < 3; ++c) {
        out[t * 3 + c] = static_cast<std::uint8_t>(counts_[t] == 0 ? 0 : sums_[t * 3 + c] / counts_[t]);
      }
    }
    std::fill(sums_.begin(), sums_.end(), 0);
    std::fill(counts_.begin(), counts_.end(), 0);
  }

  int source_width_;
  int source_height_;
  rgb_image out_;
  std::vector<std::uint32_t> sums_;
  std::vector<std::uint32_t> counts_;
  std::vector<int> column_;
  int row_ = 0;
  int current_ = -1;
};

}  // namespace gesso::engines
