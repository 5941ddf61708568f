#include "core/ids.hpp"

#include "core/hmac.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <chrono>
#include <stdexcept>

namespace gesso {
namespace {

// Crockford's alphabet, lower case: no i, l, o, u.
constexpr std::string_view base32_alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
constexpr std::string_view base62_alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr std::size_t task_id_chars = 26;
constexpr std::string_view task_prefix = "task_";
constexpr std::string_view key_prefix = "sk-";

// Encodes `bytes` as base32, most significant bit first, left-padding to a whole number of characters.
std::string base32(std::span<const std::uint8_t> bytes, std::size_t chars) {
  std::string out(chars, '0');
  // Walk from the least significant end so left padding falls out naturally.
  std::size_t bit = 0;
  for (std::size_t i = 0; i < chars; ++i) {
    unsigned value = 0;
    for (unsigned b = 0; b < 5; ++b, ++bit) {
      if (bit >= bytes.size() * 8) {
        break;
      }
      const std::size_t byte_index = bytes.size() - 1 - bit / 8;
      const unsigned bit_value = (bytes[byte_index] >> (bit % 8)) & 1U;
      value |= bit_value << b;
    }
    out[chars - 1 - i] = base32_alphabet[value];
  }
  return out;
}

}  // namespace

void fill_random(std::span<std::uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    throw std::runtime_error("the system random number generator failed");
  }
}

std::string format_task_id(std::uint64_t unix_ms, std::span<const std::uint8_t, 10> random) {
  std::array<std::uint8_t, 16> raw{};
  for (int i = 0; i < 6; ++i) {
    raw[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(unix_ms >> (8 * (5 - i)));
  }
  std::copy(random.begin(), random.end(), raw.begin() + 6);
  return std::string(task_prefix) + base32(raw, task_id_chars);
}

std::string new_task_id() {
  std::array<std::uint8_t, 10> random{};
  fill_random(random);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  return format_task_id(static_cast<std::uint64_t>(ms), random);
}

bool is_task_id(std::string_view s) {
  if (s.size() != task_prefix.size() + task_id_chars || !s.starts_with(task_prefix)) {
    return false;
  }
  s.remove_prefix(task_prefix.size());
  // 26 characters carry 130 bits; the top two are always zero, so the first is 0-7.
  return s.find_first_not_of(base32_alphabet) == std::string_view::npos && s[0] <= '7';
}

std::string new_request_id() {
  std::array<std::uint8_t, 13> random{};
  fill_random(random);
  return "req_" + base32(random, 20);
}

std::string new_api_key() {
  std::string key(key_prefix);
  std::array<std::uint8_t, 64> pool{};
  std::size_t used = pool.size();
  while (key.size() < key_prefix.size() + 43) {
    if (used == pool.size()) {
      fill_random(pool);
      used = 0;
    }
    const std::uint8_t byte = pool[used++];
    if (byte < 248) {  // 248 = 4 * 62: rejecting the rest keeps every character equally likely
      key.push_back(base62_alphabet[byte % 62]);
    }
  }
  return key;
}

bool is_api_key_shaped(std::string_view s) {
  if (!s.starts_with(key_prefix)) {
    return false;
  }
  s.remove_prefix(key_prefix.size());
  return s.size() >= 32 && s.size() <= 128 && s.find_first_not_of(base62_alphabet) == std::string_view::npos;
}

std::string hash_api_key(std::string_view key) {
  return sha256_hex(key);
}

std::string api_key_display_prefix(std::string_view key) {
  return std::string(key.substr(0, 11));
}

}  // namespace gesso
