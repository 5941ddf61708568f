// Authentication and tenant isolation: 401 for every kind of bad key on both endpoints, another
// account's task answered exactly like an unknown id, and no key stored in clear.

#include "core/ids.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

using namespace gesso::testing;
namespace json = boost::json;

namespace {
const std::string good_body = R"({"model_id":"vendor4-2","prompt":"a cat"})";

void expect_401(const http_reply& reply, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST(reply.status == 401);
    const json::object body = reply.json().as_object();
    BOOST_TEST(body.at("code").as_int64() == 401);
    BOOST_TEST(body.at("data").is_null());
    BOOST_TEST(!body.at("msg").as_string().empty());
    BOOST_TEST(reply.header("www-authenticate") == "Bearer");
  }
}
}  // namespace

BOOST_AUTO_TEST_SUITE(auth)

BOOST_AUTO_TEST_CASE(bad_keys_get_401_on_both_endpoints) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("auth", 100);
  const auto created = client.create(account.key, good_body);
  BOOST_TEST_REQUIRE(created.status == 200);
  const std::string task_id(created.json().at("data").at("task_id").as_string());

  const auto revoked = make_account("revoked", 100);
  BOOST_TEST_REQUIRE(gesso_cli({"key", "revoke", "--key", revoked.key}).exit_code == 0);

  const std::vector<std::pair<std::string, std::string>> bad_headers = {
      {"missing header", ""},
      {"wrong scheme", "Basic " + account.key},
      {"scheme only", "Bearer"},
      {"empty key", "Bearer "},
      {"not an sk- key", "Bearer pk-" + account.key.substr(3)},
      {"truncated key", "Bearer " + account.key.substr(0, 20)},
      {"unknown key", "Bearer " + gesso::new_api_key()},
      {"revoked key", "Bearer " + revoked.key},
      {"key with junk", "Bearer " + account.key + "!"},
  };
  for (const auto& [name, header] : bad_headers) {
    std::map<std::string, std::string> headers{{"Content-Type", "application/json"}};
    if (!header.empty()) {
      headers["Authorization"] = header;
    }
    expect_401(client.request("POST", "/api/v1/tasks/create", good_body, headers), "create: " + name);
    expect_401(client.request("GET", "/api/v1/tasks/" + task_id, "", headers), "query: " + name);
    expect_401(client.request("GET", "/api/v1/tasks/not-an-id", "", headers), "query bad id: " + name);
  }
  // A bad key with a bad body is still 401: header checks come first.
  expect_401(client.request("POST", "/api/v1/tasks/create", "{", {{"Content-Type", "application/json"}}),
             "no key and bad body");
  const auto shown = account_show(revoked.id);
  BOOST_TEST(shown.at("balance").as_int64() == 100);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(another_accounts_task_is_answered_like_an_unknown_id) {
  server_process server;
  const auto client = server.client();
  const auto alice = make_account("alice", 100);
  const auto bob = make_account("bob", 100);
  const auto created = client.create(alice.key, good_body);
  BOOST_TEST_REQUIRE(created.status == 200);
  const std::string alice_task(created.json().at("data").at("task_id").as_string());

  const auto foreign = client.query(bob.key, alice_task);
  const auto unknown = client.query(bob.key, gesso::new_task_id());
  const auto malformed = client.query(bob.key, "nonsense");
  BOOST_TEST(foreign.status == 404);
  BOOST_TEST(foreign.body == unknown.body);
  BOOST_TEST(foreign.body == malformed.body);
  BOOST_TEST(unknown.status == 404);
  BOOST_TEST(foreign.json().at("code").as_int64() == 0);
  auto without_id = [](std::map<std::string, std::string> h) {
    h.erase("x-request-id");
    return h;
  };
  BOOST_TEST((without_id(foreign.headers) == without_id(unknown.headers)));
  BOOST_TEST(client.query(alice.key, alice_task).status == 200);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(keys_are_stored_only_as_hashes) {
  const auto account = make_account("hashed", 1);
  const auto added = gesso_cli({"key", "create", "--account", std::to_string(account.id), "--json"});
  BOOST_TEST_REQUIRE(added.exit_code == 0, added.err);
  const std::string second_key(json::parse(added.out).at("api_key").as_string());
  const std::string table = cluster().psql("SELECT * FROM api_keys");
  for (const std::string& key : {account.key, second_key}) {
    BOOST_TEST(table.find(key) == std::string::npos);
    BOOST_TEST(table.find(key.substr(11)) == std::string::npos);  // not even the secret part
    BOOST_TEST(table.find(gesso::hash_api_key(key)) != std::string::npos);
  }
  // `account show` lists the keys by prefix only.
  const auto shown = gesso_cli({"account", "show", "--account", std::to_string(account.id), "--json"});
  BOOST_TEST(shown.out.find(account.key) == std::string::npos);
  BOOST_TEST(shown.out.find(account.key.substr(0, 11)) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(keys_are_created_and_revoked_by_id) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("rotate", 100);
  const auto added = gesso_cli({"key", "create", "--account", std::to_string(account.id), "--json"});
  BOOST_TEST_REQUIRE(added.exit_code == 0);
  const auto key = json::parse(added.out).as_object();
  const std::string second(key.at("api_key").as_string());
  BOOST_TEST(client.create(second, good_body).status == 200);
  const auto revoked =
      gesso_cli({"key", "revoke", "--id", std::to_string(key.at("key_id").as_int64()), "--json"});
  BOOST_TEST(revoked.exit_code == 0, revoked.err);
  BOOST_TEST(!json::parse(revoked.out).at("revoked_at").is_null());
  expect_401(client.create(second, good_body), "revoked second key");
  BOOST_TEST(client.create(account.key, good_body).status == 200);  // the first key still works
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(cli_refuses_bad_usage_and_unknown_records) {
  BOOST_TEST(gesso_cli({"account", "create"}).exit_code == 2);
  BOOST_TEST(gesso_cli({"account", "create", "--name", "x", "--credits", "-5"}).exit_code == 2);
  BOOST_TEST(gesso_cli({"frobnicate"}).exit_code == 2);
  BOOST_TEST(gesso_cli({"key", "revoke"}).exit_code == 2);
  BOOST_TEST(gesso_cli({"account", "show", "--account", "999999"}).exit_code == 1);
  BOOST_TEST(gesso_cli({"key", "create", "--account", "999999"}).exit_code == 1);
  BOOST_TEST(gesso_cli({"key", "revoke", "--id", "999999"}).exit_code == 1);
  BOOST_TEST(gesso_cli({"task", "show", "task_nothing"}).exit_code == 1);
  BOOST_TEST(gesso_cli({"help"}).exit_code == 0);
}

BOOST_AUTO_TEST_SUITE_END()
