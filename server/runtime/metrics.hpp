#pragma once
// Process metrics in the Prometheus text exposition format (docs/operations.md#metrics): counters and
// histograms with labels, and gauges read when scraped. Thread-safe; the hot path is one short lock.

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::runtime::metrics {

class registry;

/// A counter per combination of label values, e.g. requests by route and status.
class counter_family {
 public:
  /// Adds `n` to the series with these label values (one per label name, in order).
  void add(std::initializer_list<std::string_view> values, std::uint64_t n = 1);

 private:
  friend class registry;
  std::vector<std::string> labels_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::uint64_t> series_;
};

/// A histogram per combination of label values, with fixed upper bounds (seconds, bytes, …).
class histogram_family {
 public:
  void observe(std::initializer_list<std::string_view> values, double value);

 private:
  friend class registry;
  struct series {
    std::vector<std::uint64_t> buckets;  ///< non-cumulative counts; the last is +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  std::vector<std::string> labels_;
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, series> series_;
};

/// Upper bounds for request and task latencies, from 0.5 ms to 5 minutes.
std::vector<double> latency_bounds();

class registry {
 public:
  counter_family& counter(std::string name, std::string help, std::vector<std::string> labels = {});
  histogram_family& histogram(std::string name, std::string help, std::vector<std::string> labels,
                              std::vector<double> bounds);
  /// A value read at each scrape (pool in use, queue depth, …).
  void gauge(std::string name, std::string help, std::function<double()> read);
  /// Labeled values read at each scrape: one (label values, value) per series.
  using labeled_values = std::vector<std::pair<std::vector<std::string>, double>>;
  void gauge_family(std::string name, std::string help, std::vector<std::string> labels,
                    std::function<labeled_values()> read);

  /// Every family in the text exposition format (version 0.0.4), in registration order.
  std::string render() const;

 private:
  struct entry {
    std::string name;
    std::string help;
    std::string type;
    counter_family* counter = nullptr;
    histogram_family* histogram = nullptr;
    std::function<double()> gauge;
    std::vector<std::string> gauge_labels = {};
    std::function<labeled_values()> gauges = {};
  };
  mutable std::mutex mutex_;
  std::vector<entry> entries_;
  std::vector<std::unique_ptr<counter_family>> counters_;
  std::vector<std::unique_ptr<histogram_family>> histograms_;
};

/// The content type of render()'s output.
inline constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace gesso::runtime::metrics
