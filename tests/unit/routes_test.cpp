// The public listener's routing table (server/api/routes.hpp), the bearer key's parsing
// (server/api/request_headers.hpp) and the one mapping from errc to HTTP status (api_response.hpp).

#include "server/api/routes.hpp"
#include "server/api/api_response.hpp"
#include "server/api/openapi_document.hpp"
#include "server/api/request_headers.hpp"

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>

using namespace gesso;
using namespace gesso::api;

namespace {

std::optional<endpoint> endpoint_of(std::string_view target) {
  const matched_route m = match_route(target);
  return m.entry ? std::optional(m.entry->id) : std::nullopt;
}

request with_authorization(std::string value) {
  request req;
  req.set(http::field::authorization, value);
  return req;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(routes)

BOOST_AUTO_TEST_CASE(targets_match_their_endpoint_and_nothing_else) {
  BOOST_TEST((endpoint_of("/api/v1/tasks/create") == endpoint::create));
  BOOST_TEST((endpoint_of("/api/v1/tasks/create?x=1") == endpoint::create));
  BOOST_TEST((endpoint_of("/api/v1/tasks/task_01abc") == endpoint::query));
  BOOST_TEST(match_route("/api/v1/tasks/task_01abc?x").param == "task_01abc");
  BOOST_TEST((endpoint_of("/media/2026/11/22/t.png?sig=1") == endpoint::media));
  BOOST_TEST(match_route("/media/2026/11/22/t.png?sig=1").param == "2026/11/22/t.png");
  BOOST_TEST((endpoint_of("/api/v1/tasks/task_01abc/cancel") == endpoint::cancel));
  BOOST_TEST(match_route("/api/v1/tasks/task_01abc/cancel?x").param == "task_01abc");
  BOOST_TEST((endpoint_of("/api/v1/tasks") == endpoint::list));
  BOOST_TEST((endpoint_of("/api/v1/tasks?limit=5") == endpoint::list));
  BOOST_TEST((endpoint_of("/api/v1/account") == endpoint::account));
  BOOST_TEST((endpoint_of("/api/v1/account/usage?group_by=day") == endpoint::usage));
  BOOST_TEST((endpoint_of("/healthz") == endpoint::healthz));
  BOOST_TEST((endpoint_of("/readyz") == endpoint::readyz));
  for (const std::string_view none :
       {"/", "/api/v1/tasks/", "/api/v1/tasks/a/b", "/api/v1/tasks//cancel", "/api/v1/tasks/a/cancel/",
        "/api/v1/tasks/a/b/cancel", "/api/v1/account/", "/api/v1/account/x", "/metrics", "/healthz/",
        "/api/v1/task/x", "", "*"}) {
    BOOST_TEST(!endpoint_of(none), none);
  }
}

BOOST_AUTO_TEST_CASE(refusals_come_from_the_table) {
  request_context rc;
  rc.request_id = "req_test";
  BOOST_TEST(!route_refusal(match_route("/api/v1/tasks/create"), http::verb::post, &rc));
  BOOST_TEST(rc.route == "create");
  const auto wrong = route_refusal(match_route("/api/v1/tasks/create"), http::verb::get, &rc);
  BOOST_TEST_REQUIRE(wrong.has_value());
  BOOST_TEST(wrong->result_int() == 405U);
  BOOST_TEST((*wrong)[http::field::allow] == "POST");
  const auto probe = route_refusal(match_route("/healthz"), http::verb::delete_, &rc);
  BOOST_TEST_REQUIRE(probe.has_value());
  BOOST_TEST((*probe)[http::field::allow] == "GET, HEAD");
  BOOST_TEST(!route_refusal(match_route("/media/a.png"), http::verb::head, &rc));
  request_context other;
  const auto missing = route_refusal(match_route("/nowhere"), http::verb::get, &other);
  BOOST_TEST_REQUIRE(missing.has_value());
  BOOST_TEST(missing->result_int() == 404U);
  BOOST_TEST(other.route == "other");
}

BOOST_AUTO_TEST_CASE(bearer_keys_are_read_for_shape_only) {
  const std::string key = "sk-" + std::string(43, 'a');
  BOOST_TEST(bearer_key(with_authorization("Bearer " + key)).value() == key);
  BOOST_TEST(bearer_key(with_authorization("bearer   " + key + "  ")).value() == key);
  BOOST_TEST(bearer_key(request{}).error().message.find("missing Authorization") == 0);
  BOOST_TEST(bearer_key(with_authorization("Basic " + key)).error().message.find("Bearer scheme") !=
             std::string::npos);
  for (const std::string bad :
       {"Bearer", "Bearer ", "Bearer sk-", "Bearer pk-abc", "Bearer sk-abc def", "Bearer sk-ab\"c"}) {
    const auto r = bearer_key(with_authorization(bad));
    BOOST_TEST_REQUIRE(!r.has_value(), bad);
    BOOST_TEST((r.error().code == errc::unauthorized));
  }
}

BOOST_AUTO_TEST_CASE(json_content_types_are_recognised) {
  request req;
  BOOST_TEST(!is_json_content(req));
  for (const std::string type : {"application/json", "Application/JSON", "application/json; charset=utf-8"}) {
    req.set(http::field::content_type, type);
    BOOST_TEST(is_json_content(req), type);
  }
  req.set(http::field::content_type, "text/json");
  BOOST_TEST(!is_json_content(req));
}

BOOST_AUTO_TEST_CASE(every_error_has_its_status) {
  const std::vector<std::pair<errc, unsigned>> expected = {{errc::malformed_request, 400},
                                                           {errc::invalid_json, 400},
                                                           {errc::invalid_field, 400},
                                                           {errc::unknown_model, 400},
                                                           {errc::unauthorized, 401},
                                                           {errc::insufficient_credits, 402},
                                                           {errc::forbidden, 403},
                                                           {errc::not_found, 404},
                                                           {errc::method_not_allowed, 405},
                                                           {errc::payload_too_large, 413},
                                                           {errc::unsupported_media_type, 415},
                                                           {errc::range_not_satisfiable, 416},
                                                           {errc::header_too_large, 431},
                                                           {errc::unavailable, 503},
                                                           {errc::not_implemented, 501}};
  for (const auto& [code, status] : expected) {
    BOOST_TEST(static_cast<unsigned>(status_of(code)) == status, make_error_code(code).message());
  }
  const response auth = problem_response({errc::unauthorized, "no"}, "req_1");
  BOOST_TEST(auth.body().find("\"code\":401") != std::string::npos);
  BOOST_TEST(auth[http::field::www_authenticate] == "Bearer");
  const response busy = problem_response({errc::unavailable, "busy"}, "req_1");
  BOOST_TEST(busy[http::field::retry_after] == "1");
  BOOST_TEST(busy.body().find("\"code\":0") != std::string::npos);
}

// docs/openapi.yaml (compiled in, served at /api/v1/openapi.json) describes every route of the table with
// its methods (HEAD is answered wherever the table pairs it with GET), and nothing the table lacks.
BOOST_AUTO_TEST_CASE(every_route_is_in_the_openapi_document_and_nothing_else) {
  const boost::json::value document = boost::json::parse(openapi_document());
  const boost::json::object& paths = document.at("paths").as_object();
  for (const route_entry& r : route_table()) {
    const auto* item = paths.if_contains(r.path);
    BOOST_TEST_REQUIRE(item != nullptr, r.path << " is not in docs/openapi.yaml");
    for (const http::verb v : r.methods) {
      if (v == http::verb::head) {
        continue;
      }
      std::string method(http::to_string(v));
      std::ranges::transform(method, method.begin(), [](unsigned char c) { return std::tolower(c); });
      BOOST_TEST(item->as_object().contains(method),
                 r.path << " " << method << " is not in docs/openapi.yaml");
    }
  }
  request_context rc;
  const auto post = route_refusal(match_route("/api/v1/openapi.json"), http::verb::post, &rc);
  BOOST_TEST_REQUIRE(post.has_value());
  BOOST_TEST(post->result_int() == 405U);
  BOOST_TEST((*post)[http::field::allow] == "GET, HEAD");
  BOOST_TEST(!route_refusal(match_route("/api/v1/openapi.json"), http::verb::head, &rc));
  for (const auto& [path, item] : paths) {
    std::string sample(path);
    for (auto open = sample.find('{'); open != std::string::npos; open = sample.find('{')) {
      sample.replace(open, sample.find('}', open) - open + 1, "x");
    }
    const matched_route m = match_route(sample);
    BOOST_TEST_REQUIRE(m.entry != nullptr, path << " of docs/openapi.yaml is not a route");
    BOOST_TEST(m.entry->path == std::string_view(path), path);
    for (const auto& [method, operation] : item.as_object()) {
      (void)operation;
      const auto verb = http::string_to_verb(boost::to_upper_copy(std::string(method)));
      BOOST_TEST((verb == m.entry->methods[0] || verb == m.entry->methods[1]), path << " " << method);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
