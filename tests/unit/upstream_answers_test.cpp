// Reading an upstream task API's answers: anything malformed is "unavailable", never a success.

#include "server/engines/task_api_engine.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso;
using namespace gesso::engines;

BOOST_AUTO_TEST_SUITE(upstream_answers)

BOOST_AUTO_TEST_CASE(create_answers) {
  using k = upstream_created::kind;
  const auto ok = read_create_answer(
      200, R"({"code":200,"msg":"ok","data":{"task_id":"t1","request_id":"r","credits":1}})");
  BOOST_TEST((ok.outcome == k::accepted));
  BOOST_TEST(ok.task_id == "t1");
  struct c {
    unsigned status;
    const char* body;
    k expected;
  };
  const c cases[] = {
      {402, R"({"code":0,"msg":"insufficient credits","data":null})", k::refused},
      {400, R"({"code":0,"msg":"bad","data":null})", k::refused},
      {401, R"({"code":401,"msg":"invalid key","data":null})", k::unauthorized},
      {503, R"({"code":0,"msg":"overloaded","data":null})", k::unavailable},
      {429, "", k::unavailable},
      {500, "<html>", k::unavailable},
      {200, "not json", k::unavailable},
      {200, R"({"code":200,"data":{}})", k::unavailable},
      {200, R"({"code":200,"data":{"task_id":7}})", k::unavailable},
      {200, R"({"code":200,"data":{"task_id":""}})", k::unavailable},
      {200, R"({"code":0,"msg":"business failure","data":null})", k::unavailable},
      {200, "[]", k::unavailable},
      {200, R"({"code":"200","data":{"task_id":"t"}})", k::unavailable},
  };
  for (const auto& x : cases) {
    BOOST_TEST((read_create_answer(x.status, x.body).outcome == x.expected), x.status << " " << x.body);
  }
  BOOST_TEST(read_create_answer(402, R"({"code":0,"msg":"insufficient credits","data":null})").message ==
             "insufficient credits");
}

BOOST_AUTO_TEST_CASE(query_answers) {
  using k = upstream_task::kind;
  const auto done = read_query_answer(
      200, R"({"code":200,"msg":"ok","data":{"task_id":"t","task_status":3,"image_url":"http://u/i.png",
             "video_url":null,"audio_url":null,"credits":1,"created_at":1}})");
  BOOST_TEST((done.outcome == k::found));
  BOOST_TEST(done.task_status == 3);
  BOOST_TEST(done.image_url.value_or("") == "http://u/i.png");
  BOOST_TEST(!done.video_url.has_value());
  struct c {
    unsigned status;
    const char* body;
    k expected;
  };
  const c cases[] = {
      {404, R"({"code":0,"msg":"task not found","data":null})", k::not_found},
      {401, "", k::unauthorized},
      {502, "", k::unavailable},
      {200, "{", k::unavailable},
      {200, R"({"code":200,"data":{"task_status":9}})", k::unavailable},
      {200, R"({"code":200,"data":{"task_status":"3"}})", k::unavailable},
      {200, R"({"code":200,"data":null})", k::unavailable},
      {200, R"({"code":200,"data":{"task_status":2}})", k::found},
  };
  for (const auto& x : cases) {
    BOOST_TEST((read_query_answer(x.status, x.body).outcome == x.expected), x.status << " " << x.body);
  }
}

BOOST_AUTO_TEST_CASE(settings_are_checked) {
  model_spec m;
  m.id = "remote";
  const auto s = parse_task_api_settings(
      R"({"base_url":"http://up.example/","api_key":"sk-0123456789abcdef0123456789abcdef","poll_interval_ms":50})",
      m);
  BOOST_TEST(s.base_url == "http://up.example");
  BOOST_TEST(s.model_id == "remote");
  BOOST_TEST(s.poll_interval_ms == 50);
  BOOST_CHECK_THROW(parse_task_api_settings(R"({"api_key":"sk-0123456789abcdef0123456789abcdef"})", m),
                    std::invalid_argument);
  BOOST_CHECK_THROW(
      parse_task_api_settings(R"({"base_url":"ftp://x","api_key":"sk-0123456789abcdef0123456789abcdef"})", m),
      std::invalid_argument);
  BOOST_CHECK_THROW(parse_task_api_settings(R"({"base_url":"http://x","api_key":"secret"})", m),
                    std::invalid_argument);
  BOOST_CHECK_THROW(
      parse_task_api_settings(
          R"({"base_url":"http://x","api_key":"sk-0123456789abcdef0123456789abcdef","extra":1})", m),
      std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
