#include "core/network_policy.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/test/unit_test.hpp>

using namespace gesso;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& text) {
  const auto a = boost::asio::ip::make_address(text);
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    return {b.begin(), b.end()};
  }
  const auto b = a.to_v6().to_bytes();
  return {b.begin(), b.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(network_policy)

BOOST_AUTO_TEST_CASE(every_non_public_range_is_refused) {
  for (const char* address : {
           "0.0.0.0",
           "0.1.2.3",
           "10.0.0.1",
           "10.255.255.255",
           "100.64.0.1",
           "100.127.255.254",
           "127.0.0.1",
           "127.255.0.1",
           "169.254.169.254",
           "169.254.0.1",
           "172.16.0.1",
           "172.31.255.255",
           "192.0.0.8",
           "192.0.2.1",
           "192.88.99.1",
           "192.168.1.1",
           "198.18.0.1",
           "198.19.255.255",
           "198.51.100.7",
           "203.0.113.9",
           "224.0.0.1",
           "239.255.255.250",
           "240.0.0.1",
           "255.255.255.255",
           "::",
           "::1",
           "::ffff:127.0.0.1",
           "::ffff:8.8.8.8",
           "::127.0.0.1",
           "64:ff9b::10.0.0.1",
           "64:ff9b::a9fe:a9fe",
           "2002:7f00:1::",
           "2002:c0a8:101::1",
           "100::1",
           "2001:db8::1",
           "2001::1",
           "fc00::1",
           "fd12:3456::1",
           "fe80::1",
           "febf::1",
           "fec0::1",
           "ff02::1",
           "ff0e::1",
       }) {
    BOOST_TEST(!non_public_reason(bytes_of(address)).empty(), address);
  }
}

BOOST_AUTO_TEST_CASE(public_addresses_pass) {
  for (const char* address :
       {"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255",
        "172.32.0.0", "192.167.255.255", "198.17.255.255", "223.255.255.255", "2606:4700:4700::1111",
        "2a00:1450:4001::200e", "64:ff9b::8.8.8.8", "2002:0808:0808::1"}) {
    BOOST_TEST(non_public_reason(bytes_of(address)).empty(), address);
  }
}

BOOST_AUTO_TEST_CASE(reasons_name_the_kind_of_address) {
  BOOST_TEST(non_public_reason(bytes_of("169.254.169.254")).find("metadata") != std::string_view::npos);
  BOOST_TEST(non_public_reason(bytes_of("127.0.0.1")).find("loopback") != std::string_view::npos);
  BOOST_TEST(non_public_reason(bytes_of("10.1.2.3")).find("private") != std::string_view::npos);
}

BOOST_AUTO_TEST_CASE(operators_can_allow_named_networks) {
  const auto allowed = parse_networks("10.20.0.0/16, fd00:1::/32,127.0.0.1/32");
  BOOST_TEST_REQUIRE(allowed.has_value(), (allowed ? "" : allowed.error().reason));
  const fetch_policy policy{*allowed};
  BOOST_TEST(policy.refusal_for(bytes_of("10.20.3.4")).empty());
  BOOST_TEST(!policy.refusal_for(bytes_of("10.21.3.4")).empty());
  BOOST_TEST(policy.refusal_for(bytes_of("fd00:1::5")).empty());
  BOOST_TEST(!policy.refusal_for(bytes_of("fd00:2::5")).empty());
  BOOST_TEST(policy.refusal_for(bytes_of("127.0.0.1")).empty());
  BOOST_TEST(!policy.refusal_for(bytes_of("127.0.0.2")).empty());
  BOOST_TEST(policy.refusal_for(bytes_of("8.8.8.8")).empty());
  BOOST_TEST(parse_networks("").value().empty());
  for (const char* bad : {"10.0.0.0", "10.0.0/8", "10.0.0.0/33", "300.0.0.0/8", "fd00::/129", "fd00:::1/8",
                          "1:2:3:4:5:6:7:8:9/64", "x/8", "10.0.0.0/8,", "10.0.0.0/-1"}) {
    const auto r = parse_networks(bad);
    // A trailing comma is harmless; everything else here is refused with the offending text.
    if (std::string_view(bad) == "10.0.0.0/8,") {
      BOOST_TEST(r.has_value());
    } else {
      BOOST_TEST(!r.has_value(), bad);
    }
  }
}

BOOST_AUTO_TEST_CASE(numeric_hosts_mean_what_the_resolver_reads) {
  struct spelling {
    const char* host;
    const char* address;
  };
  for (const auto& [host, address] : {
           spelling{"127.0.0.1", "127.0.0.1"},
           spelling{"127.1", "127.0.0.1"},
           spelling{"127.0.1", "127.0.0.1"},
           spelling{"0x7f.1", "127.0.0.1"},
           spelling{"0x7f.0.0.1", "127.0.0.1"},
           spelling{"0X7F000001", "127.0.0.1"},
           spelling{"2130706433", "127.0.0.1"},
           spelling{"017700000001", "127.0.0.1"},
           spelling{"0177.0.0.1", "127.0.0.1"},
           spelling{"0xa9fea9fe", "169.254.169.254"},
           spelling{"10.1", "10.0.0.1"},
           spelling{"0", "0.0.0.0"},
           spelling{"8.8.8.8", "8.8.8.8"},
           spelling{"[::1]", "::1"},
           spelling{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
           spelling{"[fd00::1]", "fd00::1"},
       }) {
    const auto a = literal_address(host);
    BOOST_TEST_REQUIRE(a.has_value(), host);
    BOOST_TEST(a->text() == address, host);
  }
  for (const char* name : {"example.com", "localhost", "127.0.0.1.nip.io", "0x7g.1", "1.2.3.4.5", "256.1.1.1",
                           "[127.0.0.1]", "[::1", "", "08.1.1.1", "4294967296"}) {
    BOOST_TEST(!literal_address(name).has_value(), name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
