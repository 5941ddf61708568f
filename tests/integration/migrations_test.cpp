// `gesso migrate` on a fresh database, several nodes at once: applied once, in order, recorded.

#include "storage/migrations.hpp"
#include "storage/connection_pool.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>

using namespace gesso;
using namespace gesso::testing;

BOOST_AUTO_TEST_SUITE(migrations)

BOOST_AUTO_TEST_CASE(concurrent_migrations_apply_each_file_exactly_once) {
  cluster().psql("CREATE DATABASE migrate_race");
  std::string url = cluster().url();
  url.replace(url.find("dbname=postgres"), 15, "dbname=migrate_race");
  std::vector<std::thread> nodes;
  std::vector<storage::migrate_report> reports(4);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    nodes.emplace_back([&, i] {
      storage::connection_pool pool({.url = url});
      reports[i] = storage::migrate(pool);
    });
  }
  for (auto& t : nodes) {
    t.join();
  }
  std::size_t applied = 0;
  for (const auto& r : reports) {
    applied += r.applied.size();
    BOOST_TEST(r.current_version == storage::embedded_migrations().back().version);
  }
  BOOST_TEST(applied == storage::embedded_migrations().size());
  storage::connection_pool pool({.url = url});
  BOOST_TEST(storage::migrate(pool).applied.empty());  // idempotent
}

BOOST_AUTO_TEST_CASE(migrations_are_numbered_in_order) {
  int previous = 0;
  for (const auto& m : storage::embedded_migrations()) {
    BOOST_TEST(m.version == previous + 1);
    previous = m.version;
  }
}

BOOST_AUTO_TEST_SUITE_END()
