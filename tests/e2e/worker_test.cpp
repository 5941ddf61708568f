// Tasks actually run: every model from create to success with real media, failures refunded exactly
// once, signed media links, and workers that crash (kill -9) or drain (SIGTERM) losing nothing.

#include "core/base64.hpp"
#include "core/catalog.hpp"
#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
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
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// The five models of the spec plus models that fail, retry, or take their time.
const std::string test_catalog = R"({"models":{
  "vendor1-flash": {"task_type":"video","price":20,"duration_seconds":5},
  "vendor1-pro": {"task_type":"video","price":60,"duration_seconds":8},
  "vendor2-2": {"task_type":"video","price":40,"duration_seconds":5},
  "vendor3-image-2": {"task_type":"image","price":8},
  "vendor4-2": {"task_type":"image","price":6},
  "always-fails": {"task_type":"image","price":7,"engine_settings":{"failure_rate":1}},
  "always-busy": {"task_type":"image","price":9,"max_attempts":2,"engine_settings":{"retry_rate":1}},
  "slow": {"task_type":"image","price":5,"engine_settings":{"latency_ms":1500}},
  "heavy": {"task_type":"video","price":5,"duration_seconds":6,"engine_settings":{"long_side":768}}
}})";

env_map with_catalog(env_map env = {}) {
  static const std::string path = temporary_file(test_catalog, ".json");
  env["GESSO_CATALOG"] = path;
  return env;
}

std::string create_task(const http_client& client, const std::string& key, const std::string& model,
                        const std::string& prompt = "a lighthouse at dusk") {
  const auto reply =
      client.create(key, json::serialize(json::object{{"model_id", model}, {"prompt", prompt}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

bool never_goes_back(const std::vector<int>& statuses) {
  return std::is_sorted(statuses.begin(), statuses.end());
}

double seconds_of(const json::value& v) {
  return std::stod(std::string(v.as_string()));
}

}  // namespace

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

BOOST_AUTO_TEST_SUITE(worker_faults)

BOOST_AUTO_TEST_CASE(sigterm_gives_back_tasks_it_has_not_started) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("give-back", 100);
  auto first = std::make_unique<worker_process>(with_catalog());
  const std::string id = create_task(client, account.key, "slow");  // 1.5 s of simulated latency
  for (int i = 0; i < 100 && account_show(account.id).at("tasks").at("running").as_int64() < 1; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(first->stop() == 0);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 1s));  // did not wait out the latency
  first.reset();
  const auto details = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
  BOOST_TEST(details.at("attempts").as_int64() == 0);  // the attempt was given back
  BOOST_TEST(details.at("lease_token").is_null());
  worker_process second(with_catalog());
  BOOST_TEST(poll_until_final(client, account.key, id).statuses.back() == 3);
  BOOST_TEST(second.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_killed_worker_loses_nothing) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("crash", 100);
  std::vector<std::string> ids;
  auto doomed = std::make_unique<worker_process>(with_catalog({{"GESSO_WORKER_LEASE_MS", "1000"}}));
  for (int i = 0; i < 6; ++i) {
    ids.push_back(create_task(client, account.key, "slow", "slow task " + std::to_string(i)));
  }
  // Wait until the doomed worker holds every task, then kill it mid-render.
  for (int i = 0; i < 200; ++i) {
    if (account_show(account.id).at("tasks").at("running").as_int64() == 6) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST_REQUIRE(account_show(account.id).at("tasks").at("running").as_int64() == 6);
  doomed->kill();
  doomed.reset();
  worker_process rescuer(with_catalog());
  for (const auto& id : ids) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(result.statuses.back() == 3);
    BOOST_TEST(never_goes_back(result.statuses));
    const auto details = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
    BOOST_TEST(details.at("attempts").as_int64() == 2);  // once by the dead worker, once by the rescuer
  }
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("charged").as_int64() == 30);  // each task charged once
  BOOST_TEST(shown.at("refunded").as_int64() == 0);  // none refunded: they all succeeded
  BOOST_TEST(shown.at("balance").as_int64() == 70);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(rescuer.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_database_outage_pauses_workers_and_loses_nothing) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("outage-worker", 100);
  worker_process worker(with_catalog());
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(create_task(client, account.key, "slow", "outage task " + std::to_string(i)));
  }
  for (int i = 0; i < 200 && account_show(account.id).at("tasks").at("running").as_int64() < 4; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  // The renders finish while the database is away: finalizing waits for it, claiming pauses.
  cluster().stop("immediate");
  std::this_thread::sleep_for(2500ms);
  cluster().start();
  for (int i = 0; i < 100 && client.request("GET", "/readyz").status != 200; ++i) {
    std::this_thread::sleep_for(100ms);  // the server finds its old connections broken and reconnects
  }
  for (const auto& id : ids) {
    const auto result = poll_until_final(client, account.key, id);
    BOOST_TEST(result.statuses.back() == 3);
  }
  // Claiming resumed by itself.
  const auto after = poll_until_final(client, account.key, create_task(client, account.key, "vendor4-2"));
  BOOST_TEST(after.statuses.back() == 3);
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("charged").as_int64() == 4 * 5 + 6);  // each task charged once
  BOOST_TEST(shown.at("refunded").as_int64() == 0);
  BOOST_TEST(shown.at("consistent").as_bool());
  BOOST_TEST(worker.stop() == 0);  // it never exited on its own
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(worker_probes_follow_the_claim_loop_and_the_database) {
  worker_process worker(
      with_catalog({{"GESSO_WORKER_LISTEN", "127.0.0.1:0"}, {"GESSO_WORKER_POLL_MS", "200"}}));
  BOOST_TEST_REQUIRE(worker.probe_port() != 0);
  const http_client probes("127.0.0.1", worker.probe_port(), 5s);
  auto status_of = [&](const std::string& path) { return probes.request("GET", path).status; };
  auto wait_for = [&](const std::string& path, int expected) {
    for (int i = 0; i < 100 && status_of(path) != expected; ++i) {
      std::this_thread::sleep_for(100ms);
    }
    return status_of(path);
  };
  BOOST_TEST(status_of("/healthz") == 200);
  BOOST_TEST(wait_for("/readyz", 200) == 200);
  cluster().stop("fast");
  BOOST_TEST(wait_for("/readyz", 503) == 503);  // the next claim could not reach the database
  BOOST_TEST(probes.request("GET", "/readyz").json().at("status") == "database unavailable");
  BOOST_TEST(status_of("/healthz") == 200);  // alive all the same: nothing should restart it
  cluster().start();
  BOOST_TEST(wait_for("/readyz", 200) == 200);
  BOOST_TEST(probes.request("POST", "/healthz", "x").status == 405);
  BOOST_TEST(status_of("/metrics-or-anything") == 404);
  BOOST_TEST(worker.stop() == 0);
}

