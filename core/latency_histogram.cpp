#include "core/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gesso {
namespace {

constexpr unsigned significant_bits = 11;                                    // values below 2^11 are exact
constexpr std::uint64_t exact_limit = std::uint64_t{1} << significant_bits;  // 2048
constexpr std::uint64_t half = exact_limit / 2;                              // sub-buckets per power of two
constexpr unsigned max_shift = 64 - significant_bits;                        // 53
constexpr std::size_t bucket_count = exact_limit + max_shift * half;

}  // namespace

latency_histogram::latency_histogram() : counts_(bucket_count, 0) {}

std::size_t latency_histogram::index_of(std::uint64_t value) {
  if (value < exact_limit) {
    return static_cast<std::size_t>(value);
  }
  // Keep the top 11 bits: mantissa in [1024, 2047], shifted right by `shift` ≥ 1.
  const unsigned shift = static_cast<unsigned>(std::bit_width(value)) - significant_bits;
  const std::uint64_t mantissa = value >> shift;
  return static_cast<std::size_t>(exact_limit + (shift - 1) * half + (mantissa - half));
}

std::uint64_t latency_histogram::highest_of(std::size_t index) {
  if (index < exact_limit) {
    return index;
  }
  const std::size_t above = index - exact_limit;
  const unsigned shift = static_cast<unsigned>(above / half) + 1;
  const std::uint64_t mantissa = half + above % half;
  const std::uint64_t next = (mantissa + 1) << shift;  // wraps to 0 only for the very last bucket
  return next == 0 ? UINT64_MAX : next - 1;
}

void latency_histogram::record(std::uint64_t value, std::uint64_t count) {
  if (count == 0) {
    return;
  }
  counts_[index_of(value)] += count;
  total_ += count;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += static_cast<long double>(value) * static_cast<long double>(count);
}

void latency_histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

void latency_histogram::merge(const latency_histogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
  }
  total_ += other.total_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

double latency_histogram::mean() const {
  return total_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(total_));
}

std::uint64_t latency_histogram::value_at(double percentile) const {
  if (total_ == 0) {
    return 0;
  }
  if (percentile <= 0) {
    return min_;
  }
  const double exact = std::min(percentile, 100.0) / 100.0 * static_cast<double>(total_);
  const double wanted = std::ceil(exact * (1 - 1e-12));  // 99.9 % of 2000 is 1998, not 1998.0000000002
  const std::uint64_t target = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= target) {
      return std::min(highest_of(i), max_);
    }
  }
  return max_;
}

}  // namespace gesso
