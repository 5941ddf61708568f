#include "server/engines/providers/http_task_template.hpp"

#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <algorithm>
#include <charconv>

namespace gesso::engines::http_task {
namespace json = boost::json;

namespace {

// One piece of a string: literal text, or a placeholder with its name and image index (-1: none).
struct piece {
  bool placeholder = false;
  std::string text;  ///< literal text, or the placeholder's name
  int index = -1;
};

struct scanned {
  std::vector<piece> pieces;
  std::string problem;  ///< "" when well formed
};

bool is_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

scanned scan(std::string_view text) {
  scanned out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string_view::npos) {
      out.pieces.push_back({false, std::string(text.substr(at)), -1});
      break;
    }
    if (open > at) {
      out.pieces.push_back({false, std::string(text.substr(at, open - at)), -1});
    }
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      out.problem = "has a \"{{\" that is never closed with \"}}\"";
      return out;
    }
    std::string_view inside = text.substr(open + 2, close - open - 2);
    piece p{true, {}, -1};
    if (const auto colon = inside.find(':'); colon != std::string_view::npos) {
      const std::string_view digits = inside.substr(colon + 1);
      int index = -1;
      const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (digits.empty() || digits.size() > 2 || parsed.ec != std::errc{} ||
          parsed.ptr != digits.data() + digits.size()) {
        out.problem = "has \"{{" + std::string(inside) + "}}\": an image index is a number from 0 to 99";
        return out;
      }
      p.index = index;
      inside = inside.substr(0, colon);
    }
    if (!is_name(inside)) {
      out.problem = "has \"{{" + std::string(text.substr(open + 2, close - open - 2)) +
                    "}}\": a placeholder is a lower-case name, such as {{prompt}}";
      return out;
    }
    p.text = std::string(inside);
    out.pieces.push_back(std::move(p));
    at = close + 2;
  }
  return out;
}

// "" when placeholder `p` is known; `whole`: it is the whole string value.
std::string check_piece(const piece& p, const std::set<std::string>& names, bool whole) {
  const std::string shown = "{{" + p.text + (p.index >= 0 ? ":" + std::to_string(p.index) : "") + "}}";
  if (is_indexed_placeholder(p.text)) {
    return p.index >= 0 ? "" : "has " + shown + " without an image index, such as {{" + p.text + ":0}}";
  }
  if (p.index >= 0) {
    return "has " + shown + ": only image placeholders take an index";
  }
  if (is_list_placeholder(p.text)) {
    return whole ? "" : "has " + shown + " inside a longer string: a list can only be a whole value";
  }
  if (names.contains(p.text)) {
    return "";
  }
  std::string known;
  for (const auto& n : names) {
    known += (known.empty() ? "" : ", ") + ("{{" + n + "}}");
  }
  return "has the unknown placeholder " + shown + " (known here: " + known +
         ", {{image_url:N}}, {{image_base64:N}}, {{image_data_url:N}}, {{image_urls}}, {{image_data_urls}})";
}

std::string check_text(std::string_view text, const std::set<std::string>& names, bool may_be_whole) {
  const scanned s = scan(text);
  if (!s.problem.empty()) {
    return s.problem;
  }
  const bool whole = may_be_whole && s.pieces.size() == 1 && s.pieces.front().placeholder;
  for (const piece& p : s.pieces) {
    if (p.placeholder) {
      if (std::string problem = check_piece(p, names, whole); !problem.empty()) {
        return problem;
      }
    }
  }
  return "";
}

