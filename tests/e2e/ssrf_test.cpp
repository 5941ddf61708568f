// Image URLs aimed at non-public addresses are refused at create or by the worker, never reached.

#include "tests/e2e/security_suites.hpp"

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::security_suites;
using namespace std::chrono_literals;
using namespace std::string_literals;

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
