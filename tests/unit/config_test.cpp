#include "core/config.hpp"

#include <boost/test/unit_test.hpp>

#include <vector>

using namespace gesso;

namespace {
checked<config> load(std::vector<const char*> env) {
  return load_config(env);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(config)

BOOST_AUTO_TEST_CASE(defaults_apply_when_nothing_is_set) {
  const auto c = load({"PATH=/bin", "HOME=/root"});
  BOOST_TEST_REQUIRE(c.has_value());
  BOOST_TEST(c->listen_host == "0.0.0.0");
  BOOST_TEST(c->listen_port == 8080);
  BOOST_TEST(c->db_pool_size == 16);
  BOOST_TEST(c->max_body_bytes == 8U * 1024 * 1024);
  BOOST_TEST(c->log_level == "info");
}

BOOST_AUTO_TEST_CASE(reads_every_kind_of_value) {
  const auto c = load({"GESSO_DATABASE_URL=postgresql:///x", "GESSO_LISTEN=[::1]:0", "GESSO_DB_POOL_SIZE=4",
                       "GESSO_READ_TIMEOUT_MS=1500", "GESSO_LOG_LEVEL=warn", "GESSO_MAX_BODY_BYTES=2048"});
  BOOST_TEST_REQUIRE(c.has_value());
  BOOST_TEST(c->database_url == "postgresql:///x");
  BOOST_TEST(c->listen_host == "::1");
  BOOST_TEST(c->listen_port == 0);
  BOOST_TEST(c->db_pool_size == 4);
  BOOST_TEST(c->read_timeout.count() == 1500);
  BOOST_TEST(c->log_level == "warn");
  BOOST_TEST(c->max_body_bytes == 2048U);
}

// Every documented variable is read: GESSO_FFMPEG was accepted and then ignored until 2026-11.
BOOST_AUTO_TEST_CASE(reads_the_text_and_address_settings) {
  const auto c = load({"GESSO_FFMPEG=/opt/ffmpeg/bin/ffmpeg", "GESSO_CATALOG=/etc/gesso/catalog.json",
                       "GESSO_WORKER_ID=w-7", "GESSO_ADMIN_LISTEN=127.0.0.1:9090", "GESSO_WORKER_LISTEN=",
                       "GESSO_MEDIA_RETENTION_HOURS=48", "GESSO_PUBLIC_URL=https://gesso.example/"});
  BOOST_TEST_REQUIRE(c.has_value());
  BOOST_TEST(c->ffmpeg == "/opt/ffmpeg/bin/ffmpeg");
  BOOST_TEST(c->catalog_path == "/etc/gesso/catalog.json");
  BOOST_TEST(c->worker_id == "w-7");
  BOOST_TEST(c->admin_listen_host == "127.0.0.1");
  BOOST_TEST_REQUIRE(c->admin_listen_port.has_value());
  BOOST_TEST(*c->admin_listen_port == 9090);
  BOOST_TEST(!c->worker_listen_port.has_value());
  BOOST_TEST(c->media_retention.count() == 48);
  BOOST_TEST(c->public_url == "https://gesso.example");
}

BOOST_AUTO_TEST_CASE(refuses_bad_values_with_one_line_naming_the_variable) {
  const std::pair<const char*, const char*> cases[] = {
      {"GESSO_LISTEN=8080", "GESSO_LISTEN"},
      {"GESSO_LISTEN=host:99999", "GESSO_LISTEN"},
      {"GESSO_LISTEN=::1:80", "GESSO_LISTEN"},
      {"GESSO_DB_POOL_SIZE=0", "GESSO_DB_POOL_SIZE"},
      {"GESSO_DB_POOL_SIZE=ten", "GESSO_DB_POOL_SIZE"},
      {"GESSO_READ_TIMEOUT_MS=5s", "GESSO_READ_TIMEOUT_MS"},
      {"GESSO_LOG_LEVEL=loud", "GESSO_LOG_LEVEL"},
      {"GESSO_LISTN=0.0.0.0:1", "unknown setting GESSO_LISTN"},
  };
  for (const auto& [entry, expected] : cases) {
    const auto c = load({entry});
    BOOST_TEST_REQUIRE(!c.has_value(), entry);
    BOOST_TEST(c.error().reason.find(expected) != std::string::npos, c.error().reason);
    BOOST_TEST(c.error().reason.find('\n') == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
