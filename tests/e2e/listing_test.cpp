// GET /api/v1/tasks (docs/api.md#listing): the caller's tasks only, newest first, filtered, paged with an
// opaque cursor that never repeats or skips a task (ties of one microsecond included); bad parameters
// answer 400 naming the problem.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

using namespace gesso::testing;
namespace json = boost::json;

namespace {

http_reply list(const http_client& client, const test_account& account, const std::string& query = "") {
  return client.request("GET", "/api/v1/tasks" + query, "", {{"Authorization", "Bearer " + account.key}});
}

std::string create(const http_client& client, const test_account& account, const std::string& model) {
  const auto reply =
      client.create(account.key, json::serialize(json::object{{"model_id", model}, {"prompt", "p"}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

// Every task id a listing returns, following next_cursor to the end, `query` on every page.
std::vector<std::string> walk(const http_client& client, const test_account& account,
                              const std::string& query) {
  std::vector<std::string> ids;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    const auto reply = list(client, account, "?" + query + (cursor.empty() ? "" : "&cursor=" + cursor));
    BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
    const json::value body = reply.json();
    const json::object& data = body.at("data").as_object();
    for (const auto& t : data.at("tasks").as_array()) {
      ids.emplace_back(t.at("task_id").as_string());
    }
    BOOST_TEST(data.at("has_more").as_bool() == data.at("next_cursor").is_string());
    if (!data.at("has_more").as_bool()) {
      return ids;
    }
    cursor = std::string(data.at("next_cursor").as_string());
  }
  BOOST_FAIL("the listing never ended");
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(listing)

BOOST_AUTO_TEST_CASE(pages_run_newest_first_through_the_callers_tasks_only) {
  server_process server;
  const auto client = server.client();
  const auto mine = make_account("list-mine", 1000);
  const auto theirs = make_account("list-theirs", 1000);
  std::vector<std::string> created;
  for (int i = 0; i < 25; ++i) {
    created.push_back(create(client, mine, i % 3 == 0 ? "vendor3-image-2" : "vendor4-2"));
  }
  const std::vector<std::string> newest_first(created.rbegin(), created.rend());
  std::set<std::string> other_ids;
  for (int i = 0; i < 5; ++i) {
    other_ids.insert(create(client, theirs, "vendor4-2"));
  }

  const auto first = list(client, mine);
  BOOST_TEST_REQUIRE(first.status == 200, first.body);
  const json::value body = first.json();
  BOOST_TEST(body.at("code").as_int64() == 200);
  BOOST_TEST(body.at("msg").as_string() == "ok");
  const json::array& tasks = body.at("data").at("tasks").as_array();
  BOOST_TEST(tasks.size() == 20U);  // the default limit
  BOOST_TEST(body.at("data").at("has_more").as_bool());
  BOOST_TEST(tasks[0] == client.query(mine.key, created.back()).json().at("data"));  // as the query shows it

  BOOST_TEST(walk(client, mine, "") == newest_first);
  BOOST_TEST(walk(client, mine, "limit=7") == newest_first);
  BOOST_TEST(walk(client, mine, "limit=100") == newest_first);
  std::vector<std::string> image2;
  for (std::size_t i = created.size(); i-- > 0;) {
    if (i % 3 == 0) {
      image2.push_back(created[i]);
    }
  }
  BOOST_TEST(walk(client, mine, "model_id=vendor3-image-2&limit=2") == image2);
  BOOST_TEST(walk(client, mine, "model_id=vendor1-pro").empty());

  // Status: three canceled (4), the rest queued (1).
  for (int i : {2, 5, 11}) {
    BOOST_TEST(client.cancel(mine.key, created[i]).status == 200);
  }
  BOOST_TEST(walk(client, mine, "status=4") ==
             (std::vector<std::string>{created[11], created[5], created[2]}));
  BOOST_TEST(walk(client, mine, "status=1&limit=5").size() == 22U);
  BOOST_TEST(walk(client, mine, "status=3").empty());

  // Only the caller's: the other account sees its five, even with a cursor taken from this one.
  const auto others = walk(client, theirs, "");
  BOOST_TEST((std::set<std::string>(others.begin(), others.end()) == other_ids));
  const std::string my_cursor(list(client, mine, "?limit=1").json().at("data").at("next_cursor").as_string());
  for (const auto& id : walk(client, theirs, "cursor=" + my_cursor)) {
    BOOST_TEST(other_ids.contains(id));
  }
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(time_windows_and_ties_of_one_microsecond) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("list-times", 1000);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(create(client, account, "vendor4-2"));
  }
  // Tasks 0–2 at one and the same microsecond; 3, 4, 5 one second apart.
  const auto at = [&](int i, const std::string& time) {
    cluster().psql("UPDATE tasks SET created_at = '" + time + "' WHERE id = '" + ids[i] + "'");
  };
  for (int i = 0; i < 3; ++i) {
    at(i, "2001-09-09 01:46:40.123456+00");  // 1000000000.123456
  }
  at(3, "2001-09-09 01:46:41+00");
  at(4, "2001-09-09 01:46:42+00");
  at(5, "2001-09-09 01:46:43+00");
  const auto tied = walk(client, account, "limit=1&created_before=1000000001");
  BOOST_TEST(tied.size() == 3U);
  BOOST_TEST(std::set<std::string>(tied.begin(), tied.end()).size() == 3U);  // none twice, none skipped
  BOOST_TEST(walk(client, account, "created_after=1000000001&created_before=1000000003") ==
             (std::vector<std::string>{ids[4], ids[3]}));
  BOOST_TEST(walk(client, account, "created_after=1000000003") == (std::vector<std::string>{ids[5]}));
  BOOST_TEST(walk(client, account, "created_after=1000000000&limit=2").size() == 6U);
  const auto shown = list(client, account, "?created_after=1000000003").json();
  BOOST_TEST(shown.at("data").at("tasks").at(0).at("created_at").as_int64() == 1000000003);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(bad_parameters_answer_400_naming_the_problem) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("list-bad", 100);
  create(client, account, "vendor4-2");
  struct bad {
    std::string query;
    std::string message;
  };
  const bad cases[] = {
      {"?limit=0", "limit must be from 1 to 100 (it is 0)"},
      {"?limit=101", "limit must be from 1 to 100 (it is 101)"},
      {"?limit=ten", "limit must be an integer from 1 to 100"},
      {"?limit=", "limit must be an integer from 1 to 100"},
      {"?limit=1.5", "limit must be an integer from 1 to 100"},
      {"?limit=99999999999999999999", "limit must be an integer from 1 to 100"},
      {"?status=0", "status must be from 1 to 4 (it is 0)"},
      {"?status=running", "status must be an integer from 1 to 4"},
      {"?created_after=-1", "created_after must be from 0 to"},
      {"?created_before=x", "created_before must be an integer"},
      {"?created_after=20&created_before=10", "created_after must be earlier than created_before"},
      {"?created_after=10&created_before=10", "created_after must be earlier than created_before"},
      {"?model_id=", "model_id must be 1 to 200 characters long"},
      {"?model_id=" + std::string(201, 'm'), "model_id must be 1 to 200 characters long"},
      {"?cursor=garbage!", "cursor is not one this API issued"},
      {"?cursor=djE6MTIzOnRhc2tfeA", "cursor is not one this API issued"},  // "v1:123:task_x"
      {"?cursor=" + std::string(300, 'A'), "cursor is not one this API issued"},
      {"?page=2", "unknown parameter \"page\"; accepted parameters are status, model_id, created_after"},
      {"?limit=5&limit=6", "parameter \"limit\" is given more than once"},
      {"?limit=%zz", "not valid percent-encoding"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.query) {
      const auto reply = list(client, account, c.query);
      BOOST_TEST(reply.status == 400, reply.body);
      const std::string msg(reply.json().at("msg").as_string());
      BOOST_TEST(msg.find(c.message) != std::string::npos, msg);
    }
  }
  BOOST_TEST(client.request("GET", "/api/v1/tasks").status == 401);
  const auto post = client.request("POST", "/api/v1/tasks", "", {{"Authorization", "Bearer " + account.key}});
  BOOST_TEST(post.status == 405);
  BOOST_TEST(post.header("allow") == "GET");
  BOOST_TEST(list(client, account, "?limit=%35").json().at("data").at("tasks").as_array().size() == 1U);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
