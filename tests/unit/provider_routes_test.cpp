// A catalog's routes are checked when the worker builds its engines: one line naming the model, the
// route and the field, for an unknown engine or setting, a missing required one, an unset key
// variable, or a ratio, duration or input count the route cannot honour.

#include "core/catalog.hpp"
#include "server/engines/engine.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace gesso;

namespace {

// The refusal make_engine throws for a one-model catalog, or "" when it builds.
std::string refusal_for(const std::string& model_json) {
  const auto parsed = catalog::parse(R"({"models":{"m":)" + model_json + "}}");
  if (!parsed) {
    return "catalog: " + parsed.error().reason;
  }
  try {
    static_cast<void>(engines::make_engine(*parsed->find("m")));
    return {};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

std::string image_route(const std::string& engine, const std::string& settings) {
  return R"({"task_type":"image","price":1,"max_input_images":1,"routes":[{"engine":")" + engine +
         R"(","settings":)" + settings + "}]}";
}

struct keys {
  keys() {
    setenv("ROUTE_TEST_KEY", "k", 1);
    unsetenv("ROUTE_TEST_UNSET");
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(provider_routes, keys)

BOOST_AUTO_TEST_CASE(good_routes_build) {
  BOOST_TEST(
      refusal_for(image_route("fal", R"({"api_key_env":"ROUTE_TEST_KEY","model":"fal-ai/flux/dev"})")) == "");
  BOOST_TEST(refusal_for(image_route("sdcpp", R"({"base_url":"http://10.0.0.5:7860"})")) == "");
}

BOOST_AUTO_TEST_CASE(each_problem_is_one_line_naming_the_model_route_and_field) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {image_route("midjourney", "{}"), R"(model "m": routes[0]: unknown engine "midjourney")"},
      {image_route("fal", R"({"api_key_env":"ROUTE_TEST_KEY","model":"x","colour":1})"),
       R"(model "m": routes[0] (fal): unknown setting "colour")"},
      {image_route("fal", R"({"api_key_env":"ROUTE_TEST_KEY"})"),
       R"(routes[0] (fal): settings.model is required)"},
      {image_route("fal", R"({"model":"x"})"), "settings.api_key_env is required"},
      {image_route("fal", R"({"api_key_env":"ROUTE_TEST_UNSET","model":"x"})"),
       "settings.api_key_env: ROUTE_TEST_UNSET is not set"},
      {image_route("fal", R"({"api_key_env":"lower case!","model":"x"})"), "settings.api_key_env must name"},
      {image_route("sdcpp", "{}"), "settings.base_url is required"},
      {image_route("sdcpp", R"({"base_url":"ftp://host"})"),
       "settings.base_url must be an http or https URL"},
      {image_route("fal", R"({"api_key_env":"ROUTE_TEST_KEY","model":"x","request_timeout_ms":5})"),
       "settings.request_timeout_ms must be a whole number from 100 to 600000"},
      {R"({"task_type":"image","price":1,"max_input_images":3,"routes":[{"engine":"fal",)"
       R"("settings":{"api_key_env":"ROUTE_TEST_KEY","model":"x"}}]})",
       R"(set the model's "max_input_images" to 1 or less)"},
      {image_route("openai-images", R"({"api_key_env":"ROUTE_TEST_KEY","model":"dall-e-2"})"),
       "cannot be honoured by dall-e-2 (square sizes only)"},
      {image_route("comfyui", R"({"base_url":"http://127.0.0.1:8188","workflow":")" +
                                  std::string(GESSO_SOURCE_DIR) +
                                  R"(/deploy/comfyui/text-to-image.json","prompt_node":"99"})"),
       R"(settings.prompt_node: node "99" is not in the workflow)"},
      {image_route(
           "comfyui",
           R"({"base_url":"http://127.0.0.1:8188","workflow":"/nonexistent.json","prompt_node":"6"})"),
       "settings.workflow: /nonexistent.json is not an API-format workflow"},
      {R"({"task_type":"video","price":1,"duration_seconds":7,"max_input_images":1,"routes":[{"engine":"kling",)"
       R"("settings":{"api_key_env":"ROUTE_TEST_KEY","secret_key_env":"ROUTE_TEST_KEY"}}]})",
       "duration_seconds 7 cannot be honoured by kling (5 or 10)"},
      {R"({"task_type":"video","price":1,"max_input_images":1,"routes":[{"engine":"kling",)"
       R"("settings":{"api_key_env":"ROUTE_TEST_KEY"}}]})",
       "settings.secret_key_env is required"},
      {R"({"task_type":"image","price":1,"engine":"fal","routes":[{"engine":"fal"}]})",
       R"(give either "routes" or "engine")"},
      {R"({"task_type":"image","price":1,"routes":[{"engine":"fal","weight":0}]})",
       "routes[0].weight must be"},
      {R"({"task_type":"image","price":1,"routes":[]})", R"("routes" must be a non-empty array)"},
  };
  for (const auto& [model_json, expected] : cases) {
    const std::string got = refusal_for(model_json);
    BOOST_TEST(got.find(expected) != std::string::npos,
               "expected \"" << expected << "\", got \"" << got << "\"");
    BOOST_TEST(got.find('\n') == std::string::npos);
  }
}

// The worked catalog in docs/providers.md is a catalog the worker accepts (keys set, the ComfyUI
// workflow taken from deploy/comfyui).
BOOST_AUTO_TEST_CASE(the_worked_catalog_in_the_docs_loads) {
  std::ifstream in(std::string(GESSO_SOURCE_DIR) + "/docs/providers.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto start = doc.find("```json\n");
  const auto end = doc.find("\n```", start + 8);
  BOOST_TEST_REQUIRE(end != std::string::npos);
  std::string json = doc.substr(start + 8, end - start - 8);
  const std::string workflow = "/etc/gesso/text-to-image.json";
  json.replace(json.find(workflow), workflow.size(),
               std::string(GESSO_SOURCE_DIR) + "/deploy/comfyui/text-to-image.json");
  for (const char* name : {"OPENAI_API_KEY", "FAL_KEY", "REPLICATE_API_TOKEN", "GEMINI_API_KEY",
                           "ARK_API_KEY", "KLING_ACCESS_KEY", "KLING_SECRET_KEY"}) {
    setenv(name, "k", 1);
  }
  const auto parsed = catalog::parse(json);
  BOOST_TEST_REQUIRE(parsed.has_value(), (parsed ? "" : parsed.error().reason));
  BOOST_TEST(parsed->models().size() == 5U);
  for (const model_spec& m : parsed->models()) {
    BOOST_TEST_CONTEXT(m.id) {
      std::string refused;
      try {
        static_cast<void>(engines::make_engine(m));
      } catch (const std::exception& e) {
        refused = e.what();
      }
      BOOST_TEST(refused == "");
    }
  }
}

// Every catalog example of a provider engine in docs/engines.md loads as written.
BOOST_AUTO_TEST_CASE(the_engine_examples_in_the_docs_load) {
  std::ifstream in(std::string(GESSO_SOURCE_DIR) + "/docs/engines.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const char* name : {"OPENAI_API_KEY", "FAL_KEY", "REPLICATE_API_TOKEN", "GEMINI_API_KEY",
                           "ARK_API_KEY", "KLING_ACCESS_KEY", "KLING_SECRET_KEY"}) {
    setenv(name, "k", 1);
  }
  int examples = 0;
  for (auto start = doc.find("```json\n"); start != std::string::npos;
       start = doc.find("```json\n", start + 1)) {
    const auto end = doc.find("\n```", start + 8);
    std::string block = doc.substr(start + 8, end - start - 8);
    if (block.find("\"task-api\"") != std::string::npos) {
      continue;  // its example carries a placeholder key
    }
    const std::string workflow = "/etc/gesso/text-to-image.json";
    if (const auto at = block.find(workflow); at != std::string::npos) {
      block.replace(at, workflow.size(),
                    std::string(GESSO_SOURCE_DIR) + "/deploy/comfyui/text-to-image.json");
    }
    const auto parsed = catalog::parse("{\"models\": {" + block + "}}");
    BOOST_TEST_REQUIRE(parsed.has_value(), block << ": " << (parsed ? "" : parsed.error().reason));
    for (const model_spec& m : parsed->models()) {
      std::string refused;
      try {
        static_cast<void>(engines::make_engine(m));
      } catch (const std::exception& e) {
        refused = e.what();
      }
      BOOST_TEST(refused == "", m.id);
      ++examples;
    }
  }
  BOOST_TEST(examples >= 10);
}

BOOST_AUTO_TEST_SUITE_END()
