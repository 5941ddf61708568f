#pragma once
// An account's limits (docs/api.md#limits): its own settings where it has them, the configuration's
// defaults otherwise; 0 is unlimited.

#include <optional>

namespace gesso {

/// Limits as set: on an account (nullopt: not set) or as the configuration's defaults.
struct limit_settings {
  std::optional<int> rate_per_second;
  std::optional<int> burst;
  std::optional<int> max_concurrent_tasks;
};

/// The limits that hold for an account; nullopt is unlimited.
struct effective_limits {
  std::optional<int> rate_per_second;
  std::optional<int> burst;  ///< set whenever rate_per_second is
  std::optional<int> max_concurrent_tasks;
};

/// The account's setting where it has one, else the default; a burst of 0 (or none) is twice the rate.
effective_limits resolve_limits(const limit_settings& account, const limit_settings& defaults);

}  // namespace gesso
