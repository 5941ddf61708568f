#include "server/api/http_framing.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include <vector>

namespace gesso::api {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Every coding of every Transfer-Encoding line, in order (a list may span several lines).
std::vector<std::string_view> transfer_codings(const http::request_header<>& header) {
  std::vector<std::string_view> codings;
  auto [first, last] = header.equal_range(http::field::transfer_encoding);
  for (auto it = first; it != last; ++it) {
    std::string_view list = it->value();
    while (true) {
      const auto comma = list.find(',');
      codings.push_back(trim(list.substr(0, comma)));
      if (comma == std::string_view::npos) {
        break;
      }
      list.remove_prefix(comma + 1);
    }
  }
  return codings;
}

std::optional<problem> transfer_encoding_problem(const http::request_header<>& header) {
  if (header.count(http::field::transfer_encoding) == 0) {
    return std::nullopt;
  }
  const auto bad = [](std::string message) {
    return std::optional<problem>(fail(errc::malformed_request, std::move(message)));
  };
  if (header.version() < 11) {
    return bad("Transfer-Encoding is not allowed in an HTTP/1.0 request");
  }
  if (header.count(http::field::content_length) != 0) {
    return bad("a request must not carry both Transfer-Encoding and Content-Length");
  }
  const auto codings = transfer_codings(header);
  std::size_t chunked = 0;
  std::string_view unsupported;
  for (const auto coding : codings) {
    if (coding.empty()) {
      return bad("Transfer-Encoding has an empty coding");
    }
    if (boost::algorithm::iequals(coding, "chunked")) {
      ++chunked;
    } else if (unsupported.empty()) {
      unsupported = coding;
    }
  }
  if (!boost::algorithm::iequals(codings.back(), "chunked")) {
    return bad("the last Transfer-Encoding must be chunked; the body's length cannot be determined");
  }
  if (chunked > 1) {
    return bad("Transfer-Encoding applies chunked more than once");
  }
  if (!unsupported.empty()) {
    const std::string name(unsupported.substr(0, 32));
    return fail(errc::not_implemented, "transfer coding \"" + name +
                                           "\" is not supported; send the body with chunked alone or with "
                                           "Content-Length");
  }
  return std::nullopt;
}

}  // namespace

std::optional<problem> framing_problem(const http::request_header<>& header) {
  if (auto te = transfer_encoding_problem(header)) {
    return te;
  }
  if (header.version() >= 11) {
    const std::size_t hosts = header.count(http::field::host);
    if (hosts == 0) {
      return fail(errc::malformed_request, "an HTTP/1.1 request must carry a Host header");
    }
    if (hosts > 1) {
      return fail(errc::malformed_request, "a request must carry exactly one Host header");
    }
  }
  return std::nullopt;
}

std::string_view origin_form(std::string_view target) {
  std::size_t scheme = 0;
  if (boost::algorithm::istarts_with(target, "http://")) {
    scheme = 7;
  } else if (boost::algorithm::istarts_with(target, "https://")) {
    scheme = 8;
  } else {
    return target;
  }
  const std::size_t path = target.find_first_of("/?", scheme);
  if (path == std::string_view::npos) {
    return "/";
  }
  return target.substr(path);
}

}  // namespace gesso::api
