#include "core/client_error.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(client_error)

BOOST_AUTO_TEST_CASE(scrubs_addresses_urls_hosts_and_keys) {
  struct example {
    std::string stored;
    std::string shown;
  };
  const example cases[] = {
      {"image_urls[0] could not be fetched: refused to connect to cdn.example.com: it resolves to 10.1.2.3 "
       "(a private address)",
       "image_urls[0] could not be fetched: refused to connect to <host>: it resolves to <address> (a "
       "private "
       "address)"},
      {"no answer from 192.168.0.7:8188 in time", "no answer from <address> in time"},
      {"no answer from comfyui.gpu.svc.cluster.local:8188", "no answer from <address>"},
      {"connect to [fd00::1]:443 failed", "connect to <address> failed"},
      {"fe80::1 refused", "<address> refused"},
      {"could not read https://internal.example/x?sig=abc, retry", "could not read <url>, retry"},
      {"Incorrect API key provided: sk-proj-abc***wxyz.", "Incorrect API key provided: <redacted>."},
      {"header Authorization: Bearer eyJhbGciOi was refused",
       "header Authorization: Bearer <redacted> was refused"},
      {"token 9f8e7d6c5b4a39281706f5e4d3c2b1a0 expired", "token <redacted> expired"},
      {"localhost:9000 said no", "<address> said no"},
      {"first line\n  at frame 1\n  at frame 2", "first line"},
      {"the prompt was flagged: violence (score 0.93)", "the prompt was flagged: violence (score 0.93)"},
      {"image_urls[1] is not a usable image: 8x8 is below 16x16",
       "image_urls[1] is not a usable image: 8x8 is "
       "below 16x16"},
  };
  for (const auto& c : cases) {
    BOOST_TEST(scrub_message(c.stored) == c.shown, c.stored);
  }
}

BOOST_AUTO_TEST_CASE(cuts_long_messages_on_a_character_boundary) {
  std::string stored;
  for (int i = 0; i < 200; ++i) {
    stored += "é";  // two bytes each
  }
  stored = "x" + stored;  // odd: byte 300 falls inside a character
  const std::string shown = scrub_message(stored);
  BOOST_TEST(shown.size() <= 300 + std::string("…").size());
  BOOST_TEST(shown.ends_with("…"));
  BOOST_TEST(shown.substr(0, shown.size() - 3).size() % 2 == 1);  // "x" and whole "é"s
}

BOOST_AUTO_TEST_CASE(shows_the_reason_only_for_kinds_the_client_can_act_on) {
  BOOST_TEST(client_failure_message("content_policy", "replicate refused: NSFW content detected") ==
             "replicate refused: NSFW content detected");
  BOOST_TEST(client_failure_message("invalid_input", "image_urls[0] answered HTTP 404") ==
             "image_urls[0] answered HTTP 404");
  BOOST_TEST(client_failure_message("canceled", "canceled by the client") == "canceled by the client");
  const std::string internal = "the replicate route at 10.0.0.9:8080 answered HTTP 500: Traceback";
  for (const auto kind : {"provider_unavailable", "deadline", "internal"}) {
    const std::string shown = client_failure_message(kind, internal);
    BOOST_TEST(shown.find("10.0.0.9") == std::string::npos);
    BOOST_TEST(shown.find("replicate") == std::string::npos);
    BOOST_TEST(shown.find("refunded") != std::string::npos);
  }
  BOOST_TEST(client_failure_message(std::nullopt, internal) == client_failure_message("internal", ""));
  BOOST_TEST(client_failure_message("invalid_input", "") == "the task's input was refused");
}

BOOST_AUTO_TEST_SUITE_END()
