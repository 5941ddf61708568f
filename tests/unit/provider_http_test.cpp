// What every provider adapter shares (server/engines/providers/provider_http.hpp, remote_engine.hpp):
// reading Retry-After, telling retryable answers apart, the job remembered on a task, the circuit, the
// size tables, and reading an image's size from its header.

#include "core/hmac.hpp"
#include "server/engines/image_decoder.hpp"
#include "server/engines/picture.hpp"
#include "server/engines/providers/adapters.hpp"
#include "server/engines/providers/remote_engine.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso::engines;
using namespace std::chrono_literals;

namespace {

http_answer answer(unsigned status, std::vector<std::pair<std::string, std::string>> headers = {}) {
  return http_answer{.status = status, .location = {}, .body = {}, .headers = std::move(headers)};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(provider_http)

BOOST_AUTO_TEST_CASE(retry_after_reads_milliseconds_then_seconds_then_a_date) {
  BOOST_TEST(!retry_after(answer(429)).has_value());
  BOOST_TEST(retry_after(answer(429, {{"Retry-After", "3"}})).value() == 3000ms);
  BOOST_TEST(retry_after(answer(429, {{"retry-after-ms", "250"}, {"Retry-After", "3"}})).value() == 250ms);
  BOOST_TEST(retry_after(answer(429, {{"Retry-After", "1.5"}})).value() == 1500ms);
  BOOST_TEST(retry_after(answer(503, {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}})).value() ==
             0ms);  // past
  BOOST_TEST(!retry_after(answer(503, {{"Retry-After", "soon"}})).has_value());
}

BOOST_AUTO_TEST_CASE(statuses_408_409_429_and_5xx_are_retried_unless_the_provider_says_otherwise) {
  for (const unsigned status : {408U, 409U, 429U, 500U, 502U, 503U, 504U}) {
    BOOST_TEST(retryable(answer(status)), status);
  }
  for (const unsigned status : {400U, 401U, 403U, 404U, 422U}) {
    BOOST_TEST(!retryable(answer(status)), status);
  }
  BOOST_TEST(!retryable(answer(503, {{"x-should-retry", "false"}})));
  BOOST_TEST(retryable(answer(400, {{"X-Should-Retry", "true"}})));
}

BOOST_AUTO_TEST_CASE(a_failure_answer_becomes_a_retry_or_a_final_failure_of_its_kind) {
  const provider_step busy = answer_failure(answer(429, {{"Retry-After", "7"}}), "fal", "slow down",
                                            failure_kind::invalid_input, 1s);
  BOOST_TEST((busy.what == provider_step::kind::retry));
  BOOST_TEST(busy.delay == 7000ms);
  BOOST_TEST(busy.message == "fal answered HTTP 429: slow down");
  BOOST_TEST(busy.rate_limited);  // paces the route; not a failure of its health
  BOOST_TEST(!answer_failure(answer(503), "fal", "", failure_kind::internal, 1s).rate_limited);
  const provider_step refused = answer_failure(answer(422), "fal", std::string(400, 'x') + "\nsecond line",
                                               failure_kind::invalid_input, 1s);
  BOOST_TEST((refused.what == provider_step::kind::failed));
  BOOST_TEST((refused.failure == failure_kind::invalid_input));
  BOOST_TEST(refused.message.size() < 330U);  // a provider's message is cut to one short line
}

BOOST_AUTO_TEST_CASE(policy_language_is_recognised) {
  for (const char* text : {"moderation_blocked", "flagged as sensitive (E005)", "content_policy_violation",
                           "OutputVideoSensitiveContentDetected.PolicyViolation", "NSFW"}) {
    BOOST_TEST(looks_like_policy(text), text);
  }
  BOOST_TEST(!looks_like_policy("CUDA out of memory"));
}

BOOST_AUTO_TEST_CASE(the_job_remembered_on_a_task_round_trips_and_refuses_garbage) {
  route_settings s;
  s.engine = "fal";
  s.model = "fal-ai/flux/dev";
  const std::string text = provider_job_text(2, s, R"({"status_url":"https://queue.fal.run/x"})");
  const auto back = read_provider_job(text);
  BOOST_TEST_REQUIRE(back.has_value());
  BOOST_TEST(back->route_index == 2U);
  BOOST_TEST(back->job == R"({"status_url":"https://queue.fal.run/x"})");
  BOOST_TEST(!read_provider_job("task_123").has_value());  // what task-api remembers
  BOOST_TEST(!read_provider_job(R"({"route":-1,"job":"x"})").has_value());
  BOOST_TEST(!read_provider_job(R"({"route":0})").has_value());
}

BOOST_AUTO_TEST_CASE(the_circuit_opens_after_repeated_failures_and_a_probe_closes_it) {
  circuit c;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < circuit::failures_to_open - 1; ++i) {
    c.failed(t0);
  }
  BOOST_TEST(c.allows(t0));
  c.failed(t0);
  BOOST_TEST((c.current(t0) == circuit::state::open));
  BOOST_TEST(!c.allows(t0 + 1s));
  const auto later = t0 + circuit::open_for + 1s;
  BOOST_TEST(c.allows(later));   // half-open: one probe
  BOOST_TEST(!c.allows(later));  // and only one
  c.failed(later);               // the probe failed: open again
  BOOST_TEST(!c.allows(later + 1s));
  const auto much_later = later + circuit::open_for + 1s;
  BOOST_TEST(c.allows(much_later));
  c.succeeded();
  BOOST_TEST((c.current(much_later) == circuit::state::closed));
  BOOST_TEST(c.allows(much_later));
}

BOOST_AUTO_TEST_CASE(an_open_circuit_says_when_it_lets_a_probe_through) {
  circuit c;
  const auto t0 = std::chrono::steady_clock::now();
  BOOST_TEST(c.opens_in(t0).count() == 0);
  for (int i = 0; i < circuit::failures_to_open; ++i) {
    c.failed(t0);
  }
  BOOST_TEST(c.opens_in(t0 + 10s) == std::chrono::milliseconds(circuit::open_for - 10s));
  BOOST_TEST(c.opens_in(t0 + circuit::open_for).count() == 0);
}

BOOST_AUTO_TEST_CASE(a_429_paces_the_route_and_never_opens_its_circuit) {
  circuit c;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 * circuit::failures_to_open; ++i) {
    c.rate_limited(t0, 2s);
  }
  BOOST_TEST((c.current(t0) == circuit::state::closed));
  BOOST_TEST(c.paced_for(t0 + 500ms) == 1500ms);
  BOOST_TEST(c.paced_for(t0 + 2s).count() == 0);
  c.rate_limited(t0, 1s);  // a shorter Retry-After does not shorten the pause
  BOOST_TEST(c.paced_for(t0) == 2000ms);
  // A half-open probe answered 429: the provider is up; the circuit closes instead of sticking half-open.
  for (int i = 0; i < circuit::failures_to_open; ++i) {
    c.failed(t0);
  }
  const auto later = t0 + circuit::open_for + 1s;
  BOOST_TEST(c.allows(later));
  c.rate_limited(later, 1s);
  BOOST_TEST((c.current(later) == circuit::state::closed));
}

BOOST_AUTO_TEST_CASE(sizes_follow_the_ratio) {
  BOOST_TEST((size_for_ratio("16:9", 1024, 64) == std::pair{1024, 576}));
  BOOST_TEST((size_for_ratio("9:16", 1024, 64) == std::pair{576, 1024}));
  BOOST_TEST((size_for_ratio("1:1", 512, 64) == std::pair{512, 512}));
  BOOST_TEST((size_for_ratio("21:9", 1024, 16) == std::pair{1024, 432}));
}

BOOST_AUTO_TEST_CASE(image_dimensions_come_from_the_header_alone) {
  rgb_image image;
  image.width = 37;
  image.height = 11;
  image.pixels.assign(37 * 11 * 3, 128);
  const std::string png = encode_png(image);
  BOOST_TEST((image_dimensions(png) == std::pair{37, 11}));
  BOOST_TEST(!image_dimensions(png.substr(0, 20)).has_value());
  BOOST_TEST(!image_dimensions("GIF89a....").has_value());
  BOOST_TEST(
      !image_dimensions(std::string("\xFF\xD8\xFF\xE0\x00\x10", 6)).has_value());  // JPEG without a frame
}

BOOST_AUTO_TEST_CASE(a_kling_token_is_an_hs256_jwt_of_the_access_key_signed_with_the_secret) {
  const std::string token = kling_jwt("AK", "SK", 1'700'000'000);
  const auto first = token.find('.');
  const auto second = token.find('.', first + 1);
  BOOST_TEST_REQUIRE(second != std::string::npos);
  BOOST_TEST(token.substr(0, first) == base64url(R"({"alg":"HS256","typ":"JWT"})"));
  BOOST_TEST(token.substr(first + 1, second - first - 1) ==
             base64url(R"({"iss":"AK","exp":1700001800,"nbf":1699999995})"));
  BOOST_TEST(token.substr(second + 1) == base64url(gesso::hmac_sha256("SK", token.substr(0, second))));
  BOOST_TEST(token.find_first_of("+/=") == std::string::npos);  // the URL alphabet, unpadded
  BOOST_TEST(base64url("\xfb\xff") == "-_8");
}

BOOST_AUTO_TEST_SUITE_END()