// The value of one placeholder, or nothing (an image the task does not have, a value not given).
std::optional<json::value> value_of(const piece& p, const template_values& v) {
  const auto at = [&](const std::vector<std::string>& list) -> std::optional<json::value> {
    if (p.index < 0 || static_cast<std::size_t>(p.index) >= list.size()) {
      return std::nullopt;
    }
    return json::value(list[static_cast<std::size_t>(p.index)]);
  };
  const auto all = [](const std::vector<std::string>& list) {
    json::array a;
    for (const auto& s : list) {
      a.emplace_back(s);
    }
    return json::value(std::move(a));
  };
  if (p.text == "image_url") {
    return at(v.image_urls);
  }
  if (p.text == "image_base64") {
    return at(v.image_base64);
  }
  if (p.text == "image_data_url") {
    return at(v.image_data_urls);
  }
  if (p.text == "image_urls") {
    return all(v.image_urls);
  }
  if (p.text == "image_data_urls") {
    return all(v.image_data_urls);
  }
  const auto it = v.named.find(p.text);
  if (it == v.named.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::string as_text(const json::value& v) {
  if (const auto t = text_of(v)) {
    return *t;
  }
  return json::serialize(v);  // a map's object or list inside a string: its JSON
}

// A string value rendered: the value itself when the string is one placeholder; nothing when that one
// has no value.
std::optional<json::value> render_string(std::string_view text, const template_values& values) {
  const scanned s = scan(text);
  if (s.pieces.size() == 1 && s.pieces.front().placeholder) {
    return value_of(s.pieces.front(), values);
  }
  std::string out;
  for (const piece& p : s.pieces) {
    if (!p.placeholder) {
      out += p.text;
    } else if (const auto v = value_of(p, values)) {
      out += as_text(*v);
    }
  }
  return json::value(std::move(out));
}

}  // namespace

bool is_indexed_placeholder(std::string_view name) {
  return name == "image_url" || name == "image_base64" || name == "image_data_url";
}

bool is_list_placeholder(std::string_view name) {
  return name == "image_urls" || name == "image_data_urls";
}

std::string check_template(const json::value& t, const std::set<std::string>& names,
                           const std::string& where) {
  if (const json::object* o = t.if_object()) {
    for (const auto& [key, member] : *o) {
      if (key.find("{{") != json::string_view::npos) {
        return where + ": a member name cannot hold a placeholder (\"" + std::string(key) + "\")";
      }
      if (std::string problem = check_template(member, names, where + "/" + std::string(key));
          !problem.empty()) {
        return problem;
      }
    }
  } else if (const json::array* a = t.if_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (std::string problem = check_template((*a)[i], names, where + "/" + std::to_string(i));
          !problem.empty()) {
        return problem;
      }
    }
  } else if (const json::string* s = t.if_string()) {
    if (std::string problem = check_text(*s, names, true); !problem.empty()) {
      return where + " " + problem;
    }
  }
  return "";
}

std::string check_text_template(std::string_view text, const std::set<std::string>& names,
                                const std::string& where) {
  if (std::string problem = check_text(text, names, false); !problem.empty()) {
    return where + " " + problem;
  }
  return "";
}

std::set<std::string> placeholders_of(const json::value& t) {
  std::set<std::string> out;
  if (const json::object* o = t.if_object()) {
    for (const auto& [key, member] : *o) {
      out.merge(placeholders_of(member));
    }
  } else if (const json::array* a = t.if_array()) {
    for (const json::value& item : *a) {
      out.merge(placeholders_of(item));
    }
  } else if (const json::string* s = t.if_string()) {
    for (const piece& p : scan(*s).pieces) {
      if (p.placeholder) {
        out.insert(p.text);
      }
    }
  }
  return out;
}

json::value render(const json::value& t, const template_values& values) {
  if (const json::object* o = t.if_object()) {
    json::object out;
    for (const auto& [key, member] : *o) {
      if (member.is_string()) {
        if (auto v = render_string(member.as_string(), values)) {
          out[key] = std::move(*v);
        }
      } else {
        out[key] = render(member, values);
      }
    }
    return out;
  }
  if (const json::array* a = t.if_array()) {
    json::array out;
    for (const json::value& item : *a) {
      if (item.is_string()) {
        if (auto v = render_string(item.as_string(), values)) {
          out.push_back(std::move(*v));
        }
      } else {
        out.push_back(render(item, values));
      }
    }
    return out;
  }
  if (const json::string* s = t.if_string()) {
    return render_string(*s, values).value_or(json::value(nullptr));
  }
  return t;
}

std::string render_text(std::string_view text, const template_values& values, bool url_encode) {
  std::string out;
  for (const piece& p : scan(text).pieces) {
    if (!p.placeholder) {
      out += p.text;
    } else if (const auto v = value_of(p, values)) {
      const std::string t = as_text(*v);
      out += url_encode ? boost::urls::encode(t, boost::urls::unreserved_chars) : t;
    }
  }
  return out;
}

bool valid_pointer(std::string_view pointer) {
  if (!pointer.empty() && pointer.front() != '/') {
    return false;
  }
  for (std::size_t i = 0; i < pointer.size(); ++i) {
    if (pointer[i] == '~' && (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))) {
      return false;
    }
  }
  return true;
}

const json::value* find(const json::value& answer, std::string_view pointer) {
  boost::system::error_code ec;
  const json::value* found = answer.find_pointer(pointer, ec);
  return ec ? nullptr : found;
}

std::optional<std::string> text_of(const json::value& v) {
  if (v.is_string()) {
    return std::string(v.as_string());
  }
  if (v.is_int64()) {
    return std::to_string(v.as_int64());
  }
  if (v.is_uint64()) {
    return std::to_string(v.as_uint64());
  }
  if (v.is_double()) {
    return json::serialize(v);
  }
  if (v.is_bool()) {
    return v.as_bool() ? "true" : "false";
  }
  return std::nullopt;
}

}  // namespace gesso::engines::http_task
