// Fuzzes the http-task template checker and renderer (docs/engines.md#http-task). The input is a JSON
// template; one that passes the catalog's check must render, for any task, to JSON with no placeholder
// left, and every string in it must render as a path without fault.

#include "server/engines/providers/http_task_template.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json.hpp>

using gesso::fuzz::require;
namespace json = boost::json;
namespace ht = gesso::engines::http_task;

namespace {

void each_string(const json::value& v, const auto& visit) {
  if (const auto* o = v.if_object()) {
    for (const auto& [key, member] : *o) {
      each_string(member, visit);
    }
  } else if (const auto* a = v.if_array()) {
    for (const auto& item : *a) {
      each_string(item, visit);
    }
  } else if (const auto* s = v.if_string()) {
    visit(std::string_view(*s));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code ec;
  const json::value t = json::parse(gesso::fuzz::as_text(data, size), ec);
  if (ec) {
    return 0;
  }
  const std::set<std::string> names{"prompt", "seed", "duration", "aspect_ratio", "size", "id"};
  const bool good = ht::check_template(t, names, "body").empty();
  ht::template_values values;
  values.named["prompt"] = "a fox, \"quoted\" / and % encoded";
  values.named["seed"] = 7;
  values.named["duration"] = 5;
  values.named["aspect_ratio"] = "16:9";
  values.named["size"] = json::object{{"width", 1280}, {"height", 720}};
  values.named["id"] = "job/1?x=y";
  values.image_urls = {"https://example.com/a.png"};
  values.image_base64 = {"AAAA"};
  values.image_data_urls = {"data:image/png;base64,AAAA"};
  if (good) {
    const json::value out = ht::render(t, values);
    const std::string text = json::serialize(out);
    require(text.find("{{") == std::string::npos, "a checked template renders with no placeholder left");
    // Boost.JSON writes a number too large for a double as 1e99999, which it does not read back: only a
    // template that survives its own round trip is held to it.
    boost::system::error_code template_ec;
    static_cast<void>(json::parse(json::serialize(t), template_ec));
    if (!template_ec) {
      boost::system::error_code rendered_ec;
      static_cast<void>(json::parse(text, rendered_ec));
      require(!rendered_ec, "a rendered template is JSON");
    }
  }
  each_string(t, [&](std::string_view s) {
    if (ht::check_text_template(s, names, "path").empty()) {
      const std::string path = ht::render_text(s, values, true);
      require(path.find("{{") == std::string::npos, "a checked path renders with no placeholder left");
    }
    static_cast<void>(ht::valid_pointer(s));
    static_cast<void>(ht::find(t, ht::valid_pointer(s) ? s : std::string_view()));
  });
  return 0;
}
