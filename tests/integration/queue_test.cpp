// The worker side of the task lifecycle against a real PostgreSQL: disjoint claims, lease
// compare-and-set, retries that never move a task backwards, and refunds exactly once.

#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "storage/accounts.hpp"
#include "storage/task_queue.hpp"
#include "storage/tasks.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <thread>

using namespace gesso;
using gesso::storage::lease_end;
using namespace gesso::testing;
using namespace std::chrono_literals;

namespace {

// Every test drains the whole queue first and works on its own account, so tests do not see each
// other's tasks (they run one after another in this process).
struct queue_fixture {
  storage::connection_pool pool{{.url = cluster().url()}};
  gesso::catalog models = gesso::catalog::builtin();
  std::int64_t account = 0;
  std::string key_hash;

  queue_fixture() {
    cluster().psql("UPDATE tasks SET status = 3, finished_at = now() WHERE status IN (1, 2)");
    const std::string key = new_api_key();
    key_hash = hash_api_key(key);
    account = storage::create_account(pool, "queue", 1000, key_hash, api_key_display_prefix(key)).id;
  }

  std::string create(const std::string& model_id = "vendor4-2") {
    create_request r;
    r.model = models.find(model_id);
    r.prompt = "queued";
    r.aspect_ratio = r.model->default_aspect_ratio;
    const std::string id = new_task_id();
    BOOST_REQUIRE(storage::create_task(pool, key_hash, r, id, "req_q").has_value());
    return id;
  }

  storage::account_summary summary() { return storage::show_account(pool, account).value(); }

