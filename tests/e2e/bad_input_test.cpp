// Malformed creates, table-driven: each is answered 4xx with a message naming the problem, and
// afterwards the account's balance and task count are exactly as before.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

using namespace gesso::testing;
namespace json = boost::json;

namespace {

struct bad_request {
  std::string name;
  std::string method = "POST";
  std::string target = "/api/v1/tasks/create";
  std::string body = "";
  std::string content_type = "application/json";
  int status = 400;
  std::string expected;  ///< a fragment of msg that names the problem
};

std::string create_body(const std::string& fields) {
  return R"({"model_id":"vendor4-2","prompt":"a cat")" + fields + "}";
}

std::vector<bad_request> cases() {
  const std::string long_prompt(5001, 'x');
  std::string eleven_urls = "[";
  for (int i = 0; i < 11; ++i) {
    eleven_urls += std::string(i ? "," : "") + "\"https://e.com/" + std::to_string(i) + ".png\"";
  }
  eleven_urls += "]";
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  return {
      {.name = "empty body", .body = "", .expected = "empty"},
      {.name = "only whitespace", .body = " \n ", .expected = "empty"},
      {.name = "lone brace", .body = "{", .expected = "not valid JSON"},
      {.name = "truncated body",
       .body = R"({"model_id":"vendor4-2","prompt":"a ca)",
       .expected = "not valid JSON"},
      {.name = "trailing garbage", .body = create_body("") + " x", .expected = "not valid JSON"},
      {.name = "two objects", .body = "{}{}", .expected = "not valid JSON"},
      {.name = "single quotes", .body = "{'model_id':'vendor4-2'}", .expected = "not valid JSON"},
      {.name = "comment",
       .body = R"({/*c*/"model_id":"vendor4-2","prompt":"p"})",
       .expected = "not valid JSON"},
      {.name = "deep nesting", .body = deep, .expected = "not valid JSON"},
      {.name = "array body", .body = "[]", .expected = "must be a JSON object, not an array"},
      {.name = "string body", .body = "\"hi\"", .expected = "must be a JSON object"},
      {.name = "null body", .body = "null", .expected = "must be a JSON object"},
      {.name = "number body", .body = "42", .expected = "must be a JSON object"},
      {.name = "missing model_id",
       .body = R"({"prompt":"p"})",
       .expected = "missing required field \"model_id\""},
      {.name = "missing prompt",
       .body = R"({"model_id":"vendor4-2"})",
       .expected = "missing required field \"prompt\""},
      {.name = "model_id number",
       .body = R"({"model_id":4,"prompt":"p"})",
       .expected = "\"model_id\" must be a string"},
      {.name = "model_id null", .body = R"({"model_id":null,"prompt":"p"})", .expected = "not null"},
      {.name = "model_id array",
       .body = R"({"model_id":["vendor4-2"],"prompt":"p"})",
       .expected = "not an array"},
      {.name = "unknown model",
       .body = R"({"model_id":"vendor9","prompt":"p"})",
       .expected = "unknown model_id \"vendor9\""},
      {.name = "model case",
       .body = R"({"model_id":"VENDOR4-2","prompt":"p"})",
       .expected = "unknown model_id"},
      {.name = "prompt null",
       .body = R"({"model_id":"vendor4-2","prompt":null})",
       .expected = "\"prompt\" must be a string, not null"},
      {.name = "prompt number", .body = R"({"model_id":"vendor4-2","prompt":1})", .expected = "not a number"},
      {.name = "prompt object",
       .body = R"({"model_id":"vendor4-2","prompt":{}})",
       .expected = "not an object"},
      {.name = "prompt bool",
       .body = R"({"model_id":"vendor4-2","prompt":true})",
       .expected = "not a boolean"},
      {.name = "empty prompt",
       .body = R"({"model_id":"vendor4-2","prompt":""})",
       .expected = "empty or only whitespace"},
      {.name = "whitespace prompt",
       .body = R"({"model_id":"vendor4-2","prompt":"  \n\t "})",
       .expected = "only whitespace"},
      {.name = "ideographic spaces",
       .body = R"({"model_id":"vendor4-2","prompt":"\u3000\u3000"})",
       .expected = "only whitespace"},
      {.name = "over-long prompt",
       .body = R"({"model_id":"vendor4-2","prompt":")" + long_prompt + "\"}",
       .expected = "5001 characters"},
      {.name = "NUL in prompt", .body = R"({"model_id":"vendor4-2","prompt":"a\u0000b"})", .expected = "NUL"},
      {.name = "invalid UTF-8",
       .body = "{\"model_id\":\"vendor4-2\",\"prompt\":\"caf\xe9\"}",
       .expected = "not valid UTF-8"},
      {.name = "overlong UTF-8",
       .body = "{\"model_id\":\"vendor4-2\",\"prompt\":\"\xc0\xaf\"}",
       .expected = "not valid UTF-8"},
      {.name = "lone surrogate escape",
       .body = R"({"model_id":"vendor4-2","prompt":"\ud800"})",
       .expected = "not valid JSON"},
      {.name = "typo image_url",
       .body = create_body(R"(,"image_url":[])"),
       .expected = "did you mean \"image_urls\""},
      {.name = "unknown field",
       .body = create_body(R"(,"webhook_url":"https://x")"),
       .expected = "unknown field \"webhook_url\""},
      {.name = "field case",
       .body = R"({"Model_id":"vendor4-2","prompt":"p"})",
       .expected = "unknown field \"Model_id\""},
      {.name = "bad aspect ratio",
       .body = create_body(R"(,"aspect_ratio":"7:5")"),
       .expected = "allowed values: 1:1, 2:3"},
      {.name = "empty aspect ratio",
       .body = create_body(R"(,"aspect_ratio":"")"),
       .expected = "allowed values"},
      {.name = "aspect ratio number",
       .body = create_body(R"(,"aspect_ratio":1.5)"),
       .expected = "\"aspect_ratio\" must be a string"},
      {.name = "aspect ratio words",
       .body = create_body(R"(,"aspect_ratio":"square")"),
       .expected = "allowed values"},
      {.name = "image ratio on video",
       .body = R"({"model_id":"vendor1-flash","prompt":"p","aspect_ratio":"1:1"})",
       .expected = "16:9, 9:16"},
      {.name = "image_urls string",
       .body = create_body(R"(,"image_urls":"https://e.com/a.png")"),
       .expected = "\"image_urls\" must be an array"},
      {.name = "image_urls null", .body = create_body(R"(,"image_urls":null)"), .expected = "not null"},
      {.name = "image_urls number item",
       .body = create_body(R"(,"image_urls":[1])"),
       .expected = "image_urls[0] must be a URL string"},
      {.name = "image_urls null item",
       .body = create_body(R"(,"image_urls":["https://e.com/a",null])"),
       .expected = "image_urls[1]"},
      {.name = "ftp url",
       .body = create_body(R"(,"image_urls":["ftp://e.com/a.png"])"),
       .expected = "http or https"},
      {.name = "javascript url",
       .body = create_body(R"js(,"image_urls":["javascript:alert(1)"])js"),
       .expected = "http or https"},
      {.name = "not a url",
       .body = create_body(R"(,"image_urls":["cat picture"])"),
       .expected = "not a valid absolute URL"},
      {.name = "url without host",
       .body = create_body(R"(,"image_urls":["http:///a.png"])"),
       .expected = "image_urls[0]"},
      {.name = "too many images",
       .body = create_body(",\"image_urls\":" + eleven_urls),
       .expected = "at most 10"},
      {.name = "too many video images",
       .body =
           R"({"model_id":"vendor2-2","prompt":"p","image_urls":["http://e.com/1","http://e.com/2","http://e.com/3","http://e.com/4"]})",
       .expected = "at most 3"},
      {.name = "data url not image",
       .body = create_body(R"(,"image_urls":["data:text/html;base64,PGI+"])"),
       .expected = "data:image/png"},
      {.name = "data url bad base64",
       .body = create_body(R"(,"image_urls":["data:image/png;base64,@@@@"])"),
       .expected = "not valid base64"},
      {.name = "url too long",
       .body = create_body(",\"image_urls\":[\"https://e.com/" + std::string(2100, 'a') + "\"]"),
       .expected = "longer than 2048"},
      {.name = "huge body",
       .body = std::string(9 * 1024 * 1024, ' '),
       .status = 413,
       .expected = "larger than the limit"},
      {.name = "text content type",
       .body = create_body(""),
       .content_type = "text/plain",
       .status = 415,
       .expected = "Content-Type must be application/json"},
      {.name = "form content type",
       .body = "model_id=vendor4-2",
       .content_type = "application/x-www-form-urlencoded",
       .status = 415,
       .expected = "application/json"},
      {.name = "no content type",
       .body = create_body(""),
       .content_type = "",
       .status = 415,
       .expected = "application/json"},
      {.name = "GET on create", .method = "GET", .body = "", .status = 405, .expected = "accepts POST"},
      {.name = "PUT on create",
       .method = "PUT",
       .body = create_body(""),
       .status = 405,
       .expected = "accepts POST"},
      {.name = "POST on query",
       .method = "POST",
       .target = "/api/v1/tasks/task_01m7ya2w8eg4k956r0k6vnwez1",
       .body = create_body(""),
       .status = 405,
       .expected = "accepts GET"},
      {.name = "DELETE on query",
       .method = "DELETE",
       .target = "/api/v1/tasks/task_01m7ya2w8eg4k956r0k6vnwez1",
       .status = 405,
       .expected = "accepts GET"},
      {.name = "POST to the listing",
       .target = "/api/v1/tasks",
       .body = create_body(""),
       .status = 405,
       .expected = "accepts GET"},
      {.name = "other version",
       .target = "/api/v2/tasks/create",
       .body = create_body(""),
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "trailing segment",
       .target = "/api/v1/tasks/create/now",
       .body = create_body(""),
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "double slash",
       .target = "//api/v1/tasks/create",
       .body = create_body(""),
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "upper-case path",
       .target = "/API/V1/TASKS/CREATE",
       .body = create_body(""),
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "dot segments",
       .method = "GET",
       .target = "/api/v1/tasks/../tasks/create",
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "empty task id",
       .method = "GET",
       .target = "/api/v1/tasks/",
       .status = 404,
       .expected = "no such endpoint"},
      {.name = "encoded NUL id",
       .method = "GET",
       .target = "/api/v1/tasks/%00",
       .status = 404,
       .expected = "task not found"},
      {.name = "traversal id",
       .method = "GET",
       .target = "/api/v1/tasks/..%2F..%2Fetc%2Fpasswd",
       .status = 404,
       .expected = "task not found"},
      {.name = "query string id",
       .method = "GET",
       .target = "/api/v1/tasks/task_x?id=1",
       .status = 404,
       .expected = "task not found"},
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(malformed_creates_are_refused_and_change_nothing) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("bad-input", 50);
  const auto table = cases();
  BOOST_TEST(table.size() >= 40U);
  for (const bad_request& c : table) {
    BOOST_TEST_CONTEXT("case \"" << c.name << "\"") {
      std::map<std::string, std::string> headers{{"Authorization", "Bearer " + account.key}};
      if (!c.content_type.empty()) {
        headers["Content-Type"] = c.content_type;
      }
      const auto reply = client.request(c.method, c.target, c.body, headers);
      BOOST_TEST(reply.status == c.status);
      const json::object body = reply.json().as_object();
      BOOST_TEST(body.at("code").as_int64() == 0);
      BOOST_TEST(body.at("data").is_null());
      const std::string msg(body.at("msg").as_string());
      BOOST_TEST(msg.find(c.expected) != std::string::npos,
                 "msg \"" << msg << "\" lacks \"" << c.expected << "\"");
      BOOST_TEST(reply.header("x-request-id").starts_with("req_"));
      if (c.status == 405) {
        BOOST_TEST(!reply.header("allow").empty());
      }
    }
  }
  const auto after = account_show(account.id);
  BOOST_TEST(after.at("balance").as_int64() == 50);
  BOOST_TEST(after.at("charged").as_int64() == 0);
  for (const char* status : {"queued", "running", "succeeded", "failed"}) {
    BOOST_TEST(after.at("tasks").at(status).as_int64() == 0);
  }
  // The server is still healthy and answers a good request after all that.
  BOOST_TEST(client.create(account.key, create_body("")).status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(malformed_http_is_answered_400_and_closed) {
  server_process server;
  const std::string reply = server.client().raw("GARBAGE\r\n\r\n");
  BOOST_TEST(reply.starts_with("HTTP/1.1 400"), reply);
  const std::string big_header = server.client().raw(
      "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  BOOST_TEST(big_header.starts_with("HTTP/1.1 431"), big_header.substr(0, 200));
  BOOST_TEST(server.client().request("GET", "/healthz").status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
