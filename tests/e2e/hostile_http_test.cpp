// The hostile probe's HTTP findings (docs/security.md#bounds): request smuggling through
// Transfer-Encoding, Host rules, HEAD answers with bodies, methods on the probes, absolute-form targets,
// 100 Continue before the checks, and /metrics on the public port.

#include "core/media_url.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

const std::string create_json = R"({"model_id":"vendor4-2","prompt":"smuggled"})";

std::string create_request_bytes(const std::string& key, const std::string& body) {
  return "POST /api/v1/tasks/create HTTP/1.1\r\nHost: gesso\r\nAuthorization: Bearer " + key +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::int64_t tasks_of(std::int64_t account) {
  return std::stoll(
      cluster().psql("SELECT count(*) FROM tasks WHERE account_id = " + std::to_string(account)));
}

/// Sends `head` (a request without its body), and returns what the server sends first, read for up to
/// `wait`; the connection stays open meanwhile.
std::string first_answer(std::uint16_t port, const std::string& head, std::chrono::milliseconds wait) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  asio::write(socket, asio::buffer(head));
  socket.non_blocking(true);
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::array<char, 4096> chunk{};
  while (std::chrono::steady_clock::now() < deadline && got.find("\r\n\r\n") == std::string::npos) {
    boost::system::error_code ec;
    const std::size_t n = socket.read_some(asio::buffer(chunk), ec);
    if (ec == asio::error::would_block) {
      std::this_thread::sleep_for(10ms);
      continue;
    }
    if (ec) {
      break;
    }
    got.append(chunk.data(), n);
  }
  return got;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_http)

// A Transfer-Encoding whose final coding is not exactly chunked used to mean "no body": the body was
// then read as a second request, and a create hidden there ran and was charged.
BOOST_AUTO_TEST_CASE(smuggled_transfer_encodings_are_refused_and_close_the_connection) {
  server_process server;
  const auto account = make_account("smuggler", 100);
  const std::string hidden = create_request_bytes(account.key, create_json);
  for (const auto& [coding, status] : std::vector<std::pair<std::string, int>>{{"xchunked", 400},
                                                                               {"chunked, gzip", 400},
                                                                               {"chunked, chunked", 400},
                                                                               {"identity", 400},
                                                                               {"gzip, chunked", 501},
                                                                               {"", 400}}) {
    const std::string request =
        "POST /api/v1/tasks/create HTTP/1.1\r\nHost: gesso\r\nAuthorization: Bearer " + account.key +
        "\r\nContent-Type: application/json\r\nTransfer-Encoding: " + coding + "\r\n\r\n" + hidden;
    const std::string reply = server.client().raw(request);
    BOOST_TEST(reply.starts_with("HTTP/1.1 " + std::to_string(status)), coding << ": " << reply);
    BOOST_TEST(count(reply, "HTTP/1.1 ") == 1U, coding << ": " << reply);
    BOOST_TEST(reply.find("Connection: close") != std::string::npos, coding << ": " << reply);
  }
  // HTTP/1.0 has no chunked coding: its framing is faulty whatever the value.
  const std::string old = server.client().raw(
      "POST /api/v1/tasks/create HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden);
  BOOST_TEST(old.starts_with("HTTP/1.1 400"), old);
  BOOST_TEST(count(old, "HTTP/1.1 ") == 1U, old);
  BOOST_TEST(tasks_of(account.id) == 0);
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 100);
}

