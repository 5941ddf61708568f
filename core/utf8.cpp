#include "core/utf8.hpp"

#include <cstdint>

namespace gesso::utf8 {
namespace {

// Decodes the code point at `pos` of valid UTF-8 text and reports its length in bytes.
char32_t decode_at(std::string_view s, std::size_t pos, std::size_t& length) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  char32_t cp = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3F);
  }
  return cp;
}

// Decodes the code point that ends just before `end` in valid UTF-8 text.
char32_t decode_before(std::string_view s, std::size_t end, std::size_t& length) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
    --start;
  }
  return decode_at(s, start, length);
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

}  // namespace

std::optional<std::size_t> first_invalid_byte(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = bytes[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t need = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c == 0xE0) {
      need = 2;
      lo = 0xA0;  // no overlong three-byte forms
    } else if (c == 0xED) {
      need = 2;
      hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xE1 && c <= 0xEF) {
      need = 2;
    } else if (c == 0xF0) {
      need = 3;
      lo = 0x90;  // no overlong four-byte forms
    } else if (c >= 0xF1 && c <= 0xF3) {
      need = 3;
    } else if (c == 0xF4) {
      need = 3;
      hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + need >= n) {  // truncated sequence
      return i;
    }
    if (bytes[i + 1] < lo || bytes[i + 1] > hi) {
      return i;
    }
    for (std::size_t k = 2; k <= need; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) {
        return i;
      }
    }
    i += need + 1;
  }
  return std::nullopt;
}

std::size_t count_code_points(std::string_view valid) {
  std::size_t count = 0;
  for (const char c : valid) {
    count += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  return count;
}

std::string_view trim_space(std::string_view valid) {
  std::size_t begin = 0;
  std::size_t end = valid.size();
  std::size_t length = 0;
  while (begin < end && is_white_space(decode_at(valid, begin, length))) {
    begin += length;
  }
  while (end > begin && is_white_space(decode_before(valid, end, length))) {
    end -= length;
  }
  return valid.substr(begin, end - begin);
}

}  // namespace gesso::utf8
