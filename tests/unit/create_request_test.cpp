#include "core/create_request.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

namespace {
const gesso::catalog models = gesso::catalog::builtin();
outcome<create_request> parse(std::string_view body) {
  return parse_create_request(body, models);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(create_request)

BOOST_AUTO_TEST_CASE(accepts_a_minimal_request_and_applies_defaults) {
  const auto r = parse(R"({"model_id":"vendor1-flash","prompt":"  a cat  "})");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->model->id == "vendor1-flash");
  BOOST_TEST(r->prompt == "a cat");
  BOOST_TEST(r->aspect_ratio == "16:9");
  BOOST_TEST(r->image_urls.empty());
}

BOOST_AUTO_TEST_CASE(accepts_every_field) {
  const auto r = parse(R"({"model_id":"vendor3-image-2","prompt":"p","aspect_ratio":"21:9",
      "image_urls":["https://example.com/a.png","http://[2606:4700::1111]:8080/b","data:image/png;base64,iVBORw0KGgo="]})");
  BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().message));
  BOOST_TEST(r->aspect_ratio == "21:9");
  BOOST_TEST(r->image_urls.size() == 3U);
}

BOOST_AUTO_TEST_CASE(prompt_limit_counts_code_points) {
  const std::string han = "\xe7\x8c\xab";  // one code point, three bytes
  std::string at_limit;
  for (int i = 0; i < 5000; ++i) {
    at_limit += han;
  }
  BOOST_TEST(parse(R"({"model_id":"vendor4-2","prompt":")" + at_limit + "\"}").has_value());
  const auto over = parse(R"({"model_id":"vendor4-2","prompt":")" + at_limit + "x\"}");
  BOOST_TEST_REQUIRE(!over.has_value());
  BOOST_TEST(over.error().message.find("5001") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refuses_bad_requests_with_a_message_naming_the_problem) {
  struct bad {
    std::string body;
    errc code;
    std::string expected;
  };
  const bad cases[] = {
      {"", errc::invalid_json, "empty"},
      {"{", errc::invalid_json, "not valid JSON"},
      {"[]", errc::invalid_json, "JSON object"},
      {"\"text\"", errc::invalid_json, "JSON object"},
      {"{\"prompt\":\"\xff\"}", errc::invalid_json, "UTF-8"},
      {R"({"prompt":"p"})", errc::invalid_field, "missing required field \"model_id\""},
      {R"({"model_id":"vendor4-2"})", errc::invalid_field, "missing required field \"prompt\""},
      {R"({"model_id":7,"prompt":"p"})", errc::invalid_field, "\"model_id\" must be a string, not a number"},
      {R"({"model_id":"gpt","prompt":"p"})", errc::unknown_model, "unknown model_id \"gpt\""},
      {R"({"model_id":"vendor4-2","prompt":null})", errc::invalid_field, "not null"},
      {R"({"model_id":"vendor4-2","prompt":" \t "})", errc::invalid_field, "empty or only whitespace"},
      {R"({"model_id":"vendor4-2","prompt":"a\u0000b"})", errc::invalid_field, "NUL"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_url":[]})", errc::invalid_field,
       "did you mean \"image_urls\""},
      {R"({"model_id":"vendor4-2","prompt":"p","aspect_ratio":"7:5"})", errc::invalid_field,
       "allowed values: 1:1"},
      {R"({"model_id":"vendor1-pro","prompt":"p","aspect_ratio":"1:1"})", errc::invalid_field, "16:9, 9:16"},
      {R"({"model_id":"vendor4-2","prompt":"p","aspect_ratio":169})", errc::invalid_field, "aspect_ratio"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":"http://x"})", errc::invalid_field, "array"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":[1]})", errc::invalid_field, "image_urls[0]"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":["ftp://x/y"]})", errc::invalid_field,
       "http or https"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":["not a url"]})", errc::invalid_field,
       "image_urls[0]"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":["http:///nohost"]})", errc::invalid_field,
       "image_urls[0]"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":["data:text/plain;base64,aGk="]})",
       errc::invalid_field, "data:image/png"},
      {R"({"model_id":"vendor4-2","prompt":"p","image_urls":["data:image/png;base64,***"]})",
       errc::invalid_field, "base64"},
      {R"({"model_id":"vendor1-flash","prompt":"p","image_urls":["http://a/1","http://a/2","http://a/3","http://a/4"]})",
       errc::invalid_field, "at most 3"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.body);
    BOOST_TEST_REQUIRE(!r.has_value(), c.body);
    BOOST_TEST((r.error().code == c.code), c.body);
    BOOST_TEST(r.error().message.find(c.expected) != std::string::npos,
               r.error().message << " lacks " << c.expected);
  }
}

