#include "core/ids.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <set>

using namespace gesso;

BOOST_AUTO_TEST_SUITE(ids)

BOOST_AUTO_TEST_CASE(task_ids_have_the_documented_shape_and_sort_by_time) {
  const std::array<std::uint8_t, 10> zeros{};
  const std::array<std::uint8_t, 10> ones{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const std::string early = format_task_id(1'700'000'000'000ULL, ones);
  const std::string late = format_task_id(1'700'000'000'001ULL, zeros);
  BOOST_TEST(early.size() == 31U);
  BOOST_TEST(early.starts_with("task_"));
  BOOST_TEST(early < late);  // time first: creation order survives randomness
  BOOST_TEST(is_task_id(early));
  BOOST_TEST(is_task_id(late));
  BOOST_TEST(is_task_id(new_task_id()));
}

BOOST_AUTO_TEST_CASE(is_task_id_rejects_everything_else) {
  const std::string good = new_task_id();
  BOOST_TEST(!is_task_id(""));
  BOOST_TEST(!is_task_id("task_"));
  BOOST_TEST(!is_task_id(good.substr(0, good.size() - 1)));
  BOOST_TEST(!is_task_id(good + "0"));
  BOOST_TEST(!is_task_id("Task_" + good.substr(5)));
  std::string upper = good;
  upper[10] = 'U';  // not in the alphabet
  BOOST_TEST(!is_task_id(upper));
  std::string high = good;
  high[5] = '8';  // the top two bits of 130 are always zero
  BOOST_TEST(!is_task_id(high));
  BOOST_TEST(!is_task_id("../../etc/passwd"));
}

BOOST_AUTO_TEST_CASE(random_ids_do_not_repeat) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    BOOST_TEST(seen.insert(new_task_id()).second);
    BOOST_TEST(seen.insert(new_request_id()).second);
    BOOST_TEST(seen.insert(new_api_key()).second);
  }
}

BOOST_AUTO_TEST_CASE(request_ids_have_the_fixed_prefix) {
  const std::string id = new_request_id();
  BOOST_TEST(id.starts_with("req_"));
  BOOST_TEST(id.size() == 24U);
}

BOOST_AUTO_TEST_CASE(api_keys_are_sk_plus_43_base62_characters) {
  const std::string key = new_api_key();
  BOOST_TEST(key.size() == 46U);
  BOOST_TEST(key.starts_with("sk-"));
  BOOST_TEST(is_api_key_shaped(key));
  BOOST_TEST(api_key_display_prefix(key) == key.substr(0, 11));
  BOOST_TEST(!is_api_key_shaped("sk-short"));
  BOOST_TEST(!is_api_key_shaped("pk-" + key.substr(3)));
  BOOST_TEST(!is_api_key_shaped(key + "!"));
  BOOST_TEST(!is_api_key_shaped(key.substr(0, 20) + " " + key.substr(21)));
}

BOOST_AUTO_TEST_CASE(key_hash_is_hex_sha256) {
  BOOST_TEST(hash_api_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string key = new_api_key();
  BOOST_TEST(hash_api_key(key).find(key) == std::string::npos);
  BOOST_TEST(hash_api_key(key).size() == 64U);
}

BOOST_AUTO_TEST_SUITE_END()
