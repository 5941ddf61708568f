// Request framing the frontend enforces beyond the Beast parser (server/api/http_framing.hpp), and the
// memory budget that request bodies are reserved from.

#include "server/api/http_framing.hpp"
#include "server/api/memory_budget.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;
using namespace gesso::api;

namespace {

http::request_header<> header(unsigned version, std::vector<std::pair<std::string, std::string>> fields) {
  http::request_header<> h;
  h.version(version);
  h.method(http::verb::post);
  h.target("/api/v1/tasks/create");
  for (const auto& [name, value] : fields) {
    h.insert(name, value);
  }
  return h;
}

std::optional<errc> refusal_of(unsigned version, std::vector<std::pair<std::string, std::string>> fields) {
  const auto p = framing_problem(header(version, std::move(fields)));
  return p ? std::optional<errc>(p->code) : std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(http_framing)

BOOST_AUTO_TEST_CASE(only_a_single_final_chunked_coding_is_accepted) {
  const std::pair<std::string, std::string> host{"Host", "a"};
  BOOST_TEST(!refusal_of(11, {host, {"Transfer-Encoding", "chunked"}}));
  BOOST_TEST(!refusal_of(11, {host, {"Transfer-Encoding", " Chunked "}}));
  BOOST_TEST(!refusal_of(11, {host, {"Content-Length", "5"}}));
  for (const std::string bad :
       {"xchunked", "chunked, gzip", "chunked, chunked", "identity", "", "chunked,", "gzip", "chunked;x=1"}) {
    BOOST_TEST((refusal_of(11, {host, {"Transfer-Encoding", bad}}) == errc::malformed_request), bad);
  }
  // Understood framing, but a coding the server does not implement.
  BOOST_TEST((refusal_of(11, {host, {"Transfer-Encoding", "gzip, chunked"}}) == errc::not_implemented));
  BOOST_TEST((refusal_of(11, {host, {"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}}) ==
              errc::not_implemented));
  // Chunked on two lines is chunked twice.
  BOOST_TEST((refusal_of(11, {host, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}) ==
              errc::malformed_request));
  BOOST_TEST((refusal_of(11, {host, {"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}) ==
              errc::malformed_request));
  BOOST_TEST((refusal_of(10, {{"Transfer-Encoding", "chunked"}}) == errc::malformed_request));
}

BOOST_AUTO_TEST_CASE(http_1_1_needs_exactly_one_host) {
  BOOST_TEST((refusal_of(11, {}) == errc::malformed_request));
  BOOST_TEST((refusal_of(11, {{"Host", "a"}, {"Host", "b"}}) == errc::malformed_request));
  BOOST_TEST(!refusal_of(11, {{"Host", "a"}}));
  BOOST_TEST(!refusal_of(10, {}));
}

BOOST_AUTO_TEST_CASE(absolute_form_targets_become_their_path_and_query) {
  BOOST_TEST(origin_form("http://gesso.example:8080/api/v1/tasks/x?y=1") == "/api/v1/tasks/x?y=1");
  BOOST_TEST(origin_form("HTTPS://gesso.example/healthz") == "/healthz");
  BOOST_TEST(origin_form("http://gesso.example") == "/");
  BOOST_TEST(origin_form("/healthz") == "/healthz");
  BOOST_TEST(origin_form("*") == "*");
}

BOOST_AUTO_TEST_CASE(the_memory_budget_refuses_what_does_not_fit_and_returns_what_is_released) {
  memory_budget budget(100);
  auto a = budget.try_reserve(60);
  BOOST_TEST(a.has_value());
  BOOST_TEST(!budget.try_reserve(41).has_value());
  {
    auto b = budget.try_reserve(40);
    BOOST_TEST(b.has_value());
    BOOST_TEST(budget.in_use() == 100U);
    auto moved = std::move(*b);
  }
  BOOST_TEST(budget.in_use() == 60U);
  a.reset();
  BOOST_TEST(budget.in_use() == 0U);
  BOOST_TEST(!budget.try_reserve(101).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
