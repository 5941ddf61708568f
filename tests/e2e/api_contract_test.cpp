// The create and query endpoints exactly as docs/api.md describes them, for every model.

#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>

using namespace gesso;
using namespace gesso::testing;
namespace json = boost::json;

namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::set<std::string> keys_of(const json::object& o) {
  std::set<std::string> out;
  for (const auto& [k, v] : o) {
    out.emplace(k);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(api_contract)

BOOST_AUTO_TEST_CASE(create_and_query_every_model) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("contract", 1000);
  std::int64_t spent = 0;
  const auto models = gesso::catalog::builtin();
  for (const model_spec& model : models.models()) {
    BOOST_TEST_CONTEXT("model " << model.id) {
      const std::int64_t before = unix_now();
      const auto created = client.create(
          account.key,
          json::serialize(json::object{{"model_id", model.id}, {"prompt", "a lighthouse at dusk"}}));
      BOOST_TEST(created.status == 200);
      BOOST_TEST(created.header("content-type") == "application/json; charset=utf-8");
      const json::object body = created.json().as_object();
      BOOST_TEST((keys_of(body) == std::set<std::string>{"code", "msg", "data"}));
      BOOST_TEST(body.at("code").as_int64() == 200);
      BOOST_TEST(body.at("msg").as_string() == "任务提交成功");
      const json::object& data = body.at("data").as_object();
      BOOST_TEST((keys_of(data) == std::set<std::string>{"task_id", "request_id", "credits"}));
      const std::string task_id(data.at("task_id").as_string());
      BOOST_TEST(is_task_id(task_id));
      const std::string request_id(data.at("request_id").as_string());
      BOOST_TEST(request_id.starts_with("req_"));
      BOOST_TEST(request_id.size() > 4U);
      BOOST_TEST(created.header("x-request-id") == request_id);
      BOOST_TEST(data.at("credits").as_int64() == model.price);
      spent += model.price;

      const auto queried = client.query(account.key, task_id);
      BOOST_TEST(queried.status == 200);
      const json::object qbody = queried.json().as_object();
      BOOST_TEST((keys_of(qbody) == std::set<std::string>{"code", "msg", "data"}));
      BOOST_TEST(qbody.at("code").as_int64() == 200);
      BOOST_TEST(qbody.at("msg").as_string() == "ok");
      BOOST_TEST(queried.header("x-request-id").starts_with("req_"));
      BOOST_TEST(queried.header("x-request-id") != request_id);
      const json::object& task = qbody.at("data").as_object();
      // The specification's fields, in its order, then the fields added beside them (docs/api.md).
      std::vector<std::string> order;
      for (const auto& member : task) {
        order.emplace_back(member.key());
      }
      BOOST_TEST(
          (order == std::vector<std::string>{"task_id", "task_status", "task_type", "model_id", "image_url",
                                             "video_url", "audio_url", "credits", "created_at", "error",
                                             "progress", "finished_at", "cancel_requested", "webhook"}));
      BOOST_TEST(task.at("error").is_null());
      BOOST_TEST(task.at("progress").as_int64() == 0);
      BOOST_TEST(task.at("finished_at").is_null());
      BOOST_TEST(!task.at("cancel_requested").as_bool());
      BOOST_TEST(task.at("webhook").is_null());
      BOOST_TEST(task.at("task_id").as_string() == task_id);
      BOOST_TEST(task.at("task_status").as_int64() == 1);  // queued: no worker runs in this test
      BOOST_TEST(task.at("task_type").as_string() == to_string(model.type));
      BOOST_TEST(task.at("model_id").as_string() == model.id);
      BOOST_TEST(task.at("image_url").is_null());
      BOOST_TEST(task.at("video_url").is_null());
      BOOST_TEST(task.at("audio_url").is_null());
      BOOST_TEST(task.at("credits").as_int64() == model.price);
      BOOST_TEST(task.at("created_at").as_int64() >= before - 1);
      BOOST_TEST(task.at("created_at").as_int64() <= unix_now() + 1);
    }
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 1000 - spent);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(shown.at("tasks").at("queued").as_int64() == 5);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(optional_fields_are_accepted) {
  server_process server;
  const auto client = server.client();
  const auto account = make_account("optional", 100);
  const auto with_all =
      client.create(account.key, R"({"model_id":"vendor3-image-2","prompt":"p","aspect_ratio":"9:16",
      "image_urls":["https://images.example.com/cat.png","data:image/png;base64,iVBORw0KGgo="]})");
  BOOST_TEST(with_all.status == 200, with_all.body);
  const auto empty_list =
      client.create(account.key, R"({"model_id":"vendor2-2","prompt":"p","image_urls":[]})");
  BOOST_TEST(empty_list.status == 200, empty_list.body);
  const auto lower_scheme = client.request(
      "POST", "/api/v1/tasks/create", R"({"model_id":"vendor4-2","prompt":"p"})",
      {{"Authorization", "bearer " + account.key}, {"Content-Type", "Application/JSON; charset=utf-8"}});
  BOOST_TEST(lower_scheme.status == 200, lower_scheme.body);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(every_response_carries_a_request_id) {
  server_process server;
  const auto client = server.client();
  std::set<std::string> seen;
  for (const auto& reply :
       {client.request("GET", "/nowhere"), client.request("GET", "/api/v1/tasks/x"),
        client.request("POST", "/api/v1/tasks/create", "{}"), client.request("GET", "/healthz")}) {
    const std::string id = reply.header("x-request-id");
    BOOST_TEST(id.starts_with("req_"));
    BOOST_TEST(seen.insert(id).second);
  }
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(keep_alive_serves_several_requests_on_one_connection) {
  server_process server;
  const std::string replies = server.client().raw(
      "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::size_t count = 0;
  for (std::size_t at = replies.find("HTTP/1.1 200 OK"); at != std::string::npos;
       at = replies.find("HTTP/1.1 200 OK", at + 1)) {
    ++count;
  }
  BOOST_TEST(count == 3U);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
