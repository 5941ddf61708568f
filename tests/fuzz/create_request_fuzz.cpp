// Fuzzes the create body: JSON parsing and every validation rule, against the builtin catalog.

#include "core/catalog.hpp"
#include "core/create_request.hpp"
#include "core/utf8.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using gesso::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gesso::catalog models = gesso::catalog::builtin();
  const auto body = gesso::fuzz::as_text(data, size);
  const auto parsed = gesso::parse_create_request(body, models);
  if (!parsed) {
    const auto code = parsed.error().code;
    require(code == gesso::errc::invalid_json || code == gesso::errc::invalid_field ||
                code == gesso::errc::unknown_model,
            "a refused body is invalid_json, invalid_field or unknown_model");
    require(!parsed.error().message.empty(), "a refusal names the problem");
    return 0;
  }
  require(parsed->model != nullptr, "an accepted body names a model");
  require(!gesso::utf8::first_invalid_byte(parsed->prompt), "an accepted prompt is UTF-8");
  require(!parsed->aspect_ratio.empty(), "an accepted body has an aspect ratio");
  for (const auto& url : parsed->image_urls) {
    require(gesso::check_image_url(url).empty(), "every accepted image URL passes the URL check");
  }
  return 0;
}
