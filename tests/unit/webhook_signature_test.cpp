#include "core/webhook_signature.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(webhook_signature)

// The example of the Standard Webhooks specification (github.com/standard-webhooks,
// spec/standard-webhooks.md).
BOOST_AUTO_TEST_CASE(signs_as_the_standard_webhooks_example) {
  const auto header =
      gesso::webhook_signature({"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
                               "1614265330", R"({"test": 2432232314})");
  BOOST_TEST(header.value_or("") == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

BOOST_AUTO_TEST_CASE(signs_with_every_secret_and_refuses_malformed_ones) {
  const std::string a = new_webhook_secret();
  const std::string b = new_webhook_secret();
  BOOST_TEST(a.starts_with("whsec_"));
  BOOST_TEST(a != b);
  const auto both = gesso::webhook_signature({a, b}, "msg_1", "1", "{}");
  const auto first = gesso::webhook_signature({a}, "msg_1", "1", "{}");
  const auto second = gesso::webhook_signature({b}, "msg_1", "1", "{}");
  BOOST_TEST(both.value_or("") == first.value_or("") + " " + second.value_or(""));
  BOOST_TEST(!gesso::webhook_signature({"sk-not-a-secret"}, "msg_1", "1", "{}"));
  BOOST_TEST(!gesso::webhook_signature({"whsec_!!!"}, "msg_1", "1", "{}"));
  BOOST_TEST(gesso::webhook_signature({a}, "msg_1", "1", "{}").value_or("") !=
             gesso::webhook_signature({a}, "msg_2", "1", "{}").value_or(""));
}

BOOST_AUTO_TEST_SUITE_END()
