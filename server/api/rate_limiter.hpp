#pragma once
// The per-key rate limit of one server (docs/api.md#limits). Tokens come from the key's bucket in
// PostgreSQL (storage/rate_limits.hpp), shared by every server, in batches of a twentieth of the rate;
// a server spends its batch locally for up to a second, and remembers a refusal until the bucket will
// have a token again, so a request costs a statement only when its server's batch is spent.

#include "core/limits.hpp"
#include "storage/rate_limits.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gesso::api {

class rate_limiter {
 public:
  using clock = std::chrono::steady_clock;

  /// What a request may do, and what its response's RateLimit headers say.
  struct verdict {
    bool allowed = true;
    bool limited = false;  ///< the key has a rate limit: the headers are sent
    int rate = 0;
    int burst = 0;
    int remaining = 0;      ///< tokens left in the bucket, as this server last saw it
    int reset_s = 0;        ///< seconds until the bucket is full again
    int retry_after_s = 0;  ///< refused: seconds until a token is there
  };

  /// The verdict from this server's batch, or nullopt when a take from the bucket is needed (then the
  /// caller takes batch_size() tokens and passes them to after_take).
  std::optional<verdict> try_local(const std::string& key_hash, clock::time_point now);

  /// Tokens to ask the bucket for.
  int batch_size(const std::string& key_hash);

  /// The verdict once tokens were taken; remembers them for this key.
  verdict after_take(const std::string& key_hash, const storage::rate_tokens& taken, clock::time_point now);

  /// Keys remembered at most (a flood of keys clears the memory rather than growing it).
  static constexpr std::size_t max_keys = 100'000;

 private:
  struct entry {
    int rate = 0;
    int burst = 0;
    int tokens = 0;
    double available = 0;
    clock::time_point valid_until{};
    clock::time_point refused_until{};
  };
  verdict spend(entry& e);
  void make_room(clock::time_point now);

  std::mutex mutex_;
  std::unordered_map<std::string, entry> keys_;
};

}  // namespace gesso::api