  std::string column(const std::string& id, const std::string& expression) {
    return cluster().psql("SELECT " + expression + " FROM tasks WHERE id = '" + id + "'");
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(queue, queue_fixture)

BOOST_AUTO_TEST_CASE(concurrent_claims_are_disjoint_and_complete) {
  std::set<std::string> created;
  for (int i = 0; i < 40; ++i) {
    created.insert(create());
  }
  BOOST_TEST(storage::count_due(pool) == 40);
  std::vector<std::vector<storage::claimed_task>> got(4);
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < got.size(); ++w) {
    workers.emplace_back([&, w] {
      storage::connection_pool own({.url = cluster().url()});
      for (;;) {
        auto batch = storage::claim_due(own, "worker-" + std::to_string(w), 3, 30s);
        if (batch.empty()) {
          break;
        }
        got[w].insert(got[w].end(), batch.begin(), batch.end());
      }
    });
  }
  for (auto& t : workers) {
    t.join();
  }
  std::set<std::string> claimed;
  std::size_t total = 0;
  for (const auto& list : got) {
    for (const auto& t : list) {
      claimed.insert(t.id);
      ++total;
      BOOST_TEST(t.attempt == 1);
      BOOST_TEST(t.prompt == "queued");
    }
  }
  BOOST_TEST(total == 40U);  // nobody claimed a task twice
  BOOST_TEST((claimed == created));
  BOOST_TEST(storage::count_due(pool) == 0);
}

BOOST_AUTO_TEST_CASE(success_is_guarded_by_the_lease_token) {
  const std::string id = create();
  const auto held = storage::claim_due(pool, "w1", 10, 30s);
  BOOST_TEST_REQUIRE(held.size() == 1U);
  BOOST_TEST(column(id, "status") == "2\n");
  BOOST_TEST(!storage::end_lease(pool, lease_end::succeeded(id, "00000000-0000-0000-0000-000000000000", {})));
  BOOST_TEST(storage::end_lease(pool, lease_end::succeeded(id, held[0].lease_token, {.image = "ab/cd.png"})));
  BOOST_TEST(column(id, "status || ' ' || image_object") == "3 ab/cd.png\n");
  BOOST_TEST(!storage::end_lease(
      pool, lease_end::succeeded(id, held[0].lease_token, {})));  // final: no second write
  BOOST_TEST(!storage::end_lease(pool, lease_end::failed(id, held[0].lease_token, "late")));
  BOOST_TEST(summary().refunded == 0);  // a successful task is never refunded
  BOOST_TEST(summary().balance == 1000 - 6);
}

BOOST_AUTO_TEST_CASE(a_batch_of_successes_applies_each_held_lease_and_only_those) {
  const std::string a = create();
  const std::string b = create();
  const std::string c = create();
  const auto held = storage::claim_due(pool, "w1", 10, 30s);
  BOOST_TEST_REQUIRE(held.size() == 3U);
  std::map<std::string, std::string> token;
  for (const auto& t : held) {
    token[t.id] = t.lease_token;
  }
  BOOST_TEST_REQUIRE(
      storage::end_lease(pool, lease_end::succeeded(c, token[c], {.image = "c.png"})));  // already final
  const std::vector<bool> applied = storage::end_leases(
      pool, {lease_end::succeeded(a, token[a], {.image = "dir/a \"quoted\" \\ name.png"}),
             lease_end::succeeded(b, "00000000-0000-0000-0000-000000000000", {.image = "b.png"}),  // lost
             lease_end::succeeded(c, token[c], {.image = "again.png"}),
             lease_end::succeeded("task_unknown", token[a], {.video = "v.mp4", .audio = "a.m4a"})});
  BOOST_TEST((applied == std::vector<bool>{true, false, false, false}));
  BOOST_TEST(column(a, "status || ' ' || image_object || ' ' || coalesce(video_object, 'null')") ==
             "3 dir/a \"quoted\" \\ name.png null\n");
  BOOST_TEST(column(b, "status || ' ' || lease_token") == "2 " + token[b] + "\n");  // still held, unchanged
  BOOST_TEST(column(c, "image_object") == "c.png\n");                               // no second write
  BOOST_TEST(storage::end_leases(pool, {}).empty());
  BOOST_TEST(summary().refunded == 0);
}

BOOST_AUTO_TEST_CASE(failure_refunds_exactly_once) {
  const std::string id = create("vendor1-pro");
  const auto held = storage::claim_due(pool, "w1", 1, 30s);
  BOOST_TEST_REQUIRE(held.size() == 1U);
  BOOST_TEST(summary().balance == 1000 - 60);
  BOOST_TEST(storage::end_lease(pool, lease_end::failed(id, held[0].lease_token, "engine exploded")));
  BOOST_TEST(!storage::end_lease(pool, lease_end::failed(id, held[0].lease_token, "again")));
  const auto s = summary();
  BOOST_TEST(s.balance == 1000);
  BOOST_TEST(s.refunded == 60);
  BOOST_TEST(s.ledger_balance() == s.balance);
  BOOST_TEST(column(id, "status || ' ' || error") == "4 engine exploded\n");
  BOOST_TEST(cluster().psql("SELECT count(*) FROM ledger WHERE kind = 'refund' AND task_id = '" + id + "'") ==
             "1\n");
}

BOOST_AUTO_TEST_CASE(an_expired_lease_is_taken_over_and_the_old_holder_loses) {
  const std::string id = create();
  const auto first = storage::claim_due(pool, "crashed", 1, 50ms);
  BOOST_TEST_REQUIRE(first.size() == 1U);
  BOOST_TEST(storage::claim_due(pool, "other", 1, 30s).empty());  // still held
  std::this_thread::sleep_for(100ms);
  const auto second = storage::claim_due(pool, "other", 1, 30s);
  BOOST_TEST_REQUIRE(second.size() == 1U);
  BOOST_TEST(second[0].id == id);
  BOOST_TEST(second[0].attempt == 2);
  BOOST_TEST(second[0].lease_token != first[0].lease_token);
  BOOST_TEST(!storage::extend_lease(pool, id, first[0].lease_token, 30s));
  BOOST_TEST(!storage::end_lease(pool, lease_end::failed(id, first[0].lease_token, "zombie")));
  BOOST_TEST(storage::extend_lease(pool, id, second[0].lease_token, 30s));
  BOOST_TEST(storage::end_lease(pool, lease_end::succeeded(id, second[0].lease_token, {.image = "x.png"})));
  BOOST_TEST(summary().refunded == 0);
}

BOOST_AUTO_TEST_CASE(retries_wait_stay_running_and_remember_the_error) {
  const std::string id = create();
  auto held = storage::claim_due(pool, "w1", 1, 30s);
  BOOST_TEST_REQUIRE(held.size() == 1U);
  BOOST_TEST(storage::end_lease(pool, lease_end::retry(id, held[0].lease_token, "upstream busy", 60s)));
  BOOST_TEST(column(id, "status") == "2\n");  // clients never see a task go back to 1
  BOOST_TEST(storage::claim_due(pool, "w1", 1, 30s).empty());
  cluster().psql("UPDATE tasks SET run_after = now() WHERE id = '" + id + "'");  // the delay has passed
  held = storage::claim_due(pool, "w1", 1, 30s);
  BOOST_TEST_REQUIRE(held.size() == 1U);
  BOOST_TEST(held[0].attempt == 2);
  BOOST_TEST(held[0].last_error.value_or("") == "upstream busy");
  BOOST_TEST(storage::end_lease(pool, lease_end::wait(id, held[0].lease_token, "job-42", 0ms)));
  for (int poll = 0; poll < 5; ++poll) {  // polls do not use up attempts (max 3)
    held = storage::claim_due(pool, "w1", 1, 30s);
    BOOST_TEST_REQUIRE(held.size() == 1U);
    BOOST_TEST(held[0].attempt == 2);  // the attempt that submitted, given back at every poll
    BOOST_TEST(held[0].provider_job.value_or("") == "job-42");  // resume polling, never resubmit
    BOOST_TEST(storage::end_lease(pool, lease_end::wait(id, held[0].lease_token, "job-42", 0ms)));
  }
}

// Every kind of lease end in one statement: each applied to its own task, the failure refunded once.
BOOST_AUTO_TEST_CASE(one_batch_applies_every_kind_of_lease_end) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(create());
  }
  const auto held = storage::claim_due(pool, "w1", 10, 30s);
  BOOST_TEST_REQUIRE(held.size() == 5U);
  std::map<std::string, std::string> token;
  for (const auto& t : held) {
    token[t.id] = t.lease_token;
  }
  const std::vector<bool> applied =
      storage::end_leases(pool, {lease_end::succeeded(ids[0], token[ids[0]], {.image = "ok.png"}),
                                 lease_end::failed(ids[1], token[ids[1]], "no good"),
                                 lease_end::retry(ids[2], token[ids[2]], "busy", 60s),
                                 lease_end::wait(ids[3], token[ids[3]], "job-7", 60s),
                                 lease_end::give_back(ids[4], token[ids[4]])});
  BOOST_TEST((applied == std::vector<bool>{true, true, true, true, true}));
  BOOST_TEST(column(ids[0], "status || ' ' || image_object") == "3 ok.png\n");
  BOOST_TEST(column(ids[1], "status || ' ' || error") == "4 no good\n");
  BOOST_TEST(column(ids[2], "status || ' ' || error || ' ' || attempts || ' ' || (run_after > now())") ==
             "2 busy 1 true\n");
  BOOST_TEST(
      column(ids[3], "status || ' ' || provider_job || ' ' || attempts || ' ' || (run_after > now())") ==
      "2 job-7 0 true\n");
  BOOST_TEST(column(ids[4], "status || ' ' || attempts || ' ' || (run_after <= now())") == "2 0 true\n");
  for (const auto& id : ids) {
    BOOST_TEST(column(id, "coalesce(lease_token::text, 'released')") == "released\n", id);
  }
  const auto s = summary();
  BOOST_TEST(s.refunded == 6);  // only the failure, once
  BOOST_TEST(s.ledger_balance() == s.balance);
  BOOST_TEST((storage::end_leases(pool, {lease_end::failed(ids[1], token[ids[1]], "again")}) ==
              std::vector<bool>{false}));
  BOOST_TEST(summary().refunded == 6);
}

