#include "core/limits.hpp"

namespace gesso {
namespace {

std::optional<int> positive(std::optional<int> v) {
  return v && *v > 0 ? v : std::nullopt;
}

}  // namespace

effective_limits resolve_limits(const limit_settings& account, const limit_settings& defaults) {
  effective_limits out;
  out.rate_per_second =
      positive(account.rate_per_second ? account.rate_per_second : defaults.rate_per_second);
  if (out.rate_per_second) {
    const std::optional<int> burst = positive(account.burst ? account.burst : defaults.burst);
    out.burst = burst.value_or(2 * *out.rate_per_second);
  }
  out.max_concurrent_tasks =
      positive(account.max_concurrent_tasks ? account.max_concurrent_tasks : defaults.max_concurrent_tasks);
  return out;
}

}  // namespace gesso
