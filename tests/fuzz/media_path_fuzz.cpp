// Fuzzes what a /media request is checked with: the object key and the signature. A key that
// passes must not be able to leave the media directory; a signature must never verify for an
// object, expiry or secret other than the one it was made for.

#include "core/media_url.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <string>

using gesso::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gesso::fuzz::as_text(data, size);
  if (gesso::is_media_object_key(text)) {
    require(!text.empty() && text.front() != '/', "an object key is relative");
    require(text != ".." && !text.starts_with("../") && !text.ends_with("/..") &&
                text.find("/../") == std::string_view::npos,
            "an object key never climbs out of the media directory");
    require(text.find('\\') == std::string_view::npos && text.find('%') == std::string_view::npos,
            "an object key has no escapes or backslashes");
  }
  // Whatever the fuzzer sends as a signature, it verifies only if it is the real one.
  constexpr std::string_view secret = "fuzz-secret-0123456789abcdef";
  const std::string object = "images/task_fuzz.png";
  const std::string path = gesso::sign_media_path(secret, object, 2000000000);
  const std::string real = path.substr(path.rfind("sig=") + 4);
  if (gesso::verify_media_signature(secret, object, 2000000000, text, 1000000000)) {
    require(text == real, "only the real signature verifies");
  }
  require(!gesso::verify_media_signature(secret, object, 2000000000, real, 2000000001),
          "an expired signature never verifies");
  require(!gesso::verify_media_signature(secret, object, 2000000001, real, 1000000000),
          "a signature is bound to its expiry");
  if (text != object) {
    require(!gesso::verify_media_signature(secret, text, 2000000000, real, 1000000000),
            "a signature is bound to its object");
  }
  return 0;
}
