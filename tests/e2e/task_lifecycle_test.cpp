// Tasks actually run: every model from create to success with real media, failures refunded exactly
// once, signed media links.

#include "core/base64.hpp"
#include "core/catalog.hpp"
#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
#include "tests/e2e/worker_suites.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/media_probe.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace gesso::testing::worker_suites;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(task_lifecycle)

BOOST_AUTO_TEST_CASE(every_model_runs_to_success_with_real_media) {
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const auto client = server.client();
  const auto account = make_account("lifecycle", 1000);
  const auto models = gesso::catalog::parse(test_catalog).value();
  std::vector<std::pair<const model_spec*, std::string>> tasks;
  for (const char* id : {"vendor1-flash", "vendor1-pro", "vendor2-2", "vendor3-image-2", "vendor4-2"}) {
    tasks.emplace_back(models.find(id), create_task(client, account.key, id));
  }
  std::int64_t spent = 0;
  for (const auto& [model, task_id] : tasks) {
    BOOST_TEST_CONTEXT("model " << model->id) {
      spent += model->price;
      const auto result = poll_until_final(client, account.key, task_id);
      BOOST_TEST(never_goes_back(result.statuses));
      BOOST_TEST(result.statuses.back() == 3);
      const json::object& data = result.data;
      if (model->type == task_type::image) {
        BOOST_TEST(data.at("video_url").is_null());
        BOOST_TEST(data.at("audio_url").is_null());
        const auto image = fetch(std::string(data.at("image_url").as_string()));
        BOOST_TEST(image.status == 200);
        BOOST_TEST(image.header("content-type") == "image/png");
        BOOST_TEST(image.header("content-length") == std::to_string(image.body.size()));
        BOOST_TEST((png_size(image.body) == std::pair<int, int>{512, 512}));  // default 1:1
      } else {
        BOOST_TEST(data.at("image_url").is_null());
        const auto video = fetch(std::string(data.at("video_url").as_string()));
        BOOST_TEST(video.status == 200);
        BOOST_TEST(video.header("content-type") == "video/mp4");
        const auto probe = ffprobe(temporary_file(video.body, ".mp4"));
        std::set<std::string> codecs;
        for (const auto& stream : probe.at("streams").as_array()) {
          codecs.emplace(stream.at("codec_name").as_string());
          if (stream.at("codec_name").as_string() == "h264") {
            BOOST_TEST(stream.at("width").as_int64() == 512);  // default 16:9
            BOOST_TEST(stream.at("height").as_int64() == 288);
          }
        }
        BOOST_TEST((codecs == std::set<std::string>{"h264", "aac"}));
        BOOST_TEST(seconds_of(probe.at("format").at("duration")) == model->duration_seconds,
                   boost::test_tools::tolerance(0.05));
        const auto audio = fetch(std::string(data.at("audio_url").as_string()));
        BOOST_TEST(audio.status == 200);
        BOOST_TEST(audio.header("content-type") == "audio/mp4");
        const auto sound = ffprobe(temporary_file(audio.body, ".m4a"));
        BOOST_TEST(sound.at("streams").at(0).at("codec_name").as_string() == "aac");
      }
    }
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 1000 - spent);
  BOOST_TEST(shown.at("refunded").as_int64() == 0);
  BOOST_TEST(shown.at("tasks").at("succeeded").as_int64() == 5);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(failed_tasks_are_refunded_exactly_once) {
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const auto client = server.client();
  const auto account = make_account("refunds", 100);
  const std::string failing = create_task(client, account.key, "always-fails");
  const std::string busy = create_task(client, account.key, "always-busy");
  BOOST_TEST(account_show(account.id).at("charged").as_int64() == 7 + 9);
  for (const auto& id : {failing, busy}) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(never_goes_back(result.statuses));
    BOOST_TEST(result.statuses.back() == 4);
    BOOST_TEST(result.data.at("image_url").is_null());
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 100);
  BOOST_TEST(shown.at("refunded").as_int64() == 16);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(cluster().psql("SELECT count(*) FROM ledger WHERE kind = 'refund' AND task_id IN ('" + failing +
                            "','" + busy + "')") == "2\n");
  const auto details = json::parse(gesso_cli({"task", "show", busy, "--json"}).out).as_object();
  BOOST_TEST(details.at("attempts").as_int64() == 2);
  BOOST_TEST(std::string(details.at("error").as_string()).find("after 2 attempts") != std::string::npos);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(input_images_are_fetched_and_bad_ones_fail_with_a_refund) {
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const auto client = server.client();
  const auto account = make_account("inputs", 100);
  engines::rgb_image green{32, 32, std::vector<std::uint8_t>(32 * 32 * 3, 0)};
  for (std::size_t i = 1; i < green.pixels.size(); i += 3) {
    green.pixels[i] = 220;
  }
  const std::string png = engines::encode_png(green);
  test_http_server host;
  host.route("/green.png", {.status = 200, .headers = {{"Content-Type", "image/png"}}, .body = png});
  host.route("/page", {.status = 200, .headers = {{"Content-Type", "image/png"}}, .body = "<html>hi</html>"});
  auto create_with = [&](const std::string& url) {
    const auto reply = client.create(
        account.key,
        json::serialize(json::object{
            {"model_id", "vendor4-2"}, {"prompt", "a meadow"}, {"image_urls", json::array{url.c_str()}}}));
    BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return std::string(reply.json().at("data").at("task_id").as_string());
  };
  const std::string fetched = create_with(host.url("/green.png"));
  const std::string inline_data = create_with("data:image/png;base64," + encode_base64(png));
  const std::string unreachable = create_with("http://127.0.0.1:1/nothing.png");
  const std::string not_an_image = create_with(host.url("/page"));
  const std::string missing = create_with(host.url("/missing.png"));
  for (const auto& id : {fetched, inline_data}) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(result.statuses.back() == 3);
    const auto image = fetch(std::string(result.data.at("image_url").as_string()));
    BOOST_TEST(png_size(image.body).first == 512);
  }
  for (const auto& [id, reason] :
       {std::pair{unreachable, "could not be fetched: cannot connect"},
        std::pair{not_an_image, "not a PNG, JPEG or WebP"}, std::pair{missing, "answered HTTP 404"}}) {
    BOOST_TEST(poll_until_final(client, account.key, id).statuses.back() == 4);
    const auto details = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
    BOOST_TEST(std::string(details.at("error").as_string()).find(reason) != std::string::npos,
               details.at("error").as_string());
  }
  BOOST_TEST(host.requests() >= 3);
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("balance").as_int64() == 100 - 2 * 6);  // the three failures were refunded
  BOOST_TEST(shown.at("refunded").as_int64() == 3 * 6);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(media_links_are_signed_expiring_and_support_ranges) {
  server_process server(with_catalog());
  worker_process worker(with_catalog());
  const auto client = server.client();
  const auto account = make_account("media", 100);
  const auto done = poll_until_final(client, account.key, create_task(client, account.key, "vendor4-2"));
  const std::string url(done.data.at("image_url").as_string());
  const std::string base = url.substr(0, url.find('?'));
  const std::string object = base.substr(base.find("/media/") + 7);
  const auto whole = fetch(url);
  BOOST_TEST_REQUIRE(whole.status == 200);

  const auto partial = fetch(url, {{"Range", "bytes=10-29"}});
  BOOST_TEST(partial.status == 206);
  BOOST_TEST(partial.body == whole.body.substr(10, 20));
  BOOST_TEST(partial.header("content-range") == "bytes 10-29/" + std::to_string(whole.body.size()));
  const auto tail = fetch(url, {{"Range", "bytes=-16"}});
  BOOST_TEST(tail.body == whole.body.substr(whole.body.size() - 16));
  const auto beyond = fetch(url, {{"Range", "bytes=" + std::to_string(whole.body.size()) + "-"}});
  BOOST_TEST(beyond.status == 416);
  BOOST_TEST(beyond.header("content-range") == "bytes */" + std::to_string(whole.body.size()));

  const auto head = server.client().request("HEAD", url.substr(url.find("/media/")));
  BOOST_TEST(head.status == 200);
  BOOST_TEST(head.header("content-length") == std::to_string(whole.body.size()));
  BOOST_TEST(head.body.empty());

  std::string tampered = url;
  tampered[tampered.size() - 1] = tampered.back() == '0' ? '1' : '0';
  const auto port = std::to_string(server.port());
  const std::string origin = "http://127.0.0.1:" + port;
  for (const std::string& bad : {
           tampered,
           base,                                                      // no signature
           base + "?expires=9999999999&sig=" + std::string(64, '0'),  // made-up signature
           origin + sign_media_path(test_signing_key, object, 1000),  // expired long ago
           origin + sign_media_path("another-key-0123456789abcdef0123456789", object, 9999999999),
           origin + "/media/../../etc/passwd?expires=9999999999&sig=" + std::string(64, '0'),
           origin + "/media/%2e%2e/%2e%2e/etc/passwd?expires=9999999999&sig=" + std::string(64, '0'),
       }) {
    const auto reply = fetch(bad);
    BOOST_TEST(reply.status == 403, bad);
    BOOST_TEST(reply.body.find("\x89PNG") == std::string::npos);
  }
  const auto wrong_method = server.client().request("POST", url.substr(url.find("/media/")), "x");
  BOOST_TEST(wrong_method.status == 405);
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
