#pragma once
// The shared side of the per-key rate limit (sql/010): token buckets in PostgreSQL, taken in batches.

#include "storage/connection_pool.hpp"

#include <string_view>

namespace gesso::storage {

/// What one take from a key's bucket gave.
struct rate_tokens {
  int granted = 0;       ///< tokens now the caller's to spend
  double available = 0;  ///< left in the bucket after the take
  int rate = 0;          ///< the key's refill per second; 0 = unlimited (or an unknown key)
  int burst = 0;         ///< the bucket's size
};

/// Takes up to `want` tokens from the key's bucket, creating it full on first use. `default_rate` and
/// `default_burst` hold for accounts without limits of their own (0: unlimited).
rate_tokens take_rate_tokens(connection_pool& pool, std::string_view key_hash, int default_rate,
                             int default_burst, int want);

}  // namespace gesso::storage
