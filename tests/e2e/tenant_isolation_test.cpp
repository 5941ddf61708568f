// One account reaching for another's tasks and media gets exactly what an unknown id gets.

#include "tests/e2e/security_suites.hpp"

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::security_suites;
using namespace std::chrono_literals;
using namespace std::string_literals;

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
