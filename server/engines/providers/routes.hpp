#pragma once
// A catalog model's routes made into a provider engine: every route's settings checked (the common
// ones every HTTP engine reads, then the engine's own), its key read from the environment variable it
// names, its adapter built. One line naming the model, the route and the field on any problem.

#include "core/catalog.hpp"
#include "server/engines/engine.hpp"

#include <memory>

namespace gesso::engines {

/// Throws std::invalid_argument "model "<id>": routes[<i>] (<engine>): settings.<field> …".
std::unique_ptr<engine> make_provider_engine(const model_spec& model, const engine_environment& environment);

}  // namespace gesso::engines
