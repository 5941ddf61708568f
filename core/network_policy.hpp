#pragma once
// Which addresses Gesso may contact on a stranger's behalf (input image URLs): public unicast only,
// unless an operator allows named networks (on-premise image stores).

#include "core/error.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gesso {

/// An IPv4 or IPv6 network, "10.0.0.0/8" or "fd00::/8".
struct ip_network {
  std::array<std::uint8_t, 16> bytes{};
  std::size_t length = 4;  ///< 4 for IPv4, 16 for IPv6
  int prefix = 0;
};

/// Parses a comma-separated list of networks (an empty text is an empty list).
checked<std::vector<ip_network>> parse_networks(std::string_view text);

/// Whether `address` (4 or 16 bytes, network order) lies in `network`.
bool network_contains(const ip_network& network, std::span<const std::uint8_t> address);

/// Why `address` (4 or 16 bytes) is not a public unicast address — loopback, private, link-local and
/// cloud metadata, CGNAT, multicast, reserved, documentation, IPv4-mapped or -compatible IPv6, NAT64 or
/// 6to4 carrying such an IPv4 — or an empty view when it is public.
std::string_view non_public_reason(std::span<const std::uint8_t> address);

/// An address as 4 (IPv4) or 16 (IPv6) bytes in network order.
struct ip_address {
  std::array<std::uint8_t, 16> bytes{};
  std::size_t length = 4;

  std::span<const std::uint8_t> view() const { return {bytes.data(), length}; }
  std::string text() const;
};

/// The address a URL host denotes with no name lookup, read the way the system resolver reads it:
/// "[::1]" (or "::1", as URL parsers hand it over), dotted quads and every other numeric spelling ("127.1",
/// "0x7f.1", "2130706433", "0177.0.0.1"). Nothing for a host name.
std::optional<ip_address> literal_address(std::string_view host);

/// The destinations a fetch may connect to.
struct fetch_policy {
  std::vector<ip_network> allowed;                   ///< non-public networks the operator allows anyway
  std::vector<std::string> webhook_http_hosts = {};  ///< hosts a callback_url may reach over plain http

  /// Empty when `address` may be contacted, otherwise the reason it may not.
  std::string refusal_for(std::span<const std::uint8_t> address) const;
};

}  // namespace gesso
