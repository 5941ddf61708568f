// Several servers behind nginx (deploy/local/cluster.sh): a graceful restart of one server, then of
// another, while a client keeps creating and polling through the load balancer.

#include "tests/support/local_cluster.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(load_balancer)

BOOST_AUTO_TEST_CASE(graceful_restarts_behind_nginx_fail_no_request) {
  local_cluster cluster({.servers = 3, .workers = 1});
  const auto created =
      cluster.gesso_cli({"account", "create", "--name", "steady", "--credits", "1000000", "--json"});
  BOOST_TEST_REQUIRE(created.exit_code == 0, created.err);
  const std::string key(json::parse(created.out).at("api_key").as_string());

  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::atomic<int> failed{0};
  std::mutex failure_mutex;
  std::string first_failure;
  auto note_failure = [&](const std::string& what) {
    std::lock_guard lock(failure_mutex);
    if (first_failure.empty()) {
      first_failure = what;
    }
  };
  auto well_behaved = [&] {
    const auto client = cluster.client(10s);
    while (!done) {
      try {
        const auto c = client.create(key, R"({"model_id":"vendor4-2","prompt":"steady"})");
        const auto q = c.status == 200
                           ? client.query(key, std::string(c.json().at("data").at("task_id").as_string()))
                           : c;
        if (q.status == 200) {
          ++answered;
          continue;
        }
        note_failure(std::to_string(q.status) + " " + q.body);
      } catch (const std::exception& e) {
        note_failure(e.what());
      }
      ++failed;
    }
  };
  std::vector<std::thread> clients;
  struct stop_clients {  // also when a restart throws: threads are joined before they are destroyed
    std::atomic<bool>* done;
    std::vector<std::thread>* threads;
    ~stop_clients() {
      *done = true;
      for (auto& t : *threads) {
        t.join();
      }
    }
  } stopper{&done, &clients};
  clients.emplace_back(well_behaved);
  clients.emplace_back(well_behaved);
  std::this_thread::sleep_for(500ms);
  const int before = answered;
  cluster.run({"restart", "server", "2"});
  const int during_first = answered - before;
  cluster.run({"restart", "server", "1"});
  std::this_thread::sleep_for(500ms);
  done = true;
  BOOST_TEST_MESSAGE("requests answered: " << answered << " (" << during_first
                                           << " during the first restart)");
  BOOST_TEST(failed == 0, first_failure);
  BOOST_TEST(during_first > 0);
  BOOST_TEST(answered > 50);
  // Every server took part again afterwards: all three are ready.
  const std::string status = cluster.run({"status"});
  BOOST_TEST(status.find("server 1 (127.0.0.1:" + std::to_string(cluster.port() + 1) + "): running, ready") !=
                 std::string::npos,
             status);
  BOOST_TEST(status.find("server 2 (127.0.0.1:" + std::to_string(cluster.port() + 2) + "): running, ready") !=
                 std::string::npos,
             status);
}

BOOST_AUTO_TEST_SUITE_END()
