#include "server/api/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace gesso::api {
namespace {

constexpr auto batch_validity = std::chrono::seconds(1);

int seconds_up(double s) {
  return std::max(1, static_cast<int>(std::ceil(s)));
}

}  // namespace

rate_limiter::verdict rate_limiter::spend(entry& e) {
  verdict v{.allowed = true, .limited = true, .rate = e.rate, .burst = e.burst};
  --e.tokens;
  v.remaining = e.tokens + static_cast<int>(std::floor(e.available));
  v.reset_s = static_cast<int>(std::ceil(std::max(0, e.burst - v.remaining) / static_cast<double>(e.rate)));
  return v;
}

std::optional<rate_limiter::verdict> rate_limiter::try_local(const std::string& key_hash,
                                                             clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto it = keys_.find(key_hash);
  if (it == keys_.end()) {
    return std::nullopt;
  }
  entry& e = it->second;
  if (now < e.refused_until) {
    const double wait = std::chrono::duration<double>(e.refused_until - now).count();
    return verdict{.allowed = false,
                   .limited = true,
                   .rate = e.rate,
                   .burst = e.burst,
                   .reset_s = seconds_up(e.burst / static_cast<double>(e.rate)),
                   .retry_after_s = seconds_up(wait)};
  }
  if (now >= e.valid_until) {
    return std::nullopt;
  }
  if (e.rate == 0) {
    return verdict{};
  }
  if (e.tokens > 0) {
    return spend(e);
  }
  return std::nullopt;
}

int rate_limiter::batch_size(const std::string& key_hash) {
  std::lock_guard lock(mutex_);
  const auto it = keys_.find(key_hash);
  return it == keys_.end() ? 1 : std::max(1, it->second.rate / 20);
}

void rate_limiter::make_room(clock::time_point now) {
  if (keys_.size() < max_keys) {
    return;
  }
  std::erase_if(keys_, [now](const auto& kv) {
    return kv.second.valid_until <= now && kv.second.refused_until <= now;
  });
  if (keys_.size() >= max_keys) {
    keys_.clear();
  }
}

rate_limiter::verdict rate_limiter::after_take(const std::string& key_hash, const storage::rate_tokens& taken,
                                               clock::time_point now) {
  std::lock_guard lock(mutex_);
  make_room(now);
  entry& e = keys_[key_hash];
  e = entry{.rate = taken.rate,
            .burst = taken.burst,
            .tokens = taken.granted,
            .available = taken.available,
            .valid_until = now + batch_validity};
  if (taken.rate == 0) {
    return verdict{};
  }
  if (taken.granted > 0) {
    return spend(e);
  }
  const double wait = (1.0 - taken.available) / taken.rate;
  e.refused_until = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(wait));
  return verdict{.allowed = false,
                 .limited = true,
                 .rate = taken.rate,
                 .burst = taken.burst,
                 .reset_s = seconds_up(taken.burst / static_cast<double>(taken.rate)),
                 .retry_after_s = seconds_up(wait)};
}

}  // namespace gesso::api
