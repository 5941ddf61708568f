#include "core/byte_range.hpp"
#include "core/media_url.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(media)

BOOST_AUTO_TEST_CASE(object_keys_cannot_escape_the_store) {
  BOOST_TEST(is_media_object_key("2026/11/21/task_01abc.png"));
  BOOST_TEST(is_media_object_key("a.mp4"));
  for (const char* bad : {"", "../etc/passwd", "a/../b", "a//b", "/abs", "a/", "./a", "A.png", "a b", "a\\b",
                          "%2e%2e/x", "a?b"}) {
    BOOST_TEST(!is_media_object_key(bad), bad);
  }
  BOOST_TEST(!is_media_object_key(std::string(201, 'a')));
  BOOST_TEST(!is_media_object_key(std::string("a\0b", 3)));
}

BOOST_AUTO_TEST_CASE(signatures_bind_object_expiry_and_secret) {
  const std::string path = sign_media_path("secret", "a/b.png", 2000);
  BOOST_TEST(path.starts_with("/media/a/b.png?expires=2000&sig="));
  const std::string sig = path.substr(path.find("sig=") + 4);
  BOOST_TEST(sig.size() == 64U);
  BOOST_TEST(verify_media_signature("secret", "a/b.png", 2000, sig, 1999));
  BOOST_TEST(verify_media_signature("secret", "a/b.png", 2000, sig, 2000));
  BOOST_TEST(!verify_media_signature("secret", "a/b.png", 2000, sig, 2001));  // expired
  BOOST_TEST(!verify_media_signature("other", "a/b.png", 2000, sig, 1000));   // wrong secret
  BOOST_TEST(!verify_media_signature("secret", "a/c.png", 2000, sig, 1000));  // another object
  BOOST_TEST(!verify_media_signature("secret", "a/b.png", 2001, sig, 1000));  // extended expiry
  std::string tampered = sig;
  tampered[0] = tampered[0] == 'a' ? 'b' : 'a';
  BOOST_TEST(!verify_media_signature("secret", "a/b.png", 2000, tampered, 1000));
  BOOST_TEST(!verify_media_signature("secret", "a/b.png", 2000, "", 1000));
}

BOOST_AUTO_TEST_CASE(range_headers) {
  using k = range_request::kind;
  struct c {
    const char* header;
    k outcome;
    std::uint64_t first, last;
  };
  const c cases[] = {
      {"bytes=0-99", k::partial, 0, 99},
      {"bytes=100-", k::partial, 100, 999},
      {"bytes=-100", k::partial, 900, 999},
      {"bytes=-5000", k::partial, 0, 999},
      {"bytes=990-5000", k::partial, 990, 999},
      {"bytes=1000-", k::unsatisfiable, 0, 0},
      {"bytes=-0", k::unsatisfiable, 0, 0},
      {"bytes=5-4", k::whole, 0, 0},
      {"bytes=0-1,5-6", k::whole, 0, 0},
      {"items=0-1", k::whole, 0, 0},
      {"bytes=a-b", k::whole, 0, 0},
      {"bytes=-", k::whole, 0, 0},
      {"bytes=99999999999999999999-", k::whole, 0, 0},
      {"", k::whole, 0, 0},
  };
  for (const auto& x : cases) {
    const auto r = parse_range(x.header, 1000);
    BOOST_TEST((r.outcome == x.outcome), x.header);
    if (x.outcome == k::partial) {
      BOOST_TEST(r.range.first == x.first, x.header);
      BOOST_TEST(r.range.last == x.last, x.header);
    }
  }
  BOOST_TEST((parse_range("bytes=0-", 0).outcome == k::unsatisfiable));
}

BOOST_AUTO_TEST_SUITE_END()
