// Claims between accounts (sql/011, set-based since sql/013): one account's thousand queued tasks do not
// delay another account's single task past the next claim, and an account's concurrency cap holds against
// concurrent claims.

#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "storage/account_view.hpp"
#include "storage/accounts.hpp"
#include "storage/task_queue.hpp"
#include "storage/tasks.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <set>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace std::chrono_literals;

namespace {

struct claims_fixture {
  storage::connection_pool pool{{.url = cluster().url()}};
  gesso::catalog models = gesso::catalog::builtin();

  claims_fixture() {
    cluster().psql("UPDATE tasks SET status = 3, finished_at = now() WHERE status IN (1, 2)");
  }

  struct owner {
    std::int64_t id = 0;
    std::string key_hash;
  };
  owner account() {
    const std::string key = new_api_key();
    owner o{0, hash_api_key(key)};
    o.id = storage::create_account(pool, "claims", 1'000'000, o.key_hash, api_key_display_prefix(key)).id;
    return o;
  }
  std::string create(const owner& o) {
    create_request r;
    r.model = models.find("vendor4-2");
    r.prompt = "p";
    r.aspect_ratio = "1:1";
    const std::string id = new_task_id();
    BOOST_REQUIRE(storage::create_task(pool, o.key_hash, r, id, "req_c").has_value());
    return id;
  }
  std::int64_t running(const owner& o) {
    return std::stoll(cluster().psql("SELECT count(*) FROM tasks WHERE status = 2 AND account_id = " +
                                     std::to_string(o.id)));
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fair_claims, claims_fixture)

BOOST_AUTO_TEST_CASE(a_single_task_is_claimed_in_the_next_round_behind_a_thousand) {
  const owner busy = account();
  const owner lone = account();
  for (int i = 0; i < 1000; ++i) {
    create(busy);
  }
  const std::string single = create(lone);  // the newest task of all
  const auto round = storage::claim_due(pool, "w1", 8, 30s);
  BOOST_TEST(round.size() == 8U);
  BOOST_TEST(std::any_of(round.begin(), round.end(), [&](const auto& t) { return t.id == single; }));
  // And the busy account's tasks still go oldest first.
  const std::string oldest =
      cluster().psql("SELECT id FROM tasks WHERE account_id = " + std::to_string(busy.id) +
                     " ORDER BY created_at, id LIMIT 1");
  BOOST_TEST(std::any_of(round.begin(), round.end(), [&](const auto& t) { return t.id + "\n" == oldest; }));
}

// More accounts than the batch: each claim takes one task from each of as many accounts as the batch
// holds (every account keeps due tasks through these rounds: 40 accounts of 3 tasks, 4 rounds of 16).
BOOST_AUTO_TEST_CASE(a_batch_serves_as_many_accounts_as_it_holds) {
  for (int a = 0; a < 40; ++a) {
    const owner o = account();
    for (int i = 0; i < 3; ++i) {
      create(o);
    }
  }
  for (int round = 0; round < 4; ++round) {
    const auto claimed = storage::claim_due(pool, "w1", 16, 30s);
    BOOST_TEST(claimed.size() == 16U);
    std::set<std::string> accounts;
    for (const auto& t : claimed) {
      accounts.insert(cluster().psql("SELECT account_id FROM tasks WHERE id = '" + t.id + "'"));
    }
    BOOST_TEST(accounts.size() == 16U, "round " << round);
  }
}

BOOST_AUTO_TEST_CASE(a_cap_holds_against_concurrent_claims) {
  const owner capped = account();
  BOOST_TEST(storage::set_account_limits(pool, capped.id, {}, {}, {.change = true, .value = 3}).has_value());
  for (int i = 0; i < 40; ++i) {
    create(capped);
  }
  std::atomic<int> most{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 6; ++w) {
    workers.emplace_back([&, w] {
      storage::connection_pool own{{.url = cluster().url()}};
      while (!stop) {
        const auto batch = storage::claim_due(own, "w" + std::to_string(w), 4, 30s);
        if (!batch.empty()) {  // right after a claim, while its tasks run
          const int now_running = static_cast<int>(running(capped));
          int seen = most.load();
          while (now_running > seen && !most.compare_exchange_weak(seen, now_running)) {
          }
        }
        for (const auto& t : batch) {
          std::this_thread::sleep_for(5ms);
          storage::end_lease(own, storage::lease_end::succeeded(t.id, t.lease_token, {.image = "x.png"}));
        }
      }
    });
  }
  for (int i = 0;
       i < 1000 && cluster().psql("SELECT count(*) FROM tasks WHERE status IN (1, 2) AND account_id = " +
                                  std::to_string(capped.id)) != "0\n";
       ++i) {
    std::this_thread::sleep_for(10ms);
  }
  stop = true;
  for (auto& t : workers) {
    t.join();
  }
  BOOST_TEST(most.load() <= 3);
  BOOST_TEST(most.load() >= 1);
  BOOST_TEST(cluster().psql("SELECT count(*) FROM tasks WHERE status = 3 AND account_id = " +
                            std::to_string(capped.id)) == "40\n");
}

BOOST_AUTO_TEST_CASE(the_default_cap_holds_for_accounts_without_their_own) {
  const owner plain = account();
  const owner own = account();
  BOOST_TEST(
      storage::set_account_limits(pool, own.id, {}, {}, {.change = true, .value = 0}).has_value());  // none
  for (int i = 0; i < 10; ++i) {
    create(plain);
    create(own);
  }
  const auto first = storage::claim_due(pool, "w1", 20, 30s, 2);
  BOOST_TEST(running(plain) == 2);
  BOOST_TEST(running(own) == 10);
  BOOST_TEST(first.size() == 12U);
  BOOST_TEST(storage::claim_due(pool, "w1", 20, 30s, 2).empty());  // no room, nothing else due
  // A running task that ends makes room for one more.
  for (const auto& t : first) {
    if (cluster().psql("SELECT account_id FROM tasks WHERE id = '" + t.id + "'") ==
        std::to_string(plain.id) + "\n") {
      BOOST_TEST(
          storage::end_lease(pool, storage::lease_end::succeeded(t.id, t.lease_token, {.image = "x.png"})));
      break;
    }
  }
  BOOST_TEST(storage::claim_due(pool, "w1", 20, 30s, 2).size() == 1U);
  BOOST_TEST(running(plain) == 2);
}

BOOST_AUTO_TEST_SUITE_END()
