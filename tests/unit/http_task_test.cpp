// The http-task engine's declarative parts: templates (placeholders only; whole values keep their type;
// an absent image drops its member), JSON Pointers, the checks a catalog gets when it loads (one line
// naming the model, route and field), and how answers are read into steps.

#include "core/catalog.hpp"
#include "server/engines/engine.hpp"
#include "server/engines/providers/http_task_answers.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace gesso;
using namespace gesso::engines;
using namespace gesso::engines::http_task;
namespace json = boost::json;

namespace {

template_values sample_values() {
  template_values v;
  v.named["prompt"] = "a \"quoted\" fox";
  v.named["seed"] = 42;
  v.named["duration"] = 5;
  v.named["size"] = "1280x720";
  v.image_urls = {"https://example.com/a.png"};
  v.image_data_urls = {"data:image/png;base64,AAAA"};
  v.image_base64 = {"AAAA"};
  return v;
}

const std::set<std::string> names{"prompt", "seed", "duration", "size"};

// The refusal building a one-model catalog with this http-task route's settings throws, or "".
std::string refusal_for(const std::string& settings, const std::string& model_extra = "") {
  const auto parsed = catalog::parse(
      R"({"models":{"m":{"task_type":"video","price":1,"duration_seconds":5,"max_input_images":1,)"
      R"("aspect_ratios":["16:9","9:16"],"default_aspect_ratio":"16:9")" +
      model_extra + R"(,"routes":[{"engine":"http-task","settings":)" + settings + "}]}}}");
  if (!parsed) {
    return "catalog: " + parsed.error().reason;
  }
  try {
    static_cast<void>(make_engine(*parsed->find("m")));
    return {};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

// A working route's settings with one member replaced (or added); `without` removes one.
std::string route_with(const std::string& member, const std::string& value, const std::string& without = "") {
  json::object s = json::parse(R"({"base_url":"http://127.0.0.1:9","api_key_env":"HTTP_TASK_TEST_KEY",
    "create":{"path":"/v1/tasks","body":{"prompt":"{{prompt}}"},"id":"/id"},
    "poll":{"path":"/v1/tasks/{{id}}","status":"/status","status_map":{"done":"succeeded","error":"failed"}},
    "output":{"url":"/url"}})")
                       .as_object();
  if (!member.empty()) {
    s[member] = json::parse(value);
  }
  if (!without.empty()) {
    s.erase(without);
  }
  return json::serialize(s);
}

struct keys {
  keys() {
    setenv("HTTP_TASK_TEST_KEY", "k", 1);
    setenv("HTTP_TASK_TEST_SECRET", "s", 1);
    unsetenv("HTTP_TASK_TEST_UNSET");
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(http_task, keys)

BOOST_AUTO_TEST_CASE(whole_values_keep_their_type_and_text_is_spliced) {
  const json::value t = json::parse(
      R"({"p":"{{prompt}}","s":"{{seed}}","d":"{{duration}}","text":"size {{size}}, seed {{seed}}",
          "images":"{{image_urls}}","first":"{{image_url:0}}","b64":"{{image_base64:0}}"})");
  BOOST_TEST(check_template(t, names, "settings.create.body") == "");
  const json::value out = render(t, sample_values());
  BOOST_TEST(json::serialize(out) ==
             R"({"p":"a \"quoted\" fox","s":42,"d":5,"text":"size 1280x720, seed 42",)"
             R"("images":["https://example.com/a.png"],"first":"https://example.com/a.png","b64":"AAAA"})");
}

BOOST_AUTO_TEST_CASE(an_image_the_task_does_not_have_drops_its_member_or_element) {
  const json::value t = json::parse(R"({"first":"{{image_data_url:0}}","second":"{{image_data_url:1}}",
                                        "list":["{{image_url:0}}","{{image_url:3}}"]})");
  BOOST_TEST(json::serialize(render(t, sample_values())) ==
             R"({"first":"data:image/png;base64,AAAA","list":["https://example.com/a.png"]})");
}

BOOST_AUTO_TEST_CASE(paths_percent_encode_their_values) {
  template_values v = sample_values();
  v.named["id"] = "a/b c?d";
  BOOST_TEST(render_text("/v1/tasks/{{id}}?seed={{seed}}", v, true) == "/v1/tasks/a%2Fb%20c%3Fd?seed=42");
  BOOST_TEST(render_text("Bearer {{id}}", v, false) == "Bearer a/b c?d");
}

BOOST_AUTO_TEST_CASE(bad_templates_are_named_with_the_member) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"a":{"b":"{{promt}}"}})", "settings.create.body/a/b has the unknown placeholder {{promt}}"},
      {R"({"a":"{{prompt"})", "settings.create.body/a has a \"{{\" that is never closed"},
      {R"({"a":"{{image_url}}"})", "{{image_url}} without an image index"},
      {R"({"a":"{{seed:1}}"})", "only image placeholders take an index"},
      {R"({"a":"x {{image_urls}}"})", "a list can only be a whole value"},
      {R"({"a":["{{Prompt}}"]})", "settings.create.body/a/0 has \"{{Prompt}}\""},
      {R"({"{{prompt}}":1})", "a member name cannot hold a placeholder"},
      {R"({"a":"{{image_url:123}}"})", "an image index is a number from 0 to 99"},
  };
  for (const auto& [t, expected] : cases) {
    const std::string problem = check_template(json::parse(t), names, "settings.create.body");
    BOOST_TEST(problem.find(expected) != std::string::npos, t << " → " << problem);
  }
  BOOST_TEST(
      check_text_template("/x/{{id}}", names, "settings.poll.path").find("unknown placeholder {{id}}") !=
      std::string::npos);
}

BOOST_AUTO_TEST_CASE(pointers_follow_rfc_6901_through_boost_json) {
  for (const char* good : {"", "/a", "/a/0", "/a~1b", "/m~0n", "/"}) {
    BOOST_TEST(valid_pointer(good), good);
  }
  for (const char* bad : {"a", "/a~", "/a~2", "data/id"}) {
    BOOST_TEST(!valid_pointer(bad), bad);
  }
  const json::value doc = json::parse(R"({"data":{"task_id":"t1","videos":[{"url":"u"}]},"a/b":1,"m~n":2})");
  BOOST_TEST(find(doc, "/data/videos/0/url")->as_string() == "u");
  BOOST_TEST(find(doc, "/a~1b")->as_int64() == 1);
  BOOST_TEST(find(doc, "/m~0n")->as_int64() == 2);
  BOOST_TEST(find(doc, "/data/videos/1/url") == nullptr);
  BOOST_TEST(find(doc, "/data/task_id/x") == nullptr);
}

BOOST_AUTO_TEST_CASE(a_working_route_and_the_worked_configurations_load) {
  BOOST_TEST(refusal_for(route_with("", "")) == "");
  setenv("ARK_API_KEY", "k", 1);
  setenv("KLING_ACCESS_KEY", "k", 1);
  setenv("KLING_SECRET_KEY", "s", 1);
  setenv("MINIMAX_API_KEY", "k", 1);
  setenv("RUNWAYML_API_SECRET", "k", 1);
  for (const char* name : {"ark-seedance", "kling", "minimax-hailuo", "runway"}) {
    std::ifstream in(std::string(GESSO_SOURCE_DIR) + "/deploy/http-task/" + name + ".json");
    std::stringstream text;
    text << in.rdbuf();
    const json::value route = json::parse(text.str());
    const std::string duration = std::string(name) == "minimax-hailuo" ? "6" : "5";
    BOOST_TEST(refusal_for(json::serialize(route.at("settings")), R"(,"duration_seconds":)" + duration) == "",
               name);
  }
}

// docs/providers.md shows each worked configuration as deploy/http-task holds it.
BOOST_AUTO_TEST_CASE(the_docs_show_the_worked_configurations_as_the_files_hold_them) {
  std::ifstream in(std::string(GESSO_SOURCE_DIR) + "/docs/providers.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const char* name : {"ark-seedance", "kling", "minimax-hailuo", "runway"}) {
    BOOST_TEST_CONTEXT(name) {
      const std::string heading = "`deploy/http-task/" + std::string(name) + ".json`:\n\n```json\n";
      const auto start = doc.find(heading);
      BOOST_TEST_REQUIRE(start != std::string::npos);
      const auto body = start + heading.size();
      const std::string shown = doc.substr(body, doc.find("\n```", body) - body);
      std::ifstream file(std::string(GESSO_SOURCE_DIR) + "/deploy/http-task/" + name + ".json");
      std::stringstream held;
      held << file.rdbuf();
      BOOST_TEST((json::parse(shown) == json::parse(held.str())));
    }
  }
}

BOOST_AUTO_TEST_CASE(each_problem_is_one_line_naming_the_model_route_and_field) {
  const std::string at = R"(model "m": routes[0] (http-task): )";
  const std::vector<std::pair<std::string, std::string>> cases{
      {route_with("create", R"({"path":"/v1/tasks","body":{"p":"{{promt}}"},"id":"/id"})"),
       at + "settings.create.body/p has the unknown placeholder {{promt}}"},
      {route_with("create", R"({"path":"/v1/tasks","id":"id"})"),
       at + "settings.create.id is not a JSON Pointer (RFC 6901): \"id\""},
      {route_with("poll", R"({"path":"/t/{{id}}","status":"/s","status_map":{"ok":"succeeded"}})"),
       at + "settings.poll.status_map has no failed state"},
      {route_with("poll", R"({"path":"/t/{{id}}","status":"/s","status_map":{"ok":"done","x":"failed"}})"),
       at + "settings.poll.status_map.ok must be queued, running, succeeded, failed or canceled"},
      {route_with("", "", "poll"), at + "settings.poll is required unless create.sync is true"},
      {route_with("auth", R"({"type":"header"})"), at + "settings.auth.name is required"},
      {route_with("auth", R"({"type":"jwt-hs256"})"), at + "settings.auth.secret_key_env is required"},
      {route_with("auth", R"({"type":"jwt-hs256","secret_key_env":"HTTP_TASK_TEST_UNSET"})"),
       at + "settings.auth.secret_key_env names HTTP_TASK_TEST_UNSET, which is not set"},
      {route_with("auth", R"({"type":"basic"})"), at + "settings.auth.type must be bearer, header, query"},
      {route_with("auth", R"({"type":"bearer"})", "api_key_env"), at + "settings.api_key_env is required"},
      {route_with("output", R"({"url":"/u","urls":"/v"})"), at + "settings.output must name exactly one"},
      {route_with("maps", R"({"size":{"values":{"16:9":"1280x720"}}})"),
       at + "settings.maps.size.values has no value for 9:16, which the model allows"},
      {route_with("maps", R"({"prompt":{"values":{}}})"),
       at + "settings.maps.prompt must be a new lower-case name"},
      {route_with("errors", R"({"ok":[0]})"), at + "settings.errors.ok needs errors.code"},
      {route_with("poll", R"({"path":"/t/{{id}}","statuss":"/s"})"), at + "settings.poll.statuss is unknown"},
      {route_with("retry_statuses", "[200]"), at + "settings.retry_statuses must hold HTTP error statuses"},
      {route_with("create", R"({"method":"FETCH","path":"/v1","id":"/id"})"),
       at + "settings.create.method must be GET, POST, PUT, PATCH or DELETE"},
      {route_with("headers", R"({"Bad Name":"x"})"),
       at + "settings.headers.Bad Name \"Bad Name\" is not a header name"},
      {route_with("result", R"({"path":"/files/{{file_id}}"})"),
       at + "settings.result.path has the unknown placeholder {{file_id}}"},
  };
  for (const auto& [settings, expected] : cases) {
    const std::string refusal = refusal_for(settings);
    BOOST_TEST(refusal.find(expected) == 0U, expected << "\n   got: " << refusal);
    BOOST_TEST(refusal.find('\n') == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(answers_that_do_not_match_fail_as_internal_naming_the_pointer) {
  route_settings s;
  s.api_key = "k";
  s.label = "routes[1]";
  s.extra = json::parse(route_with("errors", R"({"message":"/error/message"})")).as_object();
  model_spec model;
  model.type = task_type::video;
  model.duration_seconds = 5;
  const spec sp = parse_spec(s, model);
  const answer_reader read(sp, "http-task routes[1]", std::chrono::seconds(2));
  const auto answer = [](unsigned status, std::string body) {
    http_answer a;
    a.status = status;
    a.body = std::move(body);
    return a;
  };
  const auto ok = [&](std::string body) { return answer(200, std::move(body)); };

  const auto html = read.check(ok("<!DOCTYPE html><html>"), "poll");
  BOOST_TEST_REQUIRE(html.stop.has_value());
  BOOST_TEST((html.stop->failure == failure_kind::internal));
  BOOST_TEST(html.stop->message.find("http-task routes[1]: the poll answer is not JSON") == 0U);

  const auto missing = read.job_of(json::parse(R"({"task":"x"})"), ok(""));
  BOOST_TEST(missing.message ==
             "http-task routes[1]: the create answer's /id is missing (settings.create.id)");
  const auto wrong = read.state_of(json::parse(R"({"status":{"x":1}})"), ok(""), "j");
  BOOST_TEST(
      wrong->message ==
      "http-task routes[1]: the poll answer's /status is an object, not a string (settings.poll.status)");
  const auto unmapped = read.state_of(json::parse(R"({"status":"paused"})"), ok(""), "j");
  BOOST_TEST(unmapped->message.find("is \"paused\", which settings.poll.status_map does not name") !=
             std::string::npos);
  BOOST_TEST(!read.state_of(json::parse(R"({"status":"done"})"), ok(""), "j").has_value());  // succeeded
  const auto no_url = read.output_of(json::parse(R"({"status":"done","url":7})"), "poll");
  BOOST_TEST(no_url.message ==
             "http-task routes[1]: the poll answer's /url is a number, not a string (settings.output.url)");

  const auto policy = read.check(answer(400, R"({"error":{"message":"flagged by moderation"}})"), "create");
  BOOST_TEST((policy.stop->failure == failure_kind::content_policy));
  const auto busy = read.check(answer(503, "{}"), "create");
  BOOST_TEST((busy.stop->what == provider_step::kind::retry));
  const auto invalid = read.check(answer(422, R"({"error":{"message":"bad"}})"), "create");
  BOOST_TEST((invalid.stop->failure == failure_kind::invalid_input));
  BOOST_TEST(invalid.stop->message == "http-task routes[1] answered HTTP 422: bad");
}

BOOST_AUTO_TEST_SUITE_END()
