#pragma once
// The one fetcher for input images: data: URLs are decoded, http(s) URLs are fetched with caps on
// bytes, time and redirects. The content is sniffed by the decoder, never trusted from headers.
// (Refusing non-public destinations is added here by the hostile-input work: issue "Hostile input".)

#include "core/error.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace gesso::engines {

struct fetch_limits {
  std::size_t max_bytes = 10 * 1024 * 1024;
  std::chrono::milliseconds timeout{10000};  ///< for the whole fetch, redirects included
  int max_redirects = 3;
};

/// The bytes `url` designates, or a sentence saying why they could not be had.
checked<std::string> fetch_input(std::string_view url, const fetch_limits& limits = {});

}  // namespace gesso::engines
