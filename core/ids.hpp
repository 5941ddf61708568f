#pragma once
// Identifiers and secrets: task ids, request ids, API keys and their stored hashes.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gesso {

/// Fills `out` from the operating system's CSPRNG (OpenSSL); throws if it is unavailable.
void fill_random(std::span<std::uint8_t> out);

/// "task_" + 26 lower-case base32 characters: a 48-bit millisecond timestamp then 80 random bits,
/// so ids sort by creation time and cannot be guessed.
std::string new_task_id();

/// Builds a task id from its parts; new_task_id() uses the clock and the CSPRNG.
std::string format_task_id(std::uint64_t unix_ms, std::span<const std::uint8_t, 10> random);

/// Whether `s` has the exact shape of a task id (checked before any database work).
bool is_task_id(std::string_view s);

/// "req_" + 20 lower-case base32 characters (100 random bits).
std::string new_request_id();

/// "sk-" + 43 base62 characters (256 random bits). Shown once; only its hash is stored.
std::string new_api_key();

/// Whether `s` has the shape of an API key: "sk-" followed by 32 to 128 base62 characters.
bool is_api_key_shaped(std::string_view s);

/// The stored form of a key: lower-case hex SHA-256 of the whole key.
std::string hash_api_key(std::string_view key);

/// The short, non-secret prefix shown in listings ("sk-" + 8 characters).
std::string api_key_display_prefix(std::string_view key);

}  // namespace gesso
