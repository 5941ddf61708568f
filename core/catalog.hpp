#pragma once
// The model catalog: which model ids exist, what they cost, what they accept and which engine runs them.

#include "core/error.hpp"
#include "core/task.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gesso {

/// One way to run a model: an engine with its settings (docs/engines.md#routes). A model lists routes
/// in order of preference: lower priority first, then by weight among equals.
struct route_spec {
  std::string engine;
  int priority = 1;
  int weight = 1;
  std::string settings = "{}";  ///< JSON object handed to the engine
};

/// Everything the service knows about one model_id.
struct model_spec {
  std::string id;
  task_type type = task_type::image;
  std::string engine = "builtin";      ///< the first route's engine (recorded on each task)
  std::string engine_settings = "{}";  ///< the shorthand for one route: JSON handed to `engine`
  std::vector<route_spec> routes;      ///< from "routes", or the one of engine + engine_settings
  std::int64_t price = 0;              ///< credits charged at create
  std::vector<std::string> aspect_ratios;
  std::string default_aspect_ratio;
  std::size_t max_input_images = 0;
  int duration_seconds = 0;  ///< video length; 0 for image models
  int deadline_seconds = 0;  ///< create → final, after which the task fails and is refunded
  int max_attempts = 3;      ///< claims before the task fails and is refunded

  bool allows_aspect_ratio(std::string_view r) const;
};

/// An immutable set of models, looked up by id.
class catalog {
 public:
  /// The five models of the API specification with Gesso's documented defaults (docs/configuration.md).
  static catalog builtin();

  /// Parses a catalog file (docs/configuration.md); the error names the offending model and field.
  static checked<catalog> parse(std::string_view json_text);

  /// The model with this id, or nullptr.
  const model_spec* find(std::string_view id) const;

  const std::vector<model_spec>& models() const { return models_; }

  /// "a, b, c": the ids in catalog order, for error messages.
  std::string id_list() const;

 private:
  explicit catalog(std::vector<model_spec> models) : models_(std::move(models)) {}
  std::vector<model_spec> models_;
};

/// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace gesso
