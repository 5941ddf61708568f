// Abusive connections (slowloris, idle floods, huge headers, garbage) do not stop a well-behaved client.

#include "tests/e2e/security_suites.hpp"

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::security_suites;
using namespace std::chrono_literals;
using namespace std::string_literals;

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
  const auto account = make_account("well-behaved", 1'000'000);
  std::atomic<bool> done{false};
  std::atomic<int> good_ok{0};
  std::atomic<int> good_failed{0};
  std::string first_failure;
  std::thread good([&] {
    const http_client client("127.0.0.1", port, 5s);  // an answer within 5 s, or the test fails
    while (!done) {
      try {
        const auto created = client.create(account.key, create_body("vendor4-2", "calm"));
        const auto queried =
            created.status == 200
                ? client.query(account.key, std::string(created.json().at("data").at("task_id").as_string()))
                : created;
        if (queried.status == 200) {
          ++good_ok;
        } else {
          ++good_failed;
          first_failure = first_failure.empty() ? queried.body : first_failure;
        }
      } catch (const std::exception& e) {
        ++good_failed;
        first_failure = first_failure.empty() ? e.what() : first_failure;
      }
      std::this_thread::sleep_for(20ms);
    }
  });

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
  // Keep the slow connections dribbling for 4 s: well past the 1.5 s read timeout.
  int slow_cut_off = 0;
  for (int tick = 0; tick < 40; ++tick) {
    for (auto& c : slow) {
      boost::system::error_code ec;
      asio::write(c->socket, asio::buffer("a", 1), ec);
    }
    std::this_thread::sleep_for(100ms);
  }
  for (auto& c : slow) {
    slow_cut_off += c->closed_by_server() ? 1 : 0;
  }
  int idle_gave_way = 0;
  for (auto& c : idle) {
    idle_gave_way += c->closed_by_server() ? 1 : 0;
  }
  done = true;
  good.join();

  BOOST_TEST_MESSAGE("well-behaved requests answered: " << good_ok << ", failed: " << good_failed
                                                        << "; slowloris cut off: " << slow_cut_off
                                                        << "/40; idle given way: " << idle_gave_way);
  BOOST_TEST(good_failed == 0, first_failure);
  BOOST_TEST(good_ok >= 10);
  BOOST_TEST(slow_cut_off == 40);  // the whole request must arrive within the read timeout
  BOOST_TEST(too_large == 10);
  BOOST_TEST(garbage_refused == 10);
  BOOST_TEST(idle_gave_way >= max_connections);  // the server held no more than its limit
  BOOST_TEST(server.client().request("GET", "/healthz").status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
