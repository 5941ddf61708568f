#include "core/utf8.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(utf8)

BOOST_AUTO_TEST_CASE(accepts_well_formed_text) {
  BOOST_TEST(!gesso::utf8::first_invalid_byte("").has_value());
  BOOST_TEST(!gesso::utf8::first_invalid_byte("plain ascii").has_value());
  BOOST_TEST(
      !gesso::utf8::first_invalid_byte("caf\xc3\xa9 \xe4\xbb\xbb\xe5\x8a\xa1 \xf0\x9f\xa6\x8a").has_value());
  BOOST_TEST(!gesso::utf8::first_invalid_byte("\xf4\x8f\xbf\xbf").has_value());  // U+10FFFF
}

BOOST_AUTO_TEST_CASE(rejects_each_kind_of_malformed_sequence) {
  struct bad {
    std::string text;
    std::size_t offset;
  };
  const bad cases[] = {
      {"ab\x80", 2},            // lone continuation byte
      {"\xc0\xaf", 0},          // overlong two-byte
      {"\xe0\x80\xaf", 0},      // overlong three-byte
      {"\xf0\x80\x80\xaf", 0},  // overlong four-byte
      {"x\xed\xa0\x80", 1},     // UTF-16 surrogate
      {"\xf4\x90\x80\x80", 0},  // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},  // invalid lead byte
      {"\xff", 0},              // never valid
      {"abc\xe4\xbb", 3},       // truncated at the end
      {"\xe4\x41\x41", 0},      // continuation missing
  };
  for (const auto& c : cases) {
    const auto r = gesso::utf8::first_invalid_byte(c.text);
    BOOST_TEST_REQUIRE(r.has_value());
    BOOST_TEST(*r == c.offset);
  }
}

BOOST_AUTO_TEST_CASE(counts_code_points_not_bytes) {
  BOOST_TEST(gesso::utf8::count_code_points("abc") == 3U);
  BOOST_TEST(gesso::utf8::count_code_points("\xe4\xbb\xbb\xe5\x8a\xa1") == 2U);
  BOOST_TEST(gesso::utf8::count_code_points("\xf0\x9f\xa6\x8a!") == 2U);
}

BOOST_AUTO_TEST_CASE(trims_unicode_white_space_only_at_the_ends) {
  BOOST_TEST(gesso::utf8::trim_space("  a b \n\t") == "a b");
  BOOST_TEST(gesso::utf8::trim_space("\xe3\x80\x80\xe7\x8c\xab\xe3\x80\x80") ==
             "\xe7\x8c\xab");                                       // U+3000 around
  BOOST_TEST(gesso::utf8::trim_space("\xc2\xa0x\xc2\xa0") == "x");  // U+00A0
  BOOST_TEST(gesso::utf8::trim_space(" \xe3\x80\x80 ").empty());
  BOOST_TEST(gesso::utf8::trim_space("\xe2\x80\x8b") == "\xe2\x80\x8b");  // U+200B is not White_Space
}

BOOST_AUTO_TEST_SUITE_END()
