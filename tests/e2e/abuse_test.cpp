// Abusive connections (slowloris, idle floods, huge headers, garbage) do not stop a well-behaved client.

#include "tests/e2e/security_suites.hpp"

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::security_suites;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

// A client that creates and polls tasks until stopped, each answer due within 5 s.
class well_behaved_client {
 public:
  well_behaved_client(std::uint16_t port, std::string key)
      : thread_([this, port, key = std::move(key)] { loop(port, key); }) {}
  ~well_behaved_client() { stop(); }
  void stop() {
    done_ = true;
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::string first_failure;  ///< read after stop()

 private:
  void loop(std::uint16_t port, const std::string& key) {
    const http_client client("127.0.0.1", port, 5s);
    while (!done_) {
      try {
        const auto created = client.create(key, create_body("vendor4-2", "calm"));
        const auto queried =
            created.status == 200
                ? client.query(key, std::string(created.json().at("data").at("task_id").as_string()))
                : created;
        queried.status == 200 ? note_ok() : note_failure(queried.body);
      } catch (const std::exception& e) {
        note_failure(e.what());
      }
      std::this_thread::sleep_for(20ms);
    }
  }
  void note_ok() { ++ok; }
  void note_failure(const std::string& why) {
    ++failed;
    first_failure = first_failure.empty() ? why : first_failure;
  }
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Ten oversized headers (each must get 431) and ten good requests followed by garbage on the same
// connection (each must get 200 then 400): how many were answered so.
std::pair<int, int> oversized_and_garbage(std::uint16_t port) {
  int too_large = 0;
  int garbage_refused = 0;
  for (int i = 0; i < 10; ++i) {
    const http_client raw_client("127.0.0.1", port);
    const std::string huge = raw_client.raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
    too_large += huge.starts_with("HTTP/1.1 431") ? 1 : 0;
    const std::string piped = raw_client.raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03\x01garbage\x00\xff not http\r\n\r\n"s);
    garbage_refused +=
        piped.starts_with("HTTP/1.1 200") && piped.find("HTTP/1.1 400") != std::string::npos ? 1 : 0;
  }
  return {too_large, garbage_refused};
}

int closed_by_server(const std::vector<std::unique_ptr<raw_connection>>& connections) {
  int closed = 0;
  for (const auto& c : connections) {
    closed += c->closed_by_server() ? 1 : 0;
  }
  return closed;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(abuse)

// A fixed amount of abuse for a fixed time, while a well-behaved client creates and polls tasks:
// every one of its requests must be answered correctly.
BOOST_AUTO_TEST_CASE(the_server_stays_responsive_under_slowloris_idle_floods_huge_headers_and_garbage) {
  allow_many_open_files();
  constexpr int max_connections = 300;
  server_process server({{"GESSO_READ_TIMEOUT_MS", "1500"},
                         {"GESSO_IDLE_TIMEOUT_MS", "120000"},  // idle connections leave only by giving way
                         {"GESSO_MAX_CONNECTIONS", std::to_string(max_connections)}});
  const std::uint16_t port = server.port();
  well_behaved_client good(port, make_account("well-behaved", 1'000'000).key);

  // 1. Slowloris: 40 connections that send a header byte every 100 ms and never finish.
  std::vector<std::unique_ptr<raw_connection>> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(std::make_unique<raw_connection>(port));
    asio::write(slow.back()->socket,
                asio::buffer(std::string("POST /api/v1/tasks/create HTTP/1.1\r\nX-A: ")));
  }
  // 2. An idle flood twice the connection limit: the oldest idle connections give way.
  std::vector<std::unique_ptr<raw_connection>> idle;
  for (int i = 0; i < 2 * max_connections; ++i) {
    idle.push_back(std::make_unique<raw_connection>(port));
  }
  // 3. Oversized headers and 4. a good request followed by garbage on the same connection.
  const auto [too_large, garbage_refused] = oversized_and_garbage(port);
  // Keep the slow connections dribbling for 4 s: well past the 1.5 s read timeout.
  for (int tick = 0; tick < 40; ++tick) {
    for (auto& c : slow) {
      boost::system::error_code ec;
      asio::write(c->socket, asio::buffer("a", 1), ec);
    }
    std::this_thread::sleep_for(100ms);
  }
  const int slow_cut_off = closed_by_server(slow);
  const int idle_gave_way = closed_by_server(idle);
  good.stop();

  BOOST_TEST_MESSAGE("well-behaved requests answered: " << good.ok << ", failed: " << good.failed
                                                        << "; slowloris cut off: " << slow_cut_off
                                                        << "/40; idle given way: " << idle_gave_way);
  BOOST_TEST(good.failed == 0, good.first_failure);
  BOOST_TEST(good.ok >= 10);
  BOOST_TEST(slow_cut_off == 40);  // the whole request must arrive within the read timeout
  BOOST_TEST(too_large == 10);
  BOOST_TEST(garbage_refused == 10);
  BOOST_TEST(idle_gave_way >= max_connections);  // the server held no more than its limit
  BOOST_TEST(server.client().request("GET", "/healthz").status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
