#include "core/create_request.hpp"

#include "core/hmac.hpp"
#include "core/json_kind.hpp"
#include "core/utf8.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <array>

namespace gesso {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 5> accepted_fields = {"model_id", "prompt", "image_urls",
                                                             "aspect_ratio", "callback_url"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Field names in messages are quoted as JSON would; a name that is not printable ASCII is described.
std::string quoted_name(std::string_view name) {
  const bool printable = name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
                           return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
                         });
  if (!printable) {
    return json::serialize(json::string(name.substr(0, 64)));
  }
  std::string out(1, '"');  // appended, not "\"" + …: g++ 12 -O2 warns falsely on that (GCC PR 105329)
  out.append(name).push_back('"');
  return out;
}

std::string unknown_field_message(std::string_view name) {
  std::string message = "unknown field " + quoted_name(name);
  for (const auto field : accepted_fields) {
    if (edit_distance(name, field) <= 2) {
      message += " (did you mean \"" + std::string(field) + "\"?)";
      break;
    }
  }
  return message + "; accepted fields are model_id, prompt, image_urls, aspect_ratio, callback_url";
}

problem invalid(std::string message) {
  return fail(errc::invalid_field, std::move(message));
}

problem wrong_type(std::string_view field, std::string_view expected, const json::value& got) {
  return invalid("field \"" + std::string(field) + "\" must be " + std::string(expected) + ", not " +
                 std::string(json_kind_name(got)));
}

// ASCII case-insensitive: URL schemes and media types are (RFC 3986 §3.1, RFC 2045 §5.1).
bool starts_with_ignoring_case(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char p, char c) {
           return std::tolower(static_cast<unsigned char>(p)) == std::tolower(static_cast<unsigned char>(c));
         });
}

std::string check_data_url(std::string_view url) {
  static constexpr std::array<std::string_view, 3> types = {
      "data:image/png;base64,", "data:image/jpeg;base64,", "data:image/webp;base64,"};
  const auto type = std::find_if(types.begin(), types.end(),
                                 [&](std::string_view t) { return starts_with_ignoring_case(url, t); });
  if (type == types.end()) {
    return "is a data: URL that is not data:image/png, data:image/jpeg or data:image/webp with ;base64";
  }
  const std::string_view payload = url.substr(type->size());
  if (payload.empty()) {
    return "is a data: URL with no image data";
  }
  const std::size_t padding = payload.size() - payload.find_last_not_of('=') - 1;
  const std::string_view body = payload.substr(0, payload.size() - padding);
  const bool alphabet_ok = std::all_of(body.begin(), body.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/';
  });
  if (!alphabet_ok || padding > 2 || payload.size() % 4 != 0) {
    return "is a data: URL whose payload is not valid base64";
  }
  if (payload.size() / 4 * 3 - padding > create_limits::max_data_url_image_bytes) {
    return "is a data: URL larger than " + std::to_string(create_limits::max_data_url_image_bytes) +
           " bytes of image";
  }
  return {};
}

// Boost.JSON's memory for one parse, capped: a body of many small values (`[0,0,0,…]`) would otherwise
// take about 25 times its size in values and parser stack. A valid create needs about its own size
// (its strings), so the cap is the body's size plus a little; beyond it the parse is refused.
class capped_memory final : public boost::container::pmr::memory_resource {
 public:
  explicit capped_memory(std::size_t cap) : cap_(cap) {}

 private:
  // Plain new and delete: the default alignment covers every JSON type, and Boost.JSON does not pass
  // the same alignment to deallocate as to allocate (string_impl), which aligned delete would mismatch.
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      throw std::bad_alloc();
    }
    if (bytes > cap_ - used_) {
      throw std::bad_alloc();
    }
    used_ += bytes;
    return ::operator new(bytes);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t) override {
    used_ -= bytes;
    ::operator delete(p);
  }
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }

  std::size_t cap_;
  std::size_t used_ = 0;
};

// Parses `body` within its memory cap; throws std::bad_alloc when the document needs more.
json::value parse_capped(std::string_view body, capped_memory* memory, boost::system::error_code& ec,
                         std::size_t& consumed) {
  json::stream_parser parser{json::storage_ptr(memory)};  // the parser's own stack
  parser.reset(json::storage_ptr(memory));                // and the values it builds
  consumed = parser.write(body.data(), body.size(), ec);
  if (!ec) {
    parser.finish(ec);
  }
  return ec ? json::value() : parser.release();
}

// The length limit and the parse that every http(s) URL of a request goes through; nullopt with the
// reason in `why` when it fails.
std::optional<boost::urls::url_view> parse_remote_url(std::string_view url, std::string* why) {
  if (url.size() > create_limits::max_url_length) {
    *why = "is longer than " + std::to_string(create_limits::max_url_length) + " characters";
    return std::nullopt;
  }
  const auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    *why = "is not a valid absolute URL";
    return std::nullopt;
  }
  return *parsed;
}

