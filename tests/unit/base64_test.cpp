// core/base64: decoding and encoding.

#include "core/base64.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(base64)

BOOST_AUTO_TEST_CASE(round_trips_and_rejects_bad_input) {
  using namespace gesso;
  BOOST_TEST(encode_base64("") == "");
  BOOST_TEST(encode_base64("f") == "Zg==");
  BOOST_TEST(encode_base64("fo") == "Zm8=");
  BOOST_TEST(encode_base64("foo") == "Zm9v");
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    BOOST_TEST(decode_base64(encode_base64(s)).value() == s);
  }
  BOOST_TEST(decode_base64("Zm9v").value() == "foo");
  BOOST_TEST(decode_base64("Zg").value() == "f");  // unpadded
  BOOST_TEST(!decode_base64("Z").has_value());
  BOOST_TEST(!decode_base64("Zm9v!").has_value());
  BOOST_TEST(!decode_base64("Zm 9v").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
