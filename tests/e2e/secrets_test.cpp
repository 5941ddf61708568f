// No key, signature, signing key or prompt reaches the logs.

#include "tests/e2e/security_suites.hpp"

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::security_suites;
using namespace std::chrono_literals;
using namespace std::string_literals;

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
