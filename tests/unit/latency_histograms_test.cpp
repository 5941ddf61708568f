// The load generator's percentile math on inputs whose answers are known.

#include "core/latency_histogram.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

using gesso::latency_histogram;

namespace {
double relative_error(std::uint64_t got, std::uint64_t want) {
  return std::abs(static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(latency_histograms)

BOOST_AUTO_TEST_CASE(small_values_are_exact) {
  latency_histogram h;
  for (std::uint64_t v = 1; v <= 2000; ++v) {
    h.record(v);
  }
  BOOST_TEST(h.count() == 2000U);
  BOOST_TEST(h.value_at(50) == 1000U);
  BOOST_TEST(h.value_at(90) == 1800U);
  BOOST_TEST(h.value_at(99.9) == 1998U);
  BOOST_TEST(h.value_at(0) == 1U);
  BOOST_TEST(h.value_at(100) == 2000U);
  BOOST_TEST(h.mean() == 1000.5);
}

BOOST_AUTO_TEST_CASE(large_values_keep_three_significant_digits) {
  latency_histogram h;
  for (std::uint64_t v = 1; v <= 1'000'000; ++v) {
    h.record(v);
  }
  for (const auto& [p, want] :
       {std::pair{50.0, 500'000ULL}, std::pair{90.0, 900'000ULL}, std::pair{99.0, 990'000ULL},
        std::pair{99.9, 999'000ULL}, std::pair{99.99, 999'900ULL}}) {
    const auto got = h.value_at(p);
    BOOST_TEST(got >= want, "p" << p << " = " << got);  // never under-reports
    BOOST_TEST(relative_error(got, want) < 1.0 / 1024, "p" << p << " = " << got);
  }
  BOOST_TEST(h.max() == 1'000'000U);
  BOOST_TEST(h.value_at(100) == 1'000'000U);  // capped at the true maximum
  BOOST_TEST(h.mean() == 500'000.5);
}

BOOST_AUTO_TEST_CASE(every_bucket_stands_for_its_values_within_a_thousandth) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const std::uint64_t high = latency_histogram::highest_of(latency_histogram::index_of(v));
    BOOST_TEST_REQUIRE(high >= v);
    if (v >= 2048) {
      BOOST_TEST_REQUIRE(static_cast<double>(high - v) / static_cast<double>(v) < 1.0 / 1024);
    } else {
      BOOST_TEST_REQUIRE(high == v);
    }
  }
  BOOST_TEST(latency_histogram::highest_of(latency_histogram::index_of(UINT64_MAX)) == UINT64_MAX);
}

BOOST_AUTO_TEST_CASE(merging_equals_recording_everything_in_one) {
  latency_histogram a, b, whole;
  for (std::uint64_t v = 1; v <= 50000; ++v) {
    (v % 2 == 0 ? a : b).record(v * 37);
    whole.record(v * 37);
  }
  a.merge(b);
  for (const double p : {0.0, 10.0, 50.0, 99.0, 99.9, 100.0}) {
    BOOST_TEST(a.value_at(p) == whole.value_at(p));
  }
  BOOST_TEST(a.count() == whole.count());
  BOOST_TEST(a.mean() == whole.mean());
}

BOOST_AUTO_TEST_CASE(an_empty_histogram_answers_zero_and_counts_add_up) {
  latency_histogram h;
  BOOST_TEST(h.value_at(99) == 0U);
  BOOST_TEST(h.max() == 0U);
  BOOST_TEST(h.min() == 0U);
  h.record(5000, 3);
  h.record(7, 1);
  BOOST_TEST(h.count() == 4U);
  BOOST_TEST(h.value_at(25) == 7U);
  BOOST_TEST(h.value_at(26) == 5000U);  // 5000 is within its bucket's precision and is the max
}

BOOST_AUTO_TEST_CASE(a_reset_histogram_is_empty_and_records_afresh) {
  latency_histogram h;
  h.record(123456, 10);
  h.reset();
  BOOST_TEST(h.count() == 0U);
  BOOST_TEST(h.max() == 0U);
  BOOST_TEST(h.value_at(50) == 0U);
  h.record(42);
  BOOST_TEST(h.min() == 42U);
  BOOST_TEST(h.value_at(100) == 42U);
  BOOST_TEST(h.mean() == 42.0);
}

BOOST_AUTO_TEST_SUITE_END()
