#include "core/network_policy.hpp"

#include <arpa/inet.h>

#include <algorithm>

#include <charconv>
#include <cstring>

namespace gesso {
namespace {

struct blocked_range {
  ip_network network;
  std::string_view reason;
};

ip_network v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, int prefix) {
  ip_network n;
  n.bytes = {a, b, c, d};
  n.length = 4;
  n.prefix = prefix;
  return n;
}

ip_network v6(std::initializer_list<std::uint8_t> leading, int prefix) {
  ip_network n;
  std::copy(leading.begin(), leading.end(), n.bytes.begin());
  n.length = 16;
  n.prefix = prefix;
  return n;
}

const std::vector<blocked_range>& ipv4_blocked() {
  static const std::vector<blocked_range> ranges = {
      {v4(0, 0, 0, 0, 8), "\"this network\" (0.0.0.0/8)"},
      {v4(10, 0, 0, 0, 8), "a private address (10.0.0.0/8)"},
      {v4(100, 64, 0, 0, 10), "a carrier-grade NAT address (100.64.0.0/10)"},
      {v4(127, 0, 0, 0, 8), "a loopback address"},
      {v4(169, 254, 0, 0, 16), "a link-local address (cloud metadata lives here)"},
      {v4(172, 16, 0, 0, 12), "a private address (172.16.0.0/12)"},
      {v4(192, 0, 0, 0, 24), "an IETF protocol address (192.0.0.0/24)"},
      {v4(192, 0, 2, 0, 24), "a documentation address"},
      {v4(192, 88, 99, 0, 24), "a 6to4 relay address"},
      {v4(192, 168, 0, 0, 16), "a private address (192.168.0.0/16)"},
      {v4(198, 18, 0, 0, 15), "a benchmarking address (198.18.0.0/15)"},
      {v4(198, 51, 100, 0, 24), "a documentation address"},
      {v4(203, 0, 113, 0, 24), "a documentation address"},
      {v4(224, 0, 0, 0, 4), "a multicast address"},
      {v4(240, 0, 0, 0, 4), "a reserved or broadcast address"},
  };
  return ranges;
}

const std::vector<blocked_range>& ipv6_blocked() {
  static const std::vector<blocked_range> ranges = {
      {v6({}, 128), "the unspecified address (::)"},
      {v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128), "a loopback address (::1)"},
      {v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96), "an IPv4-mapped IPv6 address"},
      {v6({}, 96), "an IPv4-compatible IPv6 address"},
      {v6({0x01, 0x00}, 64), "a discard-only address (100::/64)"},
      {v6({0x20, 0x01, 0x0d, 0xb8}, 32), "a documentation address (2001:db8::/32)"},
      {v6({0x20, 0x01}, 23), "an IETF protocol address (2001::/23, Teredo included)"},
      {v6({0xfc}, 7), "a unique-local address (fc00::/7)"},
      {v6({0xfe, 0x80}, 10), "a link-local address (fe80::/10)"},
      {v6({0xfe, 0xc0}, 10), "a site-local address (fec0::/10)"},
      {v6({0xff}, 8), "a multicast address"},
  };
  return ranges;
}

std::string_view ipv4_reason(std::span<const std::uint8_t> a) {
  for (const auto& r : ipv4_blocked()) {
    if (network_contains(r.network, a)) {
      return r.reason;
    }
  }
  return {};
}

namespace {

// Dotted-quad IPv4 into n.bytes; false when `address` is not exactly that.
bool read_ipv4(std::string_view address, ip_network& n) {
  n.length = 4;
  std::size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned octet = 256;
    const auto [end, ec] = std::from_chars(address.data() + at, address.data() + address.size(), octet);
    if (ec != std::errc{} || octet > 255) {
      return false;
    }
    n.bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(octet);
    at = static_cast<std::size_t>(end - address.data());
    if (i < 3 && (at >= address.size() || address[at++] != '.')) {
      return false;
    }
  }
  return at == address.size();
}

// IPv6 groups of hex digits with at most one "::" into n.bytes; false when `address` is not that.
bool read_ipv6(std::string_view address, ip_network& n) {
  n.length = 16;
  std::vector<std::uint16_t> head;
  std::vector<std::uint16_t> tail;
  bool gap = false;
  std::size_t at = 0;
  if (address.starts_with("::")) {
    gap = true;
    at = 2;
  }
  while (at < address.size()) {
    std::uint16_t group = 0;
    const auto [end, ec] = std::from_chars(address.data() + at, address.data() + address.size(), group, 16);
    if (ec != std::errc{} || end - (address.data() + at) > 4) {
      return false;
    }
    (gap ? tail : head).push_back(group);
    at = static_cast<std::size_t>(end - address.data());
    if (at == address.size()) {
      break;
    }
    if (address.substr(at, 2) == "::" && !gap) {
      gap = true;
      at += 2;
    } else if (address[at] == ':' && at + 1 < address.size()) {
      ++at;
    } else {
      return false;
    }
  }
  if (head.size() + tail.size() > 8 || (!gap && head.size() != 8)) {
    return false;
  }
  std::size_t i = 0;
  for (const auto g : head) {
    n.bytes[i++] = static_cast<std::uint8_t>(g >> 8);
    n.bytes[i++] = static_cast<std::uint8_t>(g);
  }
  i = 16 - tail.size() * 2;
  for (const auto g : tail) {
    n.bytes[i++] = static_cast<std::uint8_t>(g >> 8);
    n.bytes[i++] = static_cast<std::uint8_t>(g);
  }
  return true;
}

}  // namespace

