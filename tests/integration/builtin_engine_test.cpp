// The builtin engine renders real media: PNG stills, and H.264 + AAC video checked with ffprobe.

#include "server/engines/builtin_engine.hpp"
#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "tests/support/media_probe.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gesso;
using namespace gesso::engines;
using namespace gesso::testing;
namespace fs = std::filesystem;

namespace {

struct engine_fixture {
  fs::path root = fs::temp_directory_path() / ("gesso-media-" + new_request_id());
  media_store media{root};
  gesso::catalog models = gesso::catalog::builtin();
  engine_fixture() { std::signal(SIGPIPE, SIG_IGN); }
  ~engine_fixture() { fs::remove_all(root); }

  engine_job job(const std::string& model, const std::string& prompt, const std::string& ratio) {
    engine_job j;
    j.task_id = new_task_id();
    j.model = models.find(model);
    j.prompt = prompt;
    j.aspect_ratio = ratio;
    return j;
  }

  std::string read(const std::string& object) {
    std::ifstream in(media.path_of(object), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

double number(const boost::json::value& v) {
  return v.is_string() ? std::stod(std::string(v.as_string())) : v.to_number<double>();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(builtin_engine, engine_fixture)

BOOST_AUTO_TEST_CASE(images_are_png_sized_by_aspect_ratio_and_deterministic) {
  engines::builtin_engine engine({});
  const auto wide = engine.run(job("vendor3-image-2", "a red fox in snow", "16:9"), media);
  BOOST_TEST_REQUIRE((wide.result == engine_outcome::kind::succeeded));
  BOOST_TEST_REQUIRE(wide.image.has_value());
  BOOST_TEST(!wide.video.has_value());
  BOOST_TEST(!wide.audio.has_value());
  BOOST_TEST((png_size(read(*wide.image)) == std::pair<int, int>{512, 288}));

  const auto tall = engine.run(job("vendor4-2", "a red fox in snow", "2:3"), media);
  BOOST_TEST((png_size(read(*tall.image)) == std::pair<int, int>{342, 512}));

  const auto again = engine.run(job("vendor3-image-2", "a red fox in snow", "16:9"), media);
  const auto other = engine.run(job("vendor3-image-2", "a blue whale at dawn", "16:9"), media);
  BOOST_TEST(read(*again.image) == read(*wide.image));  // same inputs, same picture
  BOOST_TEST(read(*other.image) != read(*wide.image));  // the prompt shows
}

BOOST_AUTO_TEST_CASE(videos_are_h264_with_an_aac_soundtrack) {
  engines::builtin_engine engine({});
  const auto out = engine.run(job("vendor1-flash", "waves on a shore", "9:16"), media);
  BOOST_TEST_REQUIRE((out.result == engine_outcome::kind::succeeded));
  BOOST_TEST_REQUIRE(out.video.has_value());
  BOOST_TEST_REQUIRE(out.audio.has_value());
  BOOST_TEST(!out.image.has_value());
  const auto probe = ffprobe(media.path_of(*out.video).string());
  bool video = false;
  bool audio = false;
  for (const auto& s : probe.at("streams").as_array()) {
    const auto& stream = s.as_object();
    if (stream.at("codec_name").as_string() == "h264") {
      video = true;
      BOOST_TEST(stream.at("width").as_int64() == 288);
      BOOST_TEST(stream.at("height").as_int64() == 512);
    }
    if (stream.at("codec_name").as_string() == "aac") {
      audio = true;
    }
  }
  BOOST_TEST(video);
  BOOST_TEST(audio);
  BOOST_TEST(number(probe.at("format").at("duration")) == 5.0, boost::test_tools::tolerance(0.15));
  const auto sound = ffprobe(media.path_of(*out.audio).string());
  BOOST_TEST(sound.at("streams").as_array().size() == 1U);
  BOOST_TEST(sound.at("streams").at(0).at("codec_name").as_string() == "aac");
  BOOST_TEST(number(sound.at("format").at("duration")) == 5.0, boost::test_tools::tolerance(0.15));
  BOOST_TEST(!fs::exists(media.scratch() / (out.video->substr(out.video->rfind('/') + 1))));
}

BOOST_AUTO_TEST_CASE(simulated_failures_and_latency_come_from_the_settings) {
  engines::builtin_engine failing(parse_builtin_settings(R"({"failure_rate":1})"));
  const auto failed = failing.run(job("vendor4-2", "x", "1:1"), media);
  BOOST_TEST((failed.result == engine_outcome::kind::failed));
  BOOST_TEST(failed.error.find("simulated") != std::string::npos);
  engines::builtin_engine flaky(parse_builtin_settings(R"({"retry_rate":1,"latency_ms":250})"));
  BOOST_TEST((flaky.run(job("vendor4-2", "x", "1:1"), media).result == engine_outcome::kind::retry));
  BOOST_TEST(flaky.latency(job("vendor4-2", "x", "1:1")).count() == 250);
  BOOST_CHECK_THROW(parse_builtin_settings(R"({"failure_rate":2})"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_builtin_settings(R"({"colour":1})"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(unknown_engines_are_refused_by_name) {
  model_spec m = *models.find("vendor4-2");
  m.engine = "dall-e";
  BOOST_CHECK_EXCEPTION(make_engine(m), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()).find("unknown engine \"dall-e\"") != std::string::npos;
  });
  BOOST_TEST(make_engine(*models.find("vendor1-pro")) != nullptr);
}

BOOST_AUTO_TEST_CASE(retention_deletes_only_old_objects) {
  media.put("2020/01/01/old.png", "old");
  media.put("2026/01/01/new.png", "new");
  fs::last_write_time(media.path_of("2020/01/01/old.png"),
                      fs::file_time_type::clock::now() - std::chrono::hours(200));
  BOOST_TEST(media.delete_older_than(std::chrono::hours(168)) == 1U);
  BOOST_TEST(!fs::exists(media.path_of("2020/01/01/old.png")));
  BOOST_TEST(fs::exists(media.path_of("2026/01/01/new.png")));
  BOOST_CHECK_THROW(media.path_of("../escape"), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
