#pragma once
// The one fetcher for input images: data: URLs are decoded, http(s) URLs are fetched with caps on
// bytes, time and redirects. Every resolved address is checked against the fetch policy and the
// connection goes to exactly the addresses that passed (no second resolution), at every redirect.
// The content is sniffed by the decoder, never trusted from headers.

#include "core/error.hpp"
#include "core/network_policy.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gesso::engines {

struct fetch_limits {
  std::size_t max_bytes = 10 * 1024 * 1024;
  std::chrono::milliseconds timeout{10000};  ///< for the whole fetch, redirects included
  int max_redirects = 3;
  fetch_policy policy = {};  ///< which destinations may be contacted
};

/// The bytes `url` designates, or a sentence saying why they could not be had.
checked<std::string> fetch_input(std::string_view url, const fetch_limits& limits = {});

/// One HTTP request, for engines that talk to remote APIs.
struct http_call {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string body = {};
};

/// What came back, whatever the status.
struct http_answer {
  unsigned status = 0;
  std::string location = {};
  std::string body = {};
  std::vector<std::pair<std::string, std::string>> headers =
      {};  ///< as received (bounded with the header block)
};

/// Sends `call` (redirects are not followed) within `timeout`, reading at most `max_bytes` of body, to
/// an address `policy` allows. Fails only when no HTTP answer arrived (refused destination,
/// resolution, connection, TLS, timeout, size).
checked<http_answer> http_request(const http_call& call, std::size_t max_bytes,
                                  std::chrono::milliseconds timeout, const fetch_policy& policy);

}  // namespace gesso::engines
