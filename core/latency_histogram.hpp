#pragma once
// A high-dynamic-range latency histogram (the HdrHistogram idea, three significant digits): exact below
// 2,048 units, then 1,024 sub-buckets per power of two, so any value from a microsecond to hours is
// kept within 0.1 % in a fixed 56,320 counters. For the load generator's percentiles.

#include <cstdint>
#include <vector>

namespace gesso {

class latency_histogram {
 public:
  latency_histogram();

  /// Records one value (any unit; the load generator uses microseconds).
  void record(std::uint64_t value, std::uint64_t count = 1);
  /// Forgets every value (the load generator's per-second histograms).
  void reset();
  /// Adds every value of `other` (histograms of several threads merged for a report).
  void merge(const latency_histogram& other);

  std::uint64_t count() const { return total_; }
  std::uint64_t min() const { return total_ == 0 ? 0 : min_; }
  std::uint64_t max() const { return max_; }
  double mean() const;

  /// The smallest recorded value v such that at least `percentile` % of the values are ≤ v, to
  /// three significant digits (the highest value its bucket stands for, never above max()). 0 when
  /// empty; percentile 0 gives min(), 100 gives max().
  std::uint64_t value_at(double percentile) const;

  /// The bucket index of a value, and the highest value a bucket stands for (exposed for tests).
  static std::size_t index_of(std::uint64_t value);
  static std::uint64_t highest_of(std::size_t index);

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace gesso
