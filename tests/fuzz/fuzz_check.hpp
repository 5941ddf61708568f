#pragma once
// What the fuzz targets share: turning the fuzzer's bytes into views, and a check that stops the run
// loudly (under libFuzzer it is a crash with the input saved; under the CTest replay it fails the test).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gesso::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// An invariant of the code under test; a broken one aborts with the condition named.
inline void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace gesso::fuzz
