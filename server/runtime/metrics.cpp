#include "server/runtime/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gesso::runtime::metrics {
namespace {

std::vector<std::string> key_of(std::initializer_list<std::string_view> values, std::size_t expected) {
  if (values.size() != expected) {
    throw std::invalid_argument("metrics: wrong number of label values");
  }
  return {values.begin(), values.end()};
}

// Label values escape backslash, double quote and line feed (the exposition format's rules).
void append_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::string number(double v) {
  if (std::isinf(v)) {
    return v > 0 ? "+Inf" : "-Inf";
  }
  if (std::isnan(v)) {
    return "NaN";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// {a="x",b="y"} with an optional extra pair (le for buckets); empty when there are no labels.
std::string label_set(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) {
    return {};
  }
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : ",") + names[i] + "=\"";
    append_escaped(out, values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    out += (names.empty() ? "" : ",") + std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  return out + "}";
}

}  // namespace

void counter_family::add(std::initializer_list<std::string_view> values, std::uint64_t n) {
  auto key = key_of(values, labels_.size());
  std::lock_guard lock(mutex_);
  series_[std::move(key)] += n;
}

void histogram_family::observe(std::initializer_list<std::string_view> values, double value) {
  auto key = key_of(values, labels_.size());
  std::size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) {
    ++bucket;
  }
  std::lock_guard lock(mutex_);
  series& s = series_[std::move(key)];
  if (s.buckets.empty()) {
    s.buckets.assign(bounds_.size() + 1, 0);
  }
  ++s.buckets[bucket];
  s.sum += value;
  ++s.count;
}

std::vector<double> latency_bounds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

counter_family& registry::counter(std::string name, std::string help, std::vector<std::string> labels) {
  auto family = std::make_unique<counter_family>();
  family->labels_ = std::move(labels);
  counter_family& ref = *family;
  std::lock_guard lock(mutex_);
  counters_.push_back(std::move(family));
  entries_.push_back({std::move(name), std::move(help), "counter", &ref, nullptr, {}});
  return ref;
}

histogram_family& registry::histogram(std::string name, std::string help, std::vector<std::string> labels,
                                      std::vector<double> bounds) {
  auto family = std::make_unique<histogram_family>();
  family->labels_ = std::move(labels);
  family->bounds_ = std::move(bounds);
  histogram_family& ref = *family;
  std::lock_guard lock(mutex_);
  histograms_.push_back(std::move(family));
  entries_.push_back({std::move(name), std::move(help), "histogram", nullptr, &ref, {}});
  return ref;
}

void registry::gauge(std::string name, std::string help, std::function<double()> read) {
  std::lock_guard lock(mutex_);
  entries_.push_back({std::move(name), std::move(help), "gauge", nullptr, nullptr, std::move(read)});
}

void registry::gauge_family(std::string name, std::string help, std::vector<std::string> labels,
                            std::function<labeled_values()> read) {
  std::lock_guard lock(mutex_);
  entries_.push_back(
      {std::move(name), std::move(help), "gauge", nullptr, nullptr, {}, std::move(labels), std::move(read)});
}

std::string registry::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const entry& e : entries_) {
    out += "# HELP " + e.name + " " + e.help + "\n# TYPE " + e.name + " " + e.type + "\n";
    if (e.counter != nullptr) {
      std::lock_guard family_lock(e.counter->mutex_);
      for (const auto& [values, n] : e.counter->series_) {
        out += e.name + label_set(e.counter->labels_, values) + " " + std::to_string(n) + "\n";
      }
    } else if (e.histogram != nullptr) {
      const histogram_family& h = *e.histogram;
      std::lock_guard family_lock(h.mutex_);
      for (const auto& [values, s] : h.series_) {
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < s.buckets.size(); ++i) {
          cumulative += s.buckets[i];
          const std::string le = i < h.bounds_.size() ? number(h.bounds_[i]) : "+Inf";
          out += e.name + "_bucket" + label_set(h.labels_, values, "le", le) + " " +
                 std::to_string(cumulative) + "\n";
        }
        out += e.name + "_sum" + label_set(h.labels_, values) + " " + number(s.sum) + "\n";
        out += e.name + "_count" + label_set(h.labels_, values) + " " + std::to_string(s.count) + "\n";
      }
    } else if (e.gauges) {
      for (const auto& [values, v] : e.gauges()) {
        if (values.size() == e.gauge_labels.size()) {
          out += e.name + label_set(e.gauge_labels, values) + " " + number(v) + "\n";
        }
      }
    } else {
      out += e.name + " " + number(e.gauge()) + "\n";
    }
  }
  return out;
}

}  // namespace gesso::runtime::metrics