BOOST_AUTO_TEST_CASE(the_rescuer_fails_and_refunds_overdue_tasks_once) {
  const std::string late = create();
  const std::string exhausted = create();
  const std::string healthy = create();
  cluster().psql("UPDATE tasks SET deadline_at = now() - interval '1 second' WHERE id = '" + late + "'");
  cluster().psql("UPDATE tasks SET attempts = max_attempts, error = 'boom' WHERE id = '" + exhausted + "'");
  BOOST_TEST(storage::rescue_overdue(pool, 100).size() == 2U);
  BOOST_TEST(storage::rescue_overdue(pool, 100).empty());
  BOOST_TEST(column(late, "status || ' ' || error") == "4 the task did not finish before its deadline\n");
  BOOST_TEST(column(exhausted, "status || ' ' || error") == "4 the task failed after 3 attempts: boom\n");
  BOOST_TEST(column(healthy, "status") == "1\n");
  const auto s = summary();
  BOOST_TEST(s.refunded == 12);
  BOOST_TEST(s.balance == 1000 - 6);
  BOOST_TEST(s.ledger_balance() == s.balance);
}

BOOST_AUTO_TEST_CASE(the_rescuer_leaves_held_leases_alone) {
  const std::string id = create();
  const auto held = storage::claim_due(pool, "w1", 1, 30s);
  BOOST_TEST_REQUIRE(held.size() == 1U);
  cluster().psql("UPDATE tasks SET attempts = max_attempts WHERE id = '" + id + "'");
  BOOST_TEST(storage::rescue_overdue(pool, 100).empty());  // the holder may still finish its last attempt
  BOOST_TEST(storage::end_lease(pool, lease_end::succeeded(id, held[0].lease_token, {.image = "y.png"})));
}

BOOST_AUTO_TEST_SUITE_END()