// "points to ADDRESS, why" when the URL's host is written as an address `fetching` refuses; else "".
std::string address_refusal(const boost::urls::url_view& url, const fetch_policy& fetching) {
  if (const auto address = literal_address(url.encoded_host_address())) {
    if (const std::string why = fetching.refusal_for(address->view()); !why.empty()) {
      return "points to " + address->text() + ", " + why;
    }
  }
  return "";
}

}  // namespace

std::string request_fingerprint(const create_request& request) {
  json::array urls;
  for (const auto& url : request.image_urls) {
    urls.emplace_back(url);
  }
  return sha256_hex(json::serialize(
      json::array{request.model->id, request.prompt, request.aspect_ratio, urls,
                  request.callback_url ? json::value(*request.callback_url) : json::value(nullptr)}));
}

std::string check_callback_url(std::string_view url, const fetch_policy& fetching) {
  std::string why;
  const auto parsed = parse_remote_url(url, &why);
  if (!parsed) {
    return why;
  }
  if (!parsed->has_authority() || parsed->encoded_host().empty()) {
    return "has no host";
  }
  if (parsed->has_userinfo()) {
    return "must not carry a user name or password";
  }
  std::string host(parsed->encoded_host());
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const auto scheme = parsed->scheme_id();
  const bool allowed_http = std::find(fetching.webhook_http_hosts.begin(), fetching.webhook_http_hosts.end(),
                                      host) != fetching.webhook_http_hosts.end();
  if (scheme != boost::urls::scheme::https && !(scheme == boost::urls::scheme::http && allowed_http)) {
    return scheme == boost::urls::scheme::http
               ? "must use https (plain http only to hosts the operator allows)"
               : "must use https";
  }
  return address_refusal(*parsed, fetching);
}

bool is_data_url(std::string_view url) {
  return starts_with_ignoring_case(url, "data:");
}

std::string_view without_fragment(std::string_view url) {
  return is_data_url(url) ? url : url.substr(0, url.find('#'));
}

std::string check_image_url(std::string_view url, const fetch_policy& fetching) {
  if (is_data_url(url)) {
    return check_data_url(url);
  }
  std::string why;
  const auto parsed = parse_remote_url(url, &why);
  if (!parsed) {
    return why;
  }
  const auto scheme = parsed->scheme_id();
  if (scheme != boost::urls::scheme::http && scheme != boost::urls::scheme::https) {
    return "must use http or https (or be a data:image URL)";
  }
  if (!parsed->has_authority() || parsed->encoded_host().empty()) {
    return "has no host";
  }
  if (std::string refused = address_refusal(*parsed, fetching); !refused.empty()) {
    return refused + "; Gesso fetches only public addresses";
  }
  return {};
}

namespace {

// The body as a JSON object with only accepted fields, parsed within `memory` (which must outlive it).
outcome<json::value> parse_body_object(std::string_view body, capped_memory* memory) {
  if (const auto bad = utf8::first_invalid_byte(body)) {
    return fail(errc::invalid_json, "request body is not valid UTF-8 (byte " + std::to_string(*bad) + ")");
  }
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return fail(errc::invalid_json, "request body is empty; expected a JSON object");
  }
  boost::system::error_code ec;
  std::size_t consumed = 0;
  json::value root;
  try {
    root = parse_capped(body, memory, ec, consumed);
  } catch (const std::bad_alloc&) {
    return fail(errc::invalid_json,
                "request body has too many JSON values: parsing it would take more than " +
                    std::to_string(body.size() + create_limits::parse_memory_slack) +
                    " bytes (its size plus " + std::to_string(create_limits::parse_memory_slack) + ")");
  }
  if (ec) {
    return fail(errc::invalid_json, "request body is not valid JSON: " + ec.message() + " (near byte " +
                                        std::to_string(consumed) + ")");
  }
  const json::object* object = root.if_object();
  if (object == nullptr) {
    return fail(errc::invalid_json,
                "request body must be a JSON object, not " + std::string(json_kind_name(root)));
  }
  for (const auto& [key, value] : *object) {
    if (std::find(accepted_fields.begin(), accepted_fields.end(), key) == accepted_fields.end()) {
      return invalid(unknown_field_message(key));
    }
  }
  return root;
}

outcome<const model_spec*> read_model(const json::object& object, const catalog& models) {
  const json::value* model_id = object.if_contains("model_id");
  if (model_id == nullptr) {
    return invalid("missing required field \"model_id\"; available models: " + models.id_list());
  }
  if (!model_id->is_string()) {
    return wrong_type("model_id", "a string", *model_id);
  }
  const model_spec* model = models.find(model_id->as_string());
  if (model == nullptr) {
    return fail(errc::unknown_model, "unknown model_id " + quoted_name(model_id->as_string()) +
                                         "; available models: " + models.id_list());
  }
  return model;
}

