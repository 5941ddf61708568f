#include "core/catalog.hpp"

#include "core/error.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

namespace gesso {
namespace json = boost::json;

namespace {

// Built on each call, not held in namespace-scope objects: catalogs may be built during another
// translation unit's static initialisation.
std::vector<std::string> image_ratios() {
  return {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"};
}
std::vector<std::string> video_ratios() {
  return {"16:9", "9:16"};
}

model_spec image_model(std::string id, std::int64_t price) {
  model_spec m;
  m.id = std::move(id);
  m.type = task_type::image;
  m.price = price;
  m.aspect_ratios = image_ratios();
  m.default_aspect_ratio = "1:1";
  m.max_input_images = 10;
  m.deadline_seconds = 300;
  return m;
}

model_spec video_model(std::string id, std::int64_t price, int duration) {
  model_spec m;
  m.id = std::move(id);
  m.type = task_type::video;
  m.price = price;
  m.aspect_ratios = video_ratios();
  m.default_aspect_ratio = "16:9";
  m.max_input_images = 3;
  m.duration_seconds = duration;
  m.deadline_seconds = 900;
  return m;
}

bool is_ratio_shaped(std::string_view r) {
  const auto colon = r.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == r.size()) {
    return false;
  }
  auto positive = [](std::string_view digits) {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return ec == std::errc{} && end == digits.data() + digits.size() && value > 0 && value <= 100;
  };
  return positive(r.substr(0, colon)) && positive(r.substr(colon + 1));
}

using parse_result = checked<model_spec>;

// The integer fields of a model entry, with their ranges: a table.
struct integer_field {
  std::string_view key;
  std::int64_t lo;
  std::int64_t hi;
  void (*set)(model_spec&, std::int64_t);
};
constexpr integer_field integer_fields[] = {
    {"price", 0, 1'000'000'000, [](model_spec& m, std::int64_t v) { m.price = v; }},
    {"max_input_images", 0, 16,
     [](model_spec& m, std::int64_t v) { m.max_input_images = static_cast<std::size_t>(v); }},
    {"duration_seconds", 1, 60,
     [](model_spec& m, std::int64_t v) { m.duration_seconds = static_cast<int>(v); }},
    {"deadline_seconds", 1, 7 * 24 * 3600,
     [](model_spec& m, std::int64_t v) { m.deadline_seconds = static_cast<int>(v); }},
    {"max_attempts", 1, 100, [](model_spec& m, std::int64_t v) { m.max_attempts = static_cast<int>(v); }},
};

// "routes": [{"engine", "priority", "weight", "settings"}, …].
std::string read_routes(model_spec& m, const json::value& field, const std::string& where) {
  if (!field.is_array() || field.as_array().empty()) {
    return where +
           "\"routes\" must be a non-empty array of {\"engine\", \"priority\", \"weight\", \"settings\"}";
  }
  for (std::size_t i = 0; i < field.as_array().size(); ++i) {
    const std::string at = where + "routes[" + std::to_string(i) + "]";
    const json::object* o = field.as_array()[i].if_object();
    if (o == nullptr) {
      return at + " must be an object";
    }
    route_spec r;
    for (const auto& [key, value] : *o) {
      if (key == "engine" && value.is_string() && !value.as_string().empty()) {
        r.engine = std::string(value.as_string());
      } else if (key == "priority" && value.is_int64() && value.as_int64() >= 0 && value.as_int64() <= 1000) {
        r.priority = static_cast<int>(value.as_int64());
      } else if (key == "weight" && value.is_int64() && value.as_int64() >= 1 && value.as_int64() <= 1000) {
        r.weight = static_cast<int>(value.as_int64());
      } else if (key == "settings" && value.is_object()) {
        r.settings = json::serialize(value);
      } else if (key == "engine" || key == "priority" || key == "weight" || key == "settings") {
        return at + "." + std::string(key) + " must be " +
               (key == "engine"     ? "a non-empty string"
                : key == "priority" ? "a whole number from 0 to 1000"
                : key == "weight"   ? "a whole number from 1 to 1000"
                                    : "an object");
      } else {
        return at + ": unknown field \"" + std::string(key) + "\"";
      }
    }
    if (r.engine.empty()) {
      return at + ".engine is required";
    }
    m.routes.push_back(std::move(r));
  }
  return {};
}

// Reads one field other than task_type into `m`: "" or what is wrong (prefixed by `where`).
std::string read_model_field(model_spec& m, std::string_view key, const json::value& field,
                             const std::string& where) {
  for (const integer_field& f : integer_fields) {
    if (key == f.key) {
      if (!field.is_int64() || field.as_int64() < f.lo || field.as_int64() > f.hi) {
        return where + "\"" + std::string(key) + "\" must be an integer from " + std::to_string(f.lo) +
               " to " + std::to_string(f.hi);
      }
      f.set(m, field.as_int64());
      return {};
    }
  }
  if (key == "engine") {
    if (!field.is_string() || field.as_string().empty()) {
      return where + "\"engine\" must be a non-empty string";
    }
    m.engine = std::string(field.as_string());
  } else if (key == "routes") {
    return read_routes(m, field, where);
  } else if (key == "engine_settings") {
    if (!field.is_object()) {
      return where + "\"engine_settings\" must be an object";
    }
    m.engine_settings = json::serialize(field);
  } else if (key == "aspect_ratios") {
    const std::string bad = where + "\"aspect_ratios\" must be a non-empty array of \"W:H\" strings";
    if (!field.is_array() || field.as_array().empty()) {
      return bad;
    }
    m.aspect_ratios.clear();
    for (const auto& r : field.as_array()) {
      if (!r.is_string() || !is_ratio_shaped(r.as_string())) {
        return bad;
      }
      m.aspect_ratios.emplace_back(r.as_string());
    }
  } else if (key == "default_aspect_ratio") {
    if (!field.is_string()) {
      return where + "\"default_aspect_ratio\" must be a string";
    }
    m.default_aspect_ratio = std::string(field.as_string());
  } else {
    return where + "unknown field \"" + std::string(key) + "\"";
  }
  return {};
}

// Reads one model entry strictly: unknown keys and wrong types are errors.
parse_result parse_model(const std::string& id, const json::value& v) {
  const std::string where = "model \"" + id + "\": ";
  if (!v.is_object()) {
    return refusal{where + "must be an object"};
  }
  const auto& o = v.as_object();
  const json::value* type_value = o.if_contains("task_type");
  const auto type = type_value != nullptr && type_value->is_string()
                        ? parse_task_type(type_value->as_string())
                        : std::nullopt;
  if (!type) {
    return refusal{where + "\"task_type\" must be \"image\" or \"video\""};
  }
  model_spec m = *type == task_type::image ? image_model(id, 0) : video_model(id, 0, 5);
  for (const auto& member : o) {
    if (member.key() == "task_type") {
      continue;
    }
    if (std::string error = read_model_field(m, member.key(), member.value(), where); !error.empty()) {
      return refusal{std::move(error)};
    }
  }
  if (o.contains("routes") && (o.contains("engine") || o.contains("engine_settings"))) {
    return refusal{where + "give either \"routes\" or \"engine\" with \"engine_settings\", not both"};
  }
  if (m.routes.empty()) {
    m.routes.push_back({m.engine, 1, 1, m.engine_settings});
  } else {
    const auto first =
        std::min_element(m.routes.begin(), m.routes.end(),
                         [](const route_spec& a, const route_spec& b) { return a.priority < b.priority; });
    m.engine = first->engine;
    m.engine_settings = first->settings;
  }
  if (!o.contains("price")) {
    return refusal{where + "\"price\" is required"};
  }
  if (m.type == task_type::image && o.contains("duration_seconds")) {
    return refusal{where + "\"duration_seconds\" applies to video models only"};
  }
  if (m.type == task_type::image) {
    m.duration_seconds = 0;
  }
  if (!m.allows_aspect_ratio(m.default_aspect_ratio)) {
    return refusal{where + "\"default_aspect_ratio\" \"" + m.default_aspect_ratio +
                   "\" is not in \"aspect_ratios\""};
  }
  return m;
}

}  // namespace

bool model_spec::allows_aspect_ratio(std::string_view r) const {
  return std::find(aspect_ratios.begin(), aspect_ratios.end(), r) != aspect_ratios.end();
}

catalog catalog::builtin() {
  return catalog({
      video_model("vendor1-flash", 20, 5),
      video_model("vendor1-pro", 60, 8),
      video_model("vendor2-2", 40, 5),
      image_model("vendor3-image-2", 8),
      image_model("vendor4-2", 6),
  });
}

checked<catalog> catalog::parse(std::string_view json_text) {
  boost::system::error_code ec;
  const json::value root = json::parse(json_text, ec);
  if (ec) {
    return refusal{"catalog is not valid JSON: " + ec.message()};
  }
  const json::object* top = root.if_object();
  const json::value* models = top != nullptr ? top->if_contains("models") : nullptr;
  if (models == nullptr || !models->is_object() || models->as_object().empty() || top->size() != 1) {
    return refusal{
        std::string("catalog must be an object with one field, \"models\": a non-empty object of models")};
  }
  std::vector<model_spec> specs;
  for (const auto& [id, entry] : models->as_object()) {
    if (id.empty() || id.size() > 64 || id.find_first_of(" \t\r\n\"\\/") != std::string_view::npos) {
      return refusal{"model id \"" + std::string(id) +
                     "\" must be 1-64 characters without spaces, quotes or slashes"};
    }
    auto spec = parse_model(std::string(id), entry);
    if (!spec) {
      return spec.error();
    }
    specs.push_back(std::move(*spec));
  }
  return catalog(std::move(specs));
}

const model_spec* catalog::find(std::string_view id) const {
  const auto it =
      std::find_if(models_.begin(), models_.end(), [&](const model_spec& m) { return m.id == id; });
  return it == models_.end() ? nullptr : &*it;
}

std::string catalog::id_list() const {
  std::vector<std::string> ids;
  ids.reserve(models_.size());
  for (const auto& m : models_) {
    ids.push_back(m.id);
  }
  return join(ids);
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += separator;
    }
    out += item;
  }
  return out;
}

}  // namespace gesso
