// Hostile input end to end (docs/security.md): image URLs aimed at non-public addresses, one account
// reaching for another's tasks and media, secrets in the logs, and abusive connections.

#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace std::chrono_literals;
using namespace std::string_literals;
namespace json = boost::json;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::string create_body(const std::string& model, const std::string& prompt,
                        const std::vector<std::string>& image_urls = {}) {
  json::object body{{"model_id", model}, {"prompt", prompt}};
  if (!image_urls.empty()) {
    json::array urls;
    for (const auto& u : image_urls) {
      urls.emplace_back(u);
    }
    body["image_urls"] = std::move(urls);
  }
  return json::serialize(body);
}

std::string task_id_of(const http_reply& reply) {
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

std::string task_error(const std::string& task_id) {
  const auto details = json::parse(gesso_cli({"task", "show", task_id, "--json"}).out).as_object();
  const auto* error = details.if_contains("error");
  return error != nullptr && error->is_string() ? std::string(error->as_string()) : "";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The part of a media URL from "/media/" on.
std::string media_target(const std::string& url) {
  return url.substr(url.find("/media/"));
}

/// A connection the test holds open to the server, reading nothing until asked.
struct raw_connection {
  asio::io_context ioc;
  tcp::socket socket{ioc};
  explicit raw_connection(std::uint16_t port) { socket.connect({asio::ip::make_address("127.0.0.1"), port}); }

  /// Whether the server has closed the connection (reads what is pending without waiting).
  bool closed_by_server() {
    socket.non_blocking(true);
    std::array<char, 4096> sink{};
    for (;;) {
      boost::system::error_code ec;
      socket.read_some(asio::buffer(sink), ec);
      if (ec == asio::error::would_block) {
        return false;
      }
      if (ec) {
        return true;  // end of stream or reset
      }
    }
  }
};

void allow_many_open_files() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ssrf)

// Server and worker here allow one loopback address, 127.0.0.2, for the harmless image host; the
// watched listener on 127.0.0.1 stands for every blocked destination.
BOOST_AUTO_TEST_CASE(blocked_destinations_are_refused_at_create_or_by_the_worker_and_never_reached) {
  const env_map only_harmless = {{"GESSO_FETCH_ALLOW_NETWORKS", "127.0.0.2/32"}};
  server_process server(only_harmless);
  worker_process worker(only_harmless);
  const auto client = server.client();
  const auto account = make_account("ssrf", 100);
  test_http_server watched;
  watched.route("/secret.png",
                {.status = 200, .body = engines::encode_png({8, 8, std::vector<std::uint8_t>(192)})});
  const std::string port = std::to_string(watched.port());

  // An address written in the URL, in any spelling, is refused at once: 400, nothing charged or stored.
  for (const std::string& url : {
           "http://127.0.0.1:" + port + "/secret.png",
           "http://127.1:" + port + "/secret.png",
           "http://0x7f.1:" + port + "/secret.png",
           "http://2130706433:" + port + "/secret.png",
           "http://017700000001:" + port + "/secret.png",
           "http://[::ffff:127.0.0.1]:" + port + "/secret.png",
           "http://[::1]:" + port + "/secret.png",
           std::string("http://169.254.169.254/latest/meta-data/iam/security-credentials/"),
           std::string("http://0xa9fea9fe/latest/meta-data/"),
           std::string("http://10.0.0.1/x.png"),
           std::string("http://[fd00:ec2::254]/latest/meta-data/"),
       }) {
    const auto reply = client.create(account.key, create_body("vendor4-2", "p", {url}));
    BOOST_TEST(reply.status == 400, url << ": " << reply.body);
    const std::string msg(reply.json().at("msg").as_string());
    BOOST_TEST(msg.find("image_urls[0] points to") != std::string::npos, url << ": " << msg);
    BOOST_TEST(msg.find("Gesso fetches only public addresses") != std::string::npos, msg);
  }
  BOOST_TEST(account_show(account.id).at("balance").as_int64() == 100);
  BOOST_TEST(cluster().psql("SELECT count(*) FROM tasks WHERE account_id = " + std::to_string(account.id)) ==
             "0\n");

  // A name is resolved by the worker, which refuses the task with a clear error and a refund.
  const std::string by_name = task_id_of(client.create(
      account.key, create_body("vendor4-2", "p", {"http://localhost:" + port + "/secret.png"})));
  // A harmless, allowed host that redirects to the blocked listener: refused at that hop.
  test_http_server harmless("127.0.0.2");
  harmless.route("/hop.png",
                 {.status = 302, .headers = {{"Location", "http://127.0.0.1:" + port + "/secret.png"}}});
  harmless.route("/hop-name.png",
                 {.status = 307, .headers = {{"Location", "http://localhost:" + port + "/secret.png"}}});
  harmless.route("/file.png", {.status = 302, .headers = {{"Location", "file:///etc/passwd"}}});
  const std::string hop =
      task_id_of(client.create(account.key, create_body("vendor4-2", "p", {harmless.url("/hop.png")})));
  const std::string hop_name =
      task_id_of(client.create(account.key, create_body("vendor4-2", "p", {harmless.url("/hop-name.png")})));
  const std::string to_file =
      task_id_of(client.create(account.key, create_body("vendor4-2", "p", {harmless.url("/file.png")})));
  for (const auto& [id, reason] :
       {std::pair{by_name, "refused to connect to localhost: it resolves to 127.0.0.1"},
        std::pair{hop, "refused to connect to 127.0.0.1"},
        std::pair{hop_name, "refused to connect to localhost"}, std::pair{to_file, "only http and https"}}) {
    BOOST_TEST(poll_until_final(client, account.key, id).statuses.back() == 4);
    BOOST_TEST(task_error(id).find(reason) != std::string::npos, id << ": " << task_error(id));
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 100);  // all four charged, all four refunded
  BOOST_TEST(shown.at("refunded").as_int64() == 4 * 6);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(harmless.requests() == 3);
  BOOST_TEST(watched.connections() == 0);  // no request from Gesso ever reached the blocked listener
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tenant_isolation)

BOOST_AUTO_TEST_CASE(one_account_cannot_read_infer_or_download_anothers_tasks_or_media) {
  server_process server;
  worker_process worker;
  const auto client = server.client();
  const auto alice = make_account("alice-isolated", 100);
  const auto bob = make_account("bob-isolated", 100);
  const std::string alice_task =
      task_id_of(client.create(alice.key, create_body("vendor4-2", "alice's picture")));
  const std::string bob_task = task_id_of(client.create(bob.key, create_body("vendor4-2", "bob's picture")));
  const auto alice_done = poll_until_final(client, alice.key, alice_task);
  const auto bob_done = poll_until_final(client, bob.key, bob_task);
  BOOST_TEST_REQUIRE(alice_done.statuses.back() == 3);
  BOOST_TEST_REQUIRE(bob_done.statuses.back() == 3);
  const std::string alice_url(alice_done.data.at("image_url").as_string());
  const std::string bob_url(bob_done.data.at("image_url").as_string());
  BOOST_TEST_REQUIRE(fetch(alice_url).status == 200);

  // Bob's key on Alice's task: the same answer as an id that never existed (status, body, headers).
  const auto foreign = client.query(bob.key, alice_task);
  const auto unknown = client.query(bob.key, "task_" + std::string(32, 'a'));
  BOOST_TEST(foreign.status == 404);
  BOOST_TEST(foreign.body == unknown.body);
  BOOST_TEST(foreign.body.find(alice_task) == std::string::npos);

  // Bob knows Alice's task id and so her object key, and holds a valid link for his own object.
  const std::string alice_object = media_target(alice_url).substr(7, media_target(alice_url).find('?') - 7);
  const std::string bob_target = media_target(bob_url);
  const std::string bob_query = bob_target.substr(bob_target.find('?'));
  const std::string bob_object = bob_target.substr(7, bob_target.find('?') - 7);
  const std::string zeros(64, '0');
  const std::string far = "?expires=9999999999&sig=";
  const std::vector<std::string> attempts = {
      "/media/" + alice_object,                // no signature
      "/media/" + alice_object + bob_query,    // Bob's signature on Alice's object
      "/media/" + alice_object + far + zeros,  // a made-up signature
      "/media/" + alice_object + "?sig=" + bob_query.substr(bob_query.find("sig=") + 4),  // no expiry
      "/media/" + bob_object + "?expires=9999999999" +
          bob_query.substr(bob_query.find("&sig=")),               // moved expiry
      "/media/" + bob_object + "/../" + alice_object + bob_query,  // traversal from Bob's object
      "/media/" + bob_object + "%2f..%2f..%2f..%2f..%2f" + alice_object + bob_query,  // encoded slashes
      "/media/%2e%2e/%2e%2e/etc/passwd" + far + zeros,                                // encoded dots
      "/media/%252e%252e/%252e%252e/etc/passwd" + far + zeros,                        // double-encoded
      "/media/..%5c..%5cetc%5cpasswd" + far + zeros,                                  // encoded backslashes
      "/media/..\\..\\etc\\passwd" + far + zeros,                                     // backslashes
      "/media/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd" + far + zeros,                    // overlong UTF-8 dots
      "/media/" + alice_object + "%00.png" + bob_query,                               // NUL
      "/media//etc/passwd" + far + zeros,                                             // absolute path
      "/media/" + alice_object + "/." + bob_query,
      "/media/../media/" + alice_object + bob_query,
  };
  for (const auto& target : attempts) {
    const auto reply = client.request("GET", target);
    BOOST_TEST((reply.status == 403 || reply.status == 400 || reply.status == 404),
               target << ": " << reply.status);
    BOOST_TEST(reply.body.find("\x89PNG") == std::string::npos, target);
    BOOST_TEST(reply.body.find("root:") == std::string::npos, target);
  }
  // A refused link says nothing about whether the object exists.
  const auto existing = client.request("GET", "/media/" + alice_object + far + zeros);
  const auto missing =
      client.request("GET", "/media/2000/01/01/task_" + std::string(32, 'b') + ".png" + far + zeros);
  BOOST_TEST(existing.status == 403);
  BOOST_TEST(missing.status == 403);
  BOOST_TEST(existing.json().at("msg") == missing.json().at("msg"));
  // Bob's own link still works: the refusals above were not a blanket block.
  BOOST_TEST(client.request("GET", bob_target).status == 200);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(secrets)

BOOST_AUTO_TEST_CASE(no_key_signature_or_prompt_reaches_the_logs) {
  const env_map debug = {{"GESSO_LOG_LEVEL", "debug"}};
  server_process server(debug);
  worker_process worker(debug);
  const auto client = server.client();
  const auto account = make_account("secrets", 100);
  const std::string prompt =
      "a confidential prompt: the unreleased product codenamed PERIWINKLE-7731 on a marble table";
  const std::string id = task_id_of(client.create(account.key, create_body("vendor4-2", prompt)));
  const auto done = poll_until_final(client, account.key, id);
  BOOST_TEST_REQUIRE(done.statuses.back() == 3);
  const std::string url(done.data.at("image_url").as_string());
  BOOST_TEST(fetch(url).status == 200);
  const std::string wrong_key = "sk-" + std::string(48, 'Z');
  BOOST_TEST(client.query(wrong_key, id).status == 401);
  BOOST_TEST(client.create(wrong_key, create_body("vendor4-2", prompt)).status == 401);
  std::string tampered = media_target(url);
  tampered.back() = tampered.back() == '0' ? '1' : '0';
  BOOST_TEST(client.request("GET", tampered).status == 403);
  // A failing task too: its error is logged, the prompt still is not.
  const std::string refused = task_id_of(client.create(
      account.key, create_body("vendor4-2", prompt, {"data:image/png;base64,bm90IGFuIGltYWdl"})));
  BOOST_TEST(poll_until_final(client, account.key, refused).statuses.back() == 4);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);

  const std::string signature = url.substr(url.find("sig=") + 4);
  for (const auto& path : {server.log_path(), worker.log_path()}) {
    const std::string log = slurp(path);
    BOOST_TEST_REQUIRE(log.find(id) != std::string::npos, path << " shows the task (the logs were captured)");
    for (const auto& [what, secret] :
         {std::pair{"the API key", account.key}, std::pair{"the wrong API key", wrong_key},
          std::pair{"the media signature", signature},
          std::pair{"the signing key", std::string(test_signing_key)}, std::pair{"the prompt", prompt},
          std::pair{"the prompt's secret part", std::string("PERIWINKLE-7731")}}) {
      BOOST_TEST(log.find(secret) == std::string::npos, path << " contains " << what);
    }
    BOOST_TEST(!std::regex_search(log, std::regex("sk-[A-Za-z0-9_-]{16}")),
               path << " contains something shaped like a key");
  }
}

BOOST_AUTO_TEST_SUITE_END()

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
