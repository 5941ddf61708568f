// gesso-load's options: defaults, every kind of value, and refusals that name the option.

#include "server/load/load_options.hpp"

#include <boost/test/unit_test.hpp>

using gesso::load::loop_mode;
using gesso::load::parse_options;
using gesso::load::scenario;

BOOST_AUTO_TEST_SUITE(load_options)

BOOST_AUTO_TEST_CASE(a_full_command_line_is_read_into_the_struct) {
  const auto o = parse_options({"--target",        "http://10.1.2.3:9000/",
                                "--mode",          "closed",
                                "--scenario",      "create",
                                "--rate",          "250.5",
                                "--connections",   "32",
                                "--duration",      "12",
                                "--threads",       "2",
                                "--models",        "vendor4-2:3,vendor1-flash",
                                "--poll-interval", "250",
                                "--download",      "no",
                                "--settle",        "0",
                                "--keys",          "/tmp/keys",
                                "--json",          "out.json",
                                "--quiet"});
  BOOST_TEST_REQUIRE(o.has_value());
  BOOST_TEST(o->host == "10.1.2.3");
  BOOST_TEST(o->port == "9000");
  BOOST_TEST((o->mode == loop_mode::closed));
  BOOST_TEST((o->kind == scenario::create));
  BOOST_TEST(o->rate == 250.5);
  BOOST_TEST(o->connections == 32);
  BOOST_TEST(o->duration_s == 12.0);
  BOOST_TEST(o->threads == 2);
  BOOST_TEST_REQUIRE(o->models.size() == 2U);
  BOOST_TEST(o->models[0].model_id == "vendor4-2");
  BOOST_TEST(o->models[0].weight == 3.0);
  BOOST_TEST(o->models[1].model_id == "vendor1-flash");
  BOOST_TEST(o->models[1].weight == 1.0);
  BOOST_TEST(o->poll_interval_ms == 250);
  BOOST_TEST(!o->download);
  BOOST_TEST(o->settle_s == 0.0);
  BOOST_TEST(o->keys_file == "/tmp/keys");
  BOOST_TEST(o->json_path == "out.json");
  BOOST_TEST(o->quiet);
}

BOOST_AUTO_TEST_CASE(defaults_are_an_open_loop_journey) {
  const auto o = parse_options({"--keys", "k"});
  BOOST_TEST_REQUIRE(o.has_value());
  BOOST_TEST((o->mode == loop_mode::open));
  BOOST_TEST((o->kind == scenario::journey));
  BOOST_TEST(o->host == "127.0.0.1");
  BOOST_TEST(o->port == "8080");
  BOOST_TEST(o->download);
}

BOOST_AUTO_TEST_CASE(bad_values_are_refused_with_the_option_named) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--keys", "k", "--rate", "fast"}, "--rate wants a number"},
      {{"--keys", "k", "--rate", "0"}, "--rate must be between"},
      {{"--keys", "k", "--rate", "nan"}, "--rate wants a number"},
      {{"--keys", "k", "--connections", "1.5"}, "--connections wants a whole number"},
      {{"--keys", "k", "--mode", "half-open"}, "--mode is open or closed"},
      {{"--keys", "k", "--scenario", "upload"}, "--scenario is create, query or journey"},
      {{"--keys", "k", "--target", "https://example.com"}, "--target must start with http://"},
      {{"--keys", "k", "--target", "http://host:99999"}, "--target's port must be between"},
      {{"--keys", "k", "--target", "http://host:80/api"}, "without a path"},
      {{"--keys", "k", "--models", "vendor4-2:heavy"}, "--models weight of vendor4-2 wants a number"},
      {{"--keys", "k", "--models", ",vendor4-2"}, "--models wants model ids"},
      {{"--keys", "k", "--download", "maybe"}, "--download is yes or no"},
      {{"--keys", "k", "--frobnicate", "1"}, "unknown option \"--frobnicate\""},
      {{"--keys"}, "--keys wants a value"},
      {{}, "give either --keys FILE or --accounts N"},
      {{"--keys", "k", "--accounts", "3", "--database-url", "x"}, "give either --keys FILE or --accounts N"},
      {{"--accounts", "3"}, "--accounts needs --database-url"},
  };
  for (const auto& [args, expected] : cases) {
    const auto o = parse_options(args);
    BOOST_TEST_REQUIRE(!o.has_value(), expected);
    BOOST_TEST(o.error().reason.find(expected) != std::string::npos,
               o.error().reason << " / wanted: " << expected);
  }
}

BOOST_AUTO_TEST_SUITE_END()
