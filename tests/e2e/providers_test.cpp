// The provider engines against gesso-fake-providers (written from ../shared/PROVIDERS.md, started here on
// loopback): every engine turns a task into media copied into Gesso's store; every failure kind ends
// at 4, refunded once, with the right kind.
#include "tests/e2e/provider_suites.hpp"

using namespace gesso::testing;
using namespace gesso::testing::provider_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_FIXTURE_TEST_SUITE(providers, providers_fixture)

BOOST_AUTO_TEST_CASE(every_engine_turns_a_task_into_media_copied_into_gesso) {
  const std::string images = R"(,"image_urls":[")" + input_png() + R"("])";
  const std::map<std::string, std::string> image_tasks{
      {"openai-image", create("openai-image", "a lighthouse", R"(,"aspect_ratio":"16:9")")},
      {"openai-edit", create("openai-image", "the same, at dusk", images)},
      {"replicate-image", create("replicate-image", "a fox", R"(,"aspect_ratio":"9:16")" + images)},
      {"replicate-version", create("replicate-version", "a heron")},
      {"fal-image", create("fal-image", "a harbour", R"(,"aspect_ratio":"16:9")")},
      {"sdcpp-image", create("sdcpp-image", "a teapot", R"(,"aspect_ratio":"9:16")")},
      {"ark-image", create("ark-image", "a kite", R"(,"aspect_ratio":"16:9")" + images)},
      {"comfy-image", create("comfy-image", "a lantern", R"(,"aspect_ratio":"16:9")")},
      {"comfy-edit", create("comfy-edit", "the lantern, lit", images)},
  };
  for (const auto& [name, id] : image_tasks) {
    BOOST_TEST_CONTEXT(name) {
      const poll_result done = finish(id);
      BOOST_TEST_REQUIRE(done.statuses.back() == 3, json::serialize(details(id)));
      const std::string url(done.data.at("image_url").as_string());
      BOOST_TEST(url.find(":" + std::to_string(server->port()) + "/media/") != std::string::npos);  // ours
      const auto [w, h] = png_size(fetch(url).body);
      BOOST_TEST(w > 0);
      static const std::map<std::string, std::string> asked{
          {"openai-image", "16:9"}, {"fal-image", "16:9"},       {"ark-image", "16:9"},
          {"comfy-image", "16:9"},  {"replicate-image", "9:16"}, {"sdcpp-image", "9:16"}};
      const std::string ratio = asked.contains(name) ? asked.at(name) : "1:1";
      BOOST_TEST((ratio == "16:9" ? w > h : ratio == "9:16" ? w < h : w == h), w << "x" << h);
      BOOST_TEST(details(id).at("provider_job").is_string());  // the route, upstream model and job
      if (name == "openai-image" || name == "replicate-image") {
        BOOST_TEST(json::parse(details(id).at("provider_job").as_string()).as_object().contains("cost"));
      }
    }
  }
  for (const std::string model_id :
       {"fal-video", "sdcpp-video", "openai-video", "veo-video", "ark-video", "kling-video", "kling-text"}) {
    BOOST_TEST_CONTEXT(model_id) {
      const bool with_image = model_id != "sdcpp-video" && model_id != "kling-text";
      const std::string id =
          create(model_id == "kling-text" ? "kling-video" : model_id, "waves", with_image ? images : "");
      const poll_result done = finish(id);
      BOOST_TEST_REQUIRE(done.statuses.back() == 3, json::serialize(details(id)));
      const auto probe =
          ffprobe(temporary_file(fetch(std::string(done.data.at("video_url").as_string())).body, ".mp4"));
      BOOST_TEST(std::string(probe.at("streams").as_array()[0].at("codec_name").as_string()) == "h264");
      // Progress only moves forward, from 0 while queued to 100 once done.
      BOOST_TEST(std::is_sorted(done.progress.begin(), done.progress.end()));
      BOOST_TEST(done.progress.back() == 100);
      if (model_id == "openai-video") {  // the one provider here that reports it while running
        BOOST_TEST(std::any_of(done.progress.begin(), done.progress.end(),
                               [](std::int64_t p) { return p > 0 && p < 100; }),
                   "progress seen: " << done.progress.size() << " values");
      }
      if (model_id == "ark-video" || model_id == "kling-video" || model_id == "kling-text") {
        // What the provider says the job cost is kept with the job.
        BOOST_TEST(json::parse(details(id).at("provider_job").as_string()).as_object().contains("cost"));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(each_failure_ends_at_4_refunded_once_with_its_kind) {
  expect_failures({
      {"openai-image", "[fake:policy] a riot", "content_policy"},
      {"openai-image", "[fake:invalid] long", "invalid_input"},
      {"replicate-image", "[fake:policy] gore", "content_policy"},
      {"replicate-image", "[fake:fail] oom", "provider_unavailable"},
      {"replicate-image", "[fake:invalid] odd ratio", "invalid_input"},
      {"fal-image", "[fake:policy] nsfw", "content_policy"},
      {"fal-image", "[fake:invalid] too long", "invalid_input"},
      {"fal-image", "[fake:fail] runner", "provider_unavailable"},
      {"sdcpp-image", "[fake:fail] empty", "provider_unavailable"},
      {"sdcpp-image", "[fake:invalid] steps", "invalid_input"},
      {"openai-image", "[fake:video] wrong type", "internal"},
      {"flaky-image", "[fake:malformed] garbage", "provider_unavailable"},
      {"expiring-image", "[fake:expire] gone", "deadline"},
      {"openai-video", "[fake:policy] a fight", "content_policy"},
      {"openai-video", "[fake:fail] broken", "provider_unavailable"},
      {"veo-video", "[fake:policy] filtered", "content_policy"},
      {"veo-video", "[fake:fail] internal", "provider_unavailable"},
      {"veo-video", "[fake:invalid] duration", "invalid_input"},
      {"ark-video", "[fake:policy] sensitive", "content_policy"},
      {"ark-video", "[fake:fail] internal", "provider_unavailable"},
      {"ark-image", "[fake:policy] sensitive", "content_policy"},
      {"kling-video", "[fake:policy] security", "content_policy"},
      {"kling-video", "[fake:fail] broken", "provider_unavailable"},
      {"kling-video", "[fake:invalid] cfg", "invalid_input"},
      {"kling-wrong-secret", "signed badly", "provider_unavailable"},
      {"comfy-image", "[fake:fail] oom", "provider_unavailable"},
      {"comfy-image", "[fake:policy] nsfw", "content_policy"},
  });
}

BOOST_AUTO_TEST_SUITE_END()