outcome<std::string> read_prompt(const json::object& object) {
  const json::value* prompt = object.if_contains("prompt");
  if (prompt == nullptr) {
    return invalid("missing required field \"prompt\"");
  }
  if (!prompt->is_string()) {
    return wrong_type("prompt", "a string", *prompt);
  }
  const std::string_view raw_prompt = prompt->as_string();
  if (raw_prompt.find('\0') != std::string_view::npos) {
    return invalid("field \"prompt\" must not contain NUL characters");
  }
  const std::string_view trimmed = utf8::trim_space(raw_prompt);
  if (trimmed.empty()) {
    return invalid("field \"prompt\" must not be empty or only whitespace");
  }
  if (const auto length = utf8::count_code_points(trimmed); length > create_limits::max_prompt_code_points) {
    return invalid("field \"prompt\" is " + std::to_string(length) + " characters long; the maximum is " +
                   std::to_string(create_limits::max_prompt_code_points));
  }
  return std::string(trimmed);
}

outcome<std::string> read_aspect_ratio(const json::object& object, const model_spec& model) {
  const json::value* ratio = object.if_contains("aspect_ratio");
  if (ratio == nullptr) {
    return model.default_aspect_ratio;
  }
  if (!ratio->is_string()) {
    return wrong_type("aspect_ratio", "a string such as \"" + model.default_aspect_ratio + "\"", *ratio);
  }
  if (!model.allows_aspect_ratio(ratio->as_string())) {
    return invalid("aspect_ratio " + quoted_name(ratio->as_string()) + " is not supported by " + model.id +
                   "; allowed values: " + join(model.aspect_ratios));
  }
  return std::string(ratio->as_string());
}

outcome<std::vector<std::string>> read_image_urls(const json::object& object, const model_spec& model,
                                                  const fetch_policy& fetching) {
  std::vector<std::string> out;
  const json::value* urls = object.if_contains("image_urls");
  if (urls == nullptr) {
    return out;
  }
  if (!urls->is_array()) {
    return wrong_type("image_urls", "an array of URL strings", *urls);
  }
  const json::array& list = urls->as_array();
  if (list.size() > model.max_input_images) {
    return invalid("field \"image_urls\" has " + std::to_string(list.size()) + " entries; " + model.id +
                   " accepts at most " + std::to_string(model.max_input_images));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "image_urls[" + std::to_string(i) + "]";
    if (!list[i].is_string()) {
      return invalid(where + " must be a URL string, not " + std::string(json_kind_name(list[i])));
    }
    // A fragment names a part of the resource for the client; it is never sent (RFC 9110 §4.2.5).
    const std::string_view url = without_fragment(list[i].as_string());
    if (url.find('\0') != std::string_view::npos) {
      return invalid(where + " must not contain NUL characters");
    }
    if (const std::string reason = check_image_url(url, fetching); !reason.empty()) {
      return invalid(where + " " + reason);
    }
    out.emplace_back(url);
  }
  return out;
}

}  // namespace

outcome<create_request> parse_create_request(std::string_view body, const catalog& models,
                                             const fetch_policy& fetching) {
  capped_memory memory(body.size() + create_limits::parse_memory_slack);
  const auto root = parse_body_object(body, &memory);
  if (!root) {
    return root.error();
  }
  const json::object& object = root->as_object();
  create_request request;
  const auto model = read_model(object, models);
  if (!model) {
    return model.error();
  }
  request.model = *model;
  auto prompt = read_prompt(object);
  if (!prompt) {
    return prompt.error();
  }
  request.prompt = std::move(*prompt);
  auto ratio = read_aspect_ratio(object, **model);
  if (!ratio) {
    return ratio.error();
  }
  request.aspect_ratio = std::move(*ratio);
  auto urls = read_image_urls(object, **model, fetching);
  if (!urls) {
    return urls.error();
  }
  request.image_urls = std::move(*urls);
  if (const json::value* callback = object.if_contains("callback_url");
      callback != nullptr && !callback->is_null()) {
    if (!callback->is_string()) {
      return wrong_type("callback_url", "a URL string", *callback);
    }
    const std::string_view url = callback->as_string();
    if (url.find('\0') != std::string_view::npos) {
      return invalid("callback_url must not contain NUL characters");
    }
    if (const std::string reason = check_callback_url(url, fetching); !reason.empty()) {
      return invalid("callback_url " + reason);
    }
    request.callback_url = std::string(url);
  }
  return request;
}

}  // namespace gesso
