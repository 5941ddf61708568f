// The storage interface against a real PostgreSQL: the create transaction, queries, keys, grants.

#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "storage/accounts.hpp"
#include "storage/tasks.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;
using namespace gesso::testing;

namespace {

struct store_fixture {
  storage::connection_pool pool{{.url = cluster().url()}};
  gesso::catalog models = gesso::catalog::builtin();

  create_request request_for(const std::string& model_id) {
    create_request r;
    r.model = models.find(model_id);
    r.prompt = "a quiet harbour";
    r.aspect_ratio = r.model->default_aspect_ratio;
    r.image_urls = {"https://example.com/in.png"};
    return r;
  }

  std::pair<std::int64_t, std::string> account(std::int64_t credits) {
    const std::string key = new_api_key();
    const auto s =
        storage::create_account(pool, "store", credits, hash_api_key(key), api_key_display_prefix(key));
    return {s.id, key};
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store, store_fixture)

BOOST_AUTO_TEST_CASE(create_then_find_round_trips_every_field) {
  const auto [id, key] = account(100);
  const auto request = request_for("vendor1-flash");
  const std::string task_id = new_task_id();
  const auto created = storage::create_task(pool, hash_api_key(key), request, task_id, "req_test");
  BOOST_TEST_REQUIRE(created.has_value());
  BOOST_TEST(created->credits == 20);
  const auto found = storage::find_task(pool, hash_api_key(key), task_id);
  BOOST_TEST_REQUIRE(found.has_value());
  BOOST_TEST(found->account_id == id);
  BOOST_TEST(found->model_id == "vendor1-flash");
  BOOST_TEST((found->type == task_type::video));
  BOOST_TEST((found->status == task_status::queued));
  BOOST_TEST(found->created_at == created->created_at);
  BOOST_TEST(!found->video_object.has_value());
  const std::string row = cluster().psql(
      "SELECT prompt, aspect_ratio, image_urls::text, request_id, engine, "
      "max_attempts, deadline_at > now() FROM tasks WHERE id = '" +
      task_id + "'");
  BOOST_TEST(row == "a quiet harbour|16:9|[\"https://example.com/in.png\"]|req_test|builtin|3|t\n");
  const auto summary = storage::show_account(pool, id);
  BOOST_TEST(summary->balance == 80);
  BOOST_TEST(summary->ledger_balance() == 80);
}

BOOST_AUTO_TEST_CASE(insufficient_credits_and_bad_keys_write_nothing) {
  const auto [id, key] = account(5);
  const auto poor =
      storage::create_task(pool, hash_api_key(key), request_for("vendor4-2"), new_task_id(), "r");
  BOOST_TEST_REQUIRE(!poor.has_value());
  BOOST_TEST((poor.error().code == errc::insufficient_credits));
  const auto stranger =
      storage::create_task(pool, hash_api_key(new_api_key()), request_for("vendor4-2"), new_task_id(), "r");
  BOOST_TEST_REQUIRE(!stranger.has_value());
  BOOST_TEST((stranger.error().code == errc::unauthorized));
  const auto summary = storage::show_account(pool, id);
  BOOST_TEST(summary->balance == 5);
  BOOST_TEST(summary->charged == 0);
  BOOST_TEST(summary->tasks_by_status[0] == 0);
}

BOOST_AUTO_TEST_CASE(a_task_is_visible_only_to_its_account) {
  const auto [alice, alice_key] = account(100);
  const auto [bob, bob_key] = account(100);
  const std::string task_id = new_task_id();
  BOOST_TEST_REQUIRE(
      storage::create_task(pool, hash_api_key(alice_key), request_for("vendor4-2"), task_id, "r")
          .has_value());
  const auto foreign = storage::find_task(pool, hash_api_key(bob_key), task_id);
  BOOST_TEST_REQUIRE(!foreign.has_value());
  BOOST_TEST((foreign.error().code == errc::not_found));
  BOOST_TEST(storage::find_task(pool, hash_api_key(alice_key), task_id).has_value());
}

BOOST_AUTO_TEST_CASE(revoked_keys_stop_authenticating) {
  const auto [id, key] = account(10);
  BOOST_TEST(storage::authenticate(pool, hash_api_key(key)).value() == id);
  const auto revoked = storage::revoke_key_by_hash(pool, hash_api_key(key));
  BOOST_TEST_REQUIRE(revoked.has_value());
  BOOST_TEST(revoked->revoked_at.has_value());
  const auto again = storage::revoke_key(pool, revoked->id);  // revoking twice keeps the first time
  BOOST_TEST((again->revoked_at == revoked->revoked_at));
  BOOST_TEST((storage::authenticate(pool, hash_api_key(key)).error().code == errc::unauthorized));
}

BOOST_AUTO_TEST_CASE(grants_are_ledger_rows) {
  const auto [id, key] = account(0);
  const auto granted = storage::grant_credits(pool, id, 42, "test");
  BOOST_TEST_REQUIRE(granted.has_value());
  BOOST_TEST(granted->balance == 42);
  BOOST_TEST(granted->granted == 42);
  BOOST_TEST((storage::grant_credits(pool, 99'999'999, 1, "nobody").error().code == errc::not_found));
  BOOST_TEST(storage::ledger_mismatches(pool).empty());
}

BOOST_AUTO_TEST_CASE(an_unreachable_database_is_unavailable_not_a_crash) {
  storage::connection_pool nowhere(
      {.url = "host=/nonexistent-socket-dir port=5432 user=gesso dbname=postgres"});
  BOOST_CHECK_THROW(nowhere.ping(), storage::unavailable);
  BOOST_CHECK_THROW(storage::authenticate(nowhere, hash_api_key(new_api_key())), storage::unavailable);
}

BOOST_AUTO_TEST_SUITE_END()