BOOST_AUTO_TEST_CASE(http_1_1_requests_need_exactly_one_host) {
  server_process server;
  const auto client = server.client();
  const std::string none = client.raw("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
  BOOST_TEST(none.starts_with("HTTP/1.1 400"), none);
  BOOST_TEST(none.find("Host") != std::string::npos, none);
  const std::string two =
      client.raw("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n");
  BOOST_TEST(two.starts_with("HTTP/1.1 400"), two);
  const std::string one = client.raw("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  BOOST_TEST(one.starts_with("HTTP/1.1 200"), one);
  const std::string http10 = client.raw("GET /healthz HTTP/1.0\r\n\r\n");  // Host is optional in 1.0
  BOOST_TEST(http10.starts_with("HTTP/1.0 200"), http10);
}

// Each HEAD is followed by a GET on the same connection: a body after the HEAD answer would be read
// as the start of the next answer.
BOOST_AUTO_TEST_CASE(head_answers_carry_a_length_and_no_body) {
  server_process server;
  const std::string object = "2026/11/22/task_head.png";
  const auto media = std::filesystem::path(shared_env().at("GESSO_MEDIA_DIR")) / object;
  std::filesystem::create_directories(media.parent_path());
  std::ofstream(media, std::ios::binary) << std::string(1000, 'x');
  const std::string link = sign_media_path(test_signing_key, object, 4'000'000'000);
  for (const auto& [target, extra, status] :
       std::vector<std::tuple<std::string, std::string, int>>{{"/healthz", "", 200},
                                                              {"/api/v1/tasks/create", "", 405},
                                                              {link, "Range: bytes=5000-\r\n", 416},
                                                              {link, "", 200},
                                                              {"/nowhere", "", 404}}) {
    const std::string reply =
        server.client().raw("HEAD " + target + " HTTP/1.1\r\nHost: a\r\n" + extra +
                            "\r\nGET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    BOOST_TEST(reply.starts_with("HTTP/1.1 " + std::to_string(status)), target << ": " << reply);
    const auto end_of_head = reply.find("\r\n\r\n");
    BOOST_TEST(reply.find("Content-Length: ") < end_of_head, target << ": " << reply);
    BOOST_TEST(reply.compare(end_of_head + 4, 15, "HTTP/1.1 200 OK") == 0, target << ": " << reply);
  }
}

BOOST_AUTO_TEST_CASE(probes_answer_405_to_other_methods_and_metrics_live_on_the_admin_listener) {
  server_process server(env_map{{"GESSO_ADMIN_LISTEN", "127.0.0.1:0"}});
  const auto client = server.client();
  for (const std::string path : {"/healthz", "/readyz"}) {
    for (const std::string method : {"POST", "DELETE", "PUT"}) {
      const auto reply = client.request(method, path);
      BOOST_TEST(reply.status == 405, method << " " << path);
      BOOST_TEST(reply.header("allow") == "GET, HEAD", method << " " << path);
    }
  }
  BOOST_TEST(client.request("GET", "/metrics").status == 404);
  const http_client admin("127.0.0.1", server.admin_port(), 5s);
  // A request is counted once its answer is written, so the count may trail the answer a little.
  const std::string line = "gesso_http_requests_total{route=\"other\",status=\"404\"} 1\n";
  http_reply scraped;
  for (int i = 0; i < 50; ++i) {
    scraped = admin.request("GET", "/metrics");
    if (scraped.body.find(line) != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(scraped.status == 200);
  BOOST_TEST(scraped.body.find(line) != std::string::npos, scraped.body);
  BOOST_TEST(admin.request("POST", "/metrics").status == 405);
  BOOST_TEST(admin.request("GET", "/api/v1/tasks/create").status == 404);
}

BOOST_AUTO_TEST_CASE(absolute_form_targets_are_served_as_their_path) {
  server_process server;
  const auto account = make_account("absolute", 100);
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  const auto health = server.client().request("GET", base + "/healthz");
  BOOST_TEST(health.status == 200, health.body);
  const auto created = server.client().request(
      "POST", "HTTP://gesso.example/api/v1/tasks/create", create_json,
      {{"Authorization", "Bearer " + account.key}, {"Content-Type", "application/json"}});
  BOOST_TEST_REQUIRE(created.status == 200, created.body);
  const std::string id(created.json().at("data").at("task_id").as_string());
  const auto queried = server.client().request("GET", base + "/api/v1/tasks/" + id, "",
                                               {{"Authorization", "Bearer " + account.key}});
  BOOST_TEST(queried.status == 200, queried.body);
}

// 100 Continue tells the client to send its body: only a request that will be read gets it.
BOOST_AUTO_TEST_CASE(continue_is_sent_only_after_route_key_and_content_type_pass) {
  server_process server;
  const auto account = make_account("expectant", 100);
  const auto head = [&](const std::string& target, const std::string& key, const std::string& type) {
    return "POST " + target + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + key +
           "\r\nContent-Type: " + type + "\r\nContent-Length: " + std::to_string(create_json.size()) +
           "\r\nExpect: 100-continue\r\n\r\n";
  };
  const std::string bad_key =
      first_answer(server.port(), head("/api/v1/tasks/create", "sk-", "application/json"), 5s);
  BOOST_TEST(bad_key.starts_with("HTTP/1.1 401"), bad_key);
  const std::string bad_type =
      first_answer(server.port(), head("/api/v1/tasks/create", account.key, "text/plain"), 5s);
  BOOST_TEST(bad_type.starts_with("HTTP/1.1 415"), bad_type);
  const std::string no_route =
      first_answer(server.port(), head("/api/v1/nothing", account.key, "application/json"), 5s);
  BOOST_TEST(no_route.starts_with("HTTP/1.1 404"), no_route);
  const std::string wrong_method =
      first_answer(server.port(), head("/healthz", account.key, "application/json"), 5s);
  BOOST_TEST(wrong_method.starts_with("HTTP/1.1 405"), wrong_method);
  const std::string good =
      first_answer(server.port(), head("/api/v1/tasks/create", account.key, "application/json"), 5s);
  BOOST_TEST(good.starts_with("HTTP/1.1 100 Continue"), good);
}

BOOST_AUTO_TEST_SUITE_END()