BOOST_AUTO_TEST_CASE(servers_and_workers_export_metrics) {
  server_process server(with_catalog({{"GESSO_ADMIN_LISTEN", "127.0.0.1:0"}}));
  worker_process worker(
      with_catalog({{"GESSO_WORKER_LISTEN", "127.0.0.1:0"}, {"GESSO_WORKER_RESCUE_MS", "200"}}));
  const auto client = server.client();
  const auto account = make_account("metrics", 100);
  const std::string ok = create_task(client, account.key, "vendor4-2");
  const std::string bad = create_task(client, account.key, "always-fails");
  BOOST_TEST(poll_until_final(client, account.key, ok).statuses.back() == 3);
  BOOST_TEST(poll_until_final(client, account.key, bad).statuses.back() == 4);
  BOOST_TEST(client.query(account.key, "task_" + std::string(32, 'z')).status == 404);
  std::this_thread::sleep_for(500ms);  // a housekeeping pass samples the queue

  // Metrics are served on the admin listener only: the public port does not know the path.
  BOOST_TEST(client.request("GET", "/metrics").status == 404);
  const auto scraped = http_client("127.0.0.1", server.admin_port(), 5s).request("GET", "/metrics");
  BOOST_TEST(scraped.status == 200);
  BOOST_TEST(scraped.header("content-type").find("text/plain; version=0.0.4") == 0);
  for (const std::string line : {
           "gesso_http_requests_total{route=\"create\",status=\"200\"} 2",
           "gesso_http_requests_total{route=\"query\",status=\"404\"} 1",
           "gesso_tasks_created_total{model=\"vendor4-2\"} 1",
           "gesso_tasks_created_total{model=\"always-fails\"} 1",
           "gesso_credits_charged_total{model=\"always-fails\"} 7",
           "gesso_http_request_duration_seconds_count{route=\"create\"} 2",
           "# TYPE gesso_db_pool_in_use gauge",
           "gesso_db_pool_threads 16",
       }) {
    BOOST_TEST(scraped.body.find(line + "\n") != std::string::npos, line << " in\n" << scraped.body);
  }
  const http_client probes("127.0.0.1", worker.probe_port(), 5s);
  const auto from_worker = probes.request("GET", "/metrics");
  BOOST_TEST(from_worker.status == 200);
  for (const std::string line : {
           "gesso_tasks_claimed_total{model=\"vendor4-2\"} 1",
           "gesso_tasks_finished_total{model=\"vendor4-2\",outcome=\"succeeded\"} 1",
           "gesso_tasks_finished_total{model=\"always-fails\",outcome=\"failed\"} 1",
           "gesso_tasks_refunded_total{model=\"always-fails\"} 1",
           "gesso_engine_duration_seconds_count{model=\"vendor4-2\"} 1",
           "gesso_tasks_held 0",
           "gesso_queue_due_tasks 0",
           "gesso_remote_tasks_in_flight 0",
       }) {
    BOOST_TEST(from_worker.body.find(line + "\n") != std::string::npos, line << " in\n" << from_worker.body);
  }
  BOOST_TEST(worker.stop() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(sigterm_finishes_tasks_being_rendered_then_exits_zero) {
  server_process server(with_catalog());
  const auto client = server.client();
  const auto account = make_account("drain-worker", 100);
  worker_process worker(with_catalog());
  const std::string a = create_task(client, account.key, "heavy");
  const std::string b = create_task(client, account.key, "heavy");
  for (int i = 0; i < 200 && account_show(account.id).at("tasks").at("running").as_int64() < 2; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  BOOST_TEST(worker.stop() == 0);  // waits for both renders and their finalization
  const auto shown = account_show(account.id);
  BOOST_TEST(shown.at("tasks").at("succeeded").as_int64() == 2);
  BOOST_TEST(shown.at("tasks").at("running").as_int64() == 0);
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
