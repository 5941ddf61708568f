#pragma once
// The declarative parts of the http-task engine (docs/engines.md#http-task): request templates whose
// only substitution is a {{placeholder}}, and reading a provider's answer by JSON Pointer (RFC 6901,
// Boost.JSON's find_pointer). Pure functions: the catalog checks a template once, when it loads, and a
// worker renders it per request; both are fuzzed (tests/fuzz).
//
// A placeholder is {{name}} or {{name:N}} (N an input image's index). A JSON string value that is
// exactly one placeholder becomes the value itself (a number stays a number, {{image_urls}} an array),
// and a member or array element whose placeholder has no value (an image the task does not have) is
// left out. Inside a longer string a placeholder becomes its text.

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::engines::http_task {

/// What a template is rendered with.
struct template_values {
  /// prompt, aspect_ratio, seed, duration, model, task_id; the route's maps; id and captured values
  std::map<std::string, boost::json::value, std::less<>> named;
  std::vector<std::string> image_urls;       ///< as the client gave them
  std::vector<std::string> image_base64;     ///< the fetched bytes, base64
  std::vector<std::string> image_data_urls;  ///< data:<mime>;base64,…
};

/// The placeholders with an image index ({{image_url:0}}), and the two lists ({{image_urls}},
/// {{image_data_urls}}), which only a whole value may be.
bool is_indexed_placeholder(std::string_view name);
bool is_list_placeholder(std::string_view name);

/// Checks a JSON template (a body) or a text template (a path, a header): "" when every placeholder is
/// well formed and among `names` (plus the image ones), otherwise the problem, naming `where` and, for a
/// JSON template, the member (`where` + "/prompt").
std::string check_template(const boost::json::value& json_template, const std::set<std::string>& names,
                           const std::string& where);
std::string check_text_template(std::string_view text, const std::set<std::string>& names,
                                const std::string& where);
/// The placeholder names a JSON template uses (to know whether it needs the images' bytes).
std::set<std::string> placeholders_of(const boost::json::value& json_template);

/// Renders a checked template. A placeholder without a value renders as nothing (see above).
boost::json::value render(const boost::json::value& json_template, const template_values& values);
/// Renders a checked text template; with `url_encode`, each value is percent-encoded (a path or query).
std::string render_text(std::string_view text, const template_values& values, bool url_encode);

/// A JSON Pointer's syntax (RFC 6901): "" or "/"-separated tokens, "~" only as "~0" or "~1".
bool valid_pointer(std::string_view pointer);
/// What `pointer` finds in `answer`, or nothing.
const boost::json::value* find(const boost::json::value& answer, std::string_view pointer);
/// A string or number as text; nothing for other kinds.
std::optional<std::string> text_of(const boost::json::value& v);

}  // namespace gesso::engines::http_task
