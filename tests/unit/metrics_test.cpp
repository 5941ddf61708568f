// The Prometheus text exposition: exact output for counters, histograms and gauges, label escaping,
// and counts that add up under concurrent updates.

#include "server/runtime/metrics.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>
#include <vector>

using namespace gesso::runtime::metrics;

BOOST_AUTO_TEST_SUITE(metrics)

BOOST_AUTO_TEST_CASE(counters_gauges_and_histograms_render_in_the_text_format) {
  registry r;
  auto& requests = r.counter("test_requests_total", "Requests.", {"route", "status"});
  requests.add({"create", "200"});
  requests.add({"create", "200"}, 2);
  requests.add({"query", "404"});
  r.gauge("test_in_use", "In use.", [] { return 3.0; });
  auto& latency = r.histogram("test_seconds", "Latency.", {"route"}, {0.1, 1});
  latency.observe({"create"}, 0.05);
  latency.observe({"create"}, 0.1);  // on a bound: that bucket
  latency.observe({"create"}, 0.5);
  latency.observe({"create"}, 7);
  BOOST_TEST(r.render() ==
             "# HELP test_requests_total Requests.\n"
             "# TYPE test_requests_total counter\n"
             "test_requests_total{route=\"create\",status=\"200\"} 3\n"
             "test_requests_total{route=\"query\",status=\"404\"} 1\n"
             "# HELP test_in_use In use.\n"
             "# TYPE test_in_use gauge\n"
             "test_in_use 3\n"
             "# HELP test_seconds Latency.\n"
             "# TYPE test_seconds histogram\n"
             "test_seconds_bucket{route=\"create\",le=\"0.10000000000000001\"} 2\n"
             "test_seconds_bucket{route=\"create\",le=\"1\"} 3\n"
             "test_seconds_bucket{route=\"create\",le=\"+Inf\"} 4\n"
             "test_seconds_sum{route=\"create\"} 7.6500000000000004\n"
             "test_seconds_count{route=\"create\"} 4\n");
}

BOOST_AUTO_TEST_CASE(labeled_gauges_render_one_series_per_value_and_skip_malformed_ones) {
  registry r;
  r.gauge_family("test_circuit", "Circuit.", {"model", "route"}, [] {
    return registry::labeled_values{{{"m\"1", "0"}, 2.0}, {{"m2", "1"}, 0.0}, {{"too-few"}, 9.0}};
  });
  BOOST_TEST(r.render() ==
             "# HELP test_circuit Circuit.\n"
             "# TYPE test_circuit gauge\n"
             "test_circuit{model=\"m\\\"1\",route=\"0\"} 2\n"
             "test_circuit{model=\"m2\",route=\"1\"} 0\n");
}

BOOST_AUTO_TEST_CASE(label_values_are_escaped_and_counts_must_match_the_labels) {
  registry r;
  auto& c = r.counter("test_total", "T.", {"model"});
  c.add({"a\"b\\c\nd"});
  BOOST_TEST(r.render().find("test_total{model=\"a\\\"b\\\\c\\nd\"} 1\n") != std::string::npos, r.render());
  BOOST_CHECK_THROW(c.add({"x", "y"}), std::invalid_argument);
  auto& plain = r.counter("test_plain_total", "P.");
  plain.add({});
  BOOST_TEST(r.render().find("\ntest_plain_total 1\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(concurrent_updates_are_all_counted) {
  registry r;
  auto& c = r.counter("test_total", "T.", {"thread"});
  auto& h = r.histogram("test_seconds", "S.", {}, latency_bounds());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.add({t % 2 == 0 ? "even" : "odd"});
        h.observe({}, 0.001 * (i % 100));
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  const std::string text = r.render();
  BOOST_TEST(text.find("test_total{thread=\"even\"} 20000\n") != std::string::npos);
  BOOST_TEST(text.find("test_total{thread=\"odd\"} 20000\n") != std::string::npos);
  BOOST_TEST(text.find("test_seconds_count 40000\n") != std::string::npos);
  BOOST_TEST(text.find("test_seconds_bucket{le=\"+Inf\"} 40000\n") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