checked<ip_network> parse_network(std::string_view text) {
  std::string bad(1, '"');  // appended, not "\"" + …: g++ 12 -O2 warns falsely on that (GCC PR 105329)
  bad.append(text).append("\" is not a network such as 10.0.0.0/8 or fd00::/8");
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    return refusal{bad};
  }
  const std::string_view address = text.substr(0, slash);
  int prefix = -1;
  const auto [end, ec] = std::from_chars(text.data() + slash + 1, text.data() + text.size(), prefix);
  if (ec != std::errc{} || end != text.data() + text.size() || prefix < 0) {
    return refusal{bad};
  }
  ip_network n;
  const bool v4 = address.find(':') == std::string_view::npos;
  if (!(v4 ? read_ipv4(address, n) : read_ipv6(address, n)) || prefix > (v4 ? 32 : 128)) {
    return refusal{bad};
  }
  n.prefix = prefix;
  return n;
}

}  // namespace

checked<std::vector<ip_network>> parse_networks(std::string_view text) {
  std::vector<ip_network> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') {
      item.remove_prefix(1);
    }
    while (!item.empty() && item.back() == ' ') {
      item.remove_suffix(1);
    }
    if (!item.empty()) {
      auto n = parse_network(item);
      if (!n) {
        return n.error();
      }
      out.push_back(*n);
    }
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

bool network_contains(const ip_network& network, std::span<const std::uint8_t> address) {
  if (address.size() != network.length) {
    return false;
  }
  int bits = network.prefix;
  for (std::size_t i = 0; i < address.size() && bits > 0; ++i, bits -= 8) {
    const auto mask = static_cast<std::uint8_t>(bits >= 8 ? 0xFF : 0xFF << (8 - bits));
    if ((address[i] & mask) != (network.bytes[i] & mask)) {
      return false;
    }
  }
  return true;
}

std::string_view non_public_reason(std::span<const std::uint8_t> address) {
  if (address.size() == 4) {
    return ipv4_reason(address);
  }
  if (address.size() != 16) {
    return "not an IP address";
  }
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the IPv4 address they carry.
  static const ip_network nat64 = v6({0x00, 0x64, 0xff, 0x9b}, 96);
  static const ip_network six_to_four = v6({0x20, 0x02}, 16);
  if (network_contains(nat64, address) && !ipv4_reason(address.subspan(12, 4)).empty()) {
    return "a NAT64 address carrying a non-public IPv4 address";
  }
  if (network_contains(six_to_four, address) && !ipv4_reason(address.subspan(2, 4)).empty()) {
    return "a 6to4 address carrying a non-public IPv4 address";
  }
  for (const auto& r : ipv6_blocked()) {
    if (network_contains(r.network, address)) {
      return r.reason;
    }
  }
  return {};
}

std::string ip_address::text() const {
  std::array<char, INET6_ADDRSTRLEN> out{};
  if (inet_ntop(length == 4 ? AF_INET : AF_INET6, bytes.data(), out.data(), out.size()) == nullptr) {
    return "?";
  }
  return out.data();
}

std::optional<ip_address> literal_address(std::string_view host) {
  ip_address a;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string_view::npos) {
      return std::nullopt;  // brackets hold only IPv6
    }
  }
  if (host.find(':') != std::string_view::npos) {
    const std::string inside(host);
    if (inet_pton(AF_INET6, inside.c_str(), a.bytes.data()) != 1) {
      return std::nullopt;
    }
    a.length = 16;
    return a;
  }
  // inet_aton is what the resolver applies to a numeric host (decimal, octal and hexadecimal parts,
  // one to four of them). It ignores what follows a space, so only the characters a number may be
  // spelt with are let through to it.
  const bool numeric_spelling = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' ||
           c == 'X' || c == '.';
  });
  if (!numeric_spelling) {
    return std::nullopt;
  }
  const std::string text(host);
  in_addr v4{};
  if (inet_aton(text.c_str(), &v4) == 0) {
    return std::nullopt;
  }
  std::memcpy(a.bytes.data(), &v4.s_addr, 4);
  a.length = 4;
  return a;
}

std::string fetch_policy::refusal_for(std::span<const std::uint8_t> address) const {
  const std::string_view reason = non_public_reason(address);
  if (reason.empty()) {
    return {};
  }
  for (const auto& n : allowed) {
    if (network_contains(n, address)) {
      return {};
    }
  }
  return std::string(reason);
}

}  // namespace gesso
