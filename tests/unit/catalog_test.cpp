#include "core/catalog.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(catalog)

BOOST_AUTO_TEST_CASE(builtin_has_exactly_the_five_models_of_the_spec) {
  const auto c = gesso::catalog::builtin();
  BOOST_TEST(c.models().size() == 5U);
  for (const char* id : {"vendor1-flash", "vendor1-pro", "vendor2-2"}) {
    const model_spec* m = c.find(id);
    BOOST_TEST_REQUIRE(m != nullptr);
    BOOST_TEST((m->type == task_type::video));
    BOOST_TEST(m->default_aspect_ratio == "16:9");
    BOOST_TEST(m->max_input_images == 3U);
    BOOST_TEST(m->duration_seconds > 0);
  }
  for (const char* id : {"vendor3-image-2", "vendor4-2"}) {
    const model_spec* m = c.find(id);
    BOOST_TEST_REQUIRE(m != nullptr);
    BOOST_TEST((m->type == task_type::image));
    BOOST_TEST(m->default_aspect_ratio == "1:1");
    BOOST_TEST(m->max_input_images == 10U);
    BOOST_TEST(m->aspect_ratios.size() == 10U);
  }
  BOOST_TEST(c.find("vendor5") == nullptr);
  BOOST_TEST(c.id_list() == "vendor1-flash, vendor1-pro, vendor2-2, vendor3-image-2, vendor4-2");
}

BOOST_AUTO_TEST_CASE(parses_an_operator_catalog) {
  const auto c = gesso::catalog::parse(R"({"models":{
    "house-image":{"task_type":"image","price":3,"aspect_ratios":["1:1","3:2"],"default_aspect_ratio":"3:2",
                   "engine":"builtin","engine_settings":{"latency_ms":5},"max_attempts":2},
    "house-video":{"task_type":"video","price":9,"duration_seconds":2,"deadline_seconds":60}}})");
  BOOST_TEST_REQUIRE(c.has_value());
  const model_spec* image = c->find("house-image");
  BOOST_TEST_REQUIRE(image != nullptr);
  BOOST_TEST(image->price == 3);
  BOOST_TEST(image->default_aspect_ratio == "3:2");
  BOOST_TEST(image->engine_settings == R"({"latency_ms":5})");
  BOOST_TEST(image->max_attempts == 2);
  const model_spec* video = c->find("house-video");
  BOOST_TEST_REQUIRE(video != nullptr);
  BOOST_TEST(video->duration_seconds == 2);
  BOOST_TEST(video->deadline_seconds == 60);
  BOOST_TEST(video->default_aspect_ratio == "16:9");
}

BOOST_AUTO_TEST_CASE(refuses_bad_catalogs_naming_the_problem) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not valid JSON"},
      {R"({"models":{}})", "non-empty"},
      {R"({"models":{"m":{"task_type":"audio","price":1}}})", "task_type"},
      {R"({"models":{"m":{"task_type":"image"}}})", "\"price\" is required"},
      {R"({"models":{"m":{"task_type":"image","price":-1}}})", "price"},
      {R"({"models":{"m":{"task_type":"image","price":1,"colour":"red"}}})", "unknown field \"colour\""},
      {R"({"models":{"m":{"task_type":"image","price":1,"aspect_ratios":["wide"]}}})", "aspect_ratios"},
      {R"({"models":{"m":{"task_type":"image","price":1,"default_aspect_ratio":"7:3"}}})",
       "default_aspect_ratio"},
      {R"({"models":{"m":{"task_type":"image","price":1,"duration_seconds":3}}})", "video models only"},
      {R"({"models":{"a b":{"task_type":"image","price":1}}})", "model id"},
      {R"({"models":{"m":{"task_type":"image","price":1}},"extra":1})", "one field"},
  };
  for (const auto& [text, expected] : cases) {
    const auto c = gesso::catalog::parse(text);
    BOOST_TEST_REQUIRE(!c.has_value(), text);
    BOOST_TEST(c.error().reason.find(expected) != std::string::npos,
               c.error().reason << " lacks " << expected);
  }
}

BOOST_AUTO_TEST_SUITE_END()