BOOST_AUTO_TEST_CASE(long_urls_are_refused) {
  const std::string url = "https://example.com/" + std::string(2100, 'a');
  BOOST_TEST(check_image_url(url).find("longer than 2048") != std::string::npos);
  BOOST_TEST(check_image_url("https://example.com/ok").empty());
}

BOOST_AUTO_TEST_CASE(urls_written_as_blocked_addresses_are_refused_at_once) {
  for (const char* url :
       {"http://127.0.0.1/x.png", "http://127.1/x.png", "https://0x7f.1/x.png", "http://2130706433/x.png",
        "http://0177.0.0.1:8080/x.png", "http://[::1]/x.png", "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/", "http://[::ffff:10.0.0.1]/", "http://10.1/x.png", "http://0/x.png"}) {
    const std::string reason = check_image_url(url);
    BOOST_TEST(reason.find("Gesso fetches only public addresses") != std::string::npos,
               url << ": " << reason);
  }
  BOOST_TEST(check_image_url("http://127.1/x.png").find("points to 127.0.0.1, a loopback address") == 0);
  // Names are resolved by the worker, which checks every address; public literals pass.
  BOOST_TEST(check_image_url("http://localhost/x.png").empty());
  BOOST_TEST(check_image_url("http://8.8.8.8/x.png").empty());
  BOOST_TEST(check_image_url("http://[2606:4700::1111]/x.png").empty());
  // An operator's allowed network is allowed here too.
  const fetch_policy on_premise{parse_networks("10.0.0.0/8").value()};
  BOOST_TEST(check_image_url("http://10.1.2.3/x.png", on_premise).empty());
  BOOST_TEST(!check_image_url("http://127.0.0.1/x.png", on_premise).empty());

  const auto models = catalog::builtin();
  const auto r = parse_create_request(
      R"({"model_id":"vendor4-2","prompt":"p","image_urls":["https://ok.example/a.png","http://127.1:9/x"]})",
      models);
  BOOST_TEST_REQUIRE(!r.has_value());
  BOOST_TEST((r.error().code == errc::invalid_field));
  BOOST_TEST(r.error().message.find("image_urls[1] points to 127.0.0.1") == 0, r.error().message);
}

BOOST_AUTO_TEST_CASE(the_data_scheme_and_media_type_are_case_insensitive) {
  const auto models = catalog::builtin();
  for (const std::string prefix :
       {"data:image/png;base64,", "DATA:IMAGE/PNG;BASE64,", "Data:Image/Jpeg;Base64,"}) {
    const auto r = parse_create_request(
        R"({"model_id":"vendor4-2","prompt":"p","image_urls":[")" + prefix + R"(iVBORw0KGgo="]})", models);
    BOOST_TEST(r.has_value(), prefix << ": " << (r ? "" : r.error().message));
  }
  BOOST_TEST(is_data_url("DaTa:x"));
  BOOST_TEST(!is_data_url("http://data:x"));
}

BOOST_AUTO_TEST_CASE(a_fragment_is_stripped_from_image_urls) {
  const auto models = catalog::builtin();
  const auto r = parse_create_request(
      R"({"model_id":"vendor4-2","prompt":"p","image_urls":["https://ok.example/a.png#top","https://ok.example/b.png"]})",
      models);
  BOOST_TEST_REQUIRE(r.has_value(), r.error().message);
  BOOST_TEST(r->image_urls[0] == "https://ok.example/a.png");
  BOOST_TEST(r->image_urls[1] == "https://ok.example/b.png");
  BOOST_TEST(without_fragment("data:image/png;base64,AA#B") == "data:image/png;base64,AA#B");
}

// Many tiny values used to cost about 25 times the body in values and parser stack.
BOOST_AUTO_TEST_CASE(the_parse_of_a_body_is_capped_near_its_size) {
  const auto models = catalog::builtin();
  std::string zeros = "[0";
  while (zeros.size() < 1024 * 1024) {
    zeros += ",0";
  }
  zeros += "]";
  const auto r = parse_create_request(zeros, models);
  BOOST_TEST_REQUIRE(!r.has_value());
  BOOST_TEST((r.error().code == errc::invalid_json));
  BOOST_TEST(r.error().message.find("too many JSON values") != std::string::npos, r.error().message);
  // A valid body made mostly of one long string fits its cap.
  const std::string big = R"({"model_id":"vendor4-2","prompt":"p","image_urls":["data:image/png;base64,)" +
                          std::string(4 * 1024 * 1024, 'A') + R"("]})";
  const auto ok = parse_create_request(big, models);
  BOOST_TEST(ok.has_value(), (ok ? "" : ok.error().message));
}

BOOST_AUTO_TEST_SUITE_END()
