// Input images: one fetcher (data: and http), sniffing decoders with size checks before decoding,
// and the builtin engine using the images visibly.

#include "core/base64.hpp"
#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "core/network_policy.hpp"
#include "server/engines/builtin_engine.hpp"
#include "server/engines/fetcher.hpp"
#include "server/engines/image_decoder.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gesso;
using namespace gesso::engines;
using namespace gesso::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

rgb_image solid(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  rgb_image img{w, h, {}};
  for (int i = 0; i < w * h; ++i) {
    img.pixels.insert(img.pixels.end(), {r, g, b});
  }
  return img;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The same picture as PNG, JPEG and WebP (the last two made by ffmpeg).
struct formats_fixture {
  fs::path dir = fs::temp_directory_path() / ("gesso-img-" + new_request_id());
  std::string png, jpeg, webp;
  formats_fixture() {
    fs::create_directories(dir);
    png = encode_png(solid(64, 48, 230, 20, 20));
    std::ofstream(dir / "in.png", std::ios::binary) << png;
    shell("ffmpeg -v error -y -i " + (dir / "in.png").string() + " " + (dir / "in.jpg").string());
    shell("ffmpeg -v error -y -i " + (dir / "in.png").string() + " " + (dir / "in.webp").string());
    jpeg = slurp(dir / "in.jpg");
    webp = slurp(dir / "in.webp");
  }
  ~formats_fixture() { fs::remove_all(dir); }
};

std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFF;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int k = 0; k < 8; ++k) {
      crc = (crc >> 1) ^ (0xEDB88320 & (0 - (crc & 1)));
    }
  }
  return ~crc;
}

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A PNG whose header claims `side` × `side` pixels, with a valid CRC and no pixel data at all.
std::string png_bomb(std::uint32_t side) {
  const std::string ihdr = "IHDR" + be32(side) + be32(side) + std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + ihdr + be32(crc32(ihdr));
}

std::array<double, 3> average(const rgb_image& img) {
  std::array<double, 3> sum{};
  for (std::size_t i = 0; i < img.pixels.size(); ++i) {
    sum[i % 3] += img.pixels[i];
  }
  for (auto& s : sum) {
    s /= static_cast<double>(img.width) * img.height;
  }
  return sum;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(input_images, formats_fixture)

BOOST_AUTO_TEST_CASE(every_accepted_format_is_sniffed_and_decoded) {
  for (const auto& [name, bytes] :
       {std::pair{"png", png}, std::pair{"jpeg", jpeg}, std::pair{"webp", webp}}) {
    BOOST_TEST_CONTEXT(name) {
      const auto img = decode_image(bytes);
      BOOST_TEST_REQUIRE(img.has_value(), (img ? "" : img.error().reason));
      BOOST_TEST(img->width == 64);
      BOOST_TEST(img->height == 48);
      const auto avg = average(*img);
      BOOST_TEST(avg[0] > 200.0);  // still red after lossy formats
      BOOST_TEST(avg[1] < 60.0);
    }
  }
  BOOST_TEST((sniff_image(png) == image_format::png));
  BOOST_TEST((sniff_image(jpeg) == image_format::jpeg));
  BOOST_TEST((sniff_image(webp) == image_format::webp));
}

BOOST_AUTO_TEST_CASE(sizes_are_checked_before_decoding) {
  for (const auto& bytes : {png, jpeg, webp}) {
    const auto small = decode_image(bytes, {.max_side = 32, .max_pixels = 1 << 20});
    BOOST_TEST_REQUIRE(!small.has_value());
    BOOST_TEST(small.error().reason.find("64x48") != std::string::npos, small.error().reason);
  }
  const auto bomb = decode_image(png_bomb(50000));  // would be 7.5 GB of pixels
  BOOST_TEST_REQUIRE(!bomb.has_value());
  BOOST_TEST(bomb.error().reason.find("50000x50000") != std::string::npos, bomb.error().reason);
}

BOOST_AUTO_TEST_CASE(garbage_and_damaged_images_are_refused_with_a_reason) {
  BOOST_TEST(decode_image("<html>not an image</html>").error().reason.find("not a PNG, JPEG or WebP") !=
             std::string::npos);
  BOOST_TEST(decode_image("").error().reason.find("not a PNG") != std::string::npos);
  for (const auto& bytes : {png, jpeg, webp}) {
    const auto truncated = decode_image(bytes.substr(0, bytes.size() / 2));
    BOOST_TEST(!truncated.has_value());
  }
}

BOOST_AUTO_TEST_CASE(the_fetcher_reads_data_and_http_urls_within_its_caps) {
  BOOST_TEST(fetch_input("data:image/png;base64," + encode_base64(png)).value() == png);
  BOOST_TEST(!fetch_input("data:image/png;base64,@@@").has_value());

  test_http_server host;
  const fetch_limits loopback{.policy = {parse_networks("127.0.0.0/8").value()}};  // the test's own host
  host.route("/fox.png", {.status = 200, .headers = {{"Content-Type", "text/plain"}}, .body = png});
  host.route("/moved", {.status = 302, .headers = {{"Location", "/fox.png"}}});
  host.route("/loop", {.status = 302, .headers = {{"Location", "/loop"}}});
  host.route("/slow", {.status = 200, .body = png, .delay = 1500ms});
  host.route("/gone", {.status = 404});
  BOOST_TEST(fetch_input(host.url("/fox.png"), loopback).value() ==
             png);  // the header lies; the bytes decide later
  BOOST_TEST(fetch_input(host.url("/moved"), loopback).value() == png);
  auto reason = [](const checked<std::string>& r) { return r ? std::string("(fetched)") : r.error().reason; };
  BOOST_TEST(reason(fetch_input(host.url("/loop"), loopback)).find("more than 3 redirects") !=
             std::string::npos);
  BOOST_TEST(reason(fetch_input(host.url("/gone"), loopback)).find("answered HTTP 404") != std::string::npos);
  BOOST_TEST(reason(fetch_input(host.url("/slow"), {.timeout = 300ms, .policy = loopback.policy}))
                 .find("took longer than 300 ms") != std::string::npos);
  BOOST_TEST(reason(fetch_input(host.url("/fox.png"), {.max_bytes = 100, .policy = loopback.policy}))
                 .find("larger than 100 bytes") != std::string::npos);
  BOOST_TEST(reason(fetch_input("http://127.0.0.1:1/nothing", loopback)).find("cannot connect") !=
             std::string::npos);
  BOOST_TEST(reason(fetch_input("http://no-such-host.invalid/x")).find("cannot resolve") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(non_public_destinations_are_refused_before_any_connection) {
  test_http_server watched;  // the blocked listener: nothing may ever connect to it
  watched.route("/secret", {.status = 200, .body = png});
  const std::string port = std::to_string(watched.port());
  for (const std::string& url : std::vector<std::string>{
           // The watched listener itself, in every spelling of its address and by name.
           "http://127.0.0.1:" + port + "/secret",
           "http://localhost:" + port + "/secret",  // a name the resolver maps to loopback
           "http://LOCALHOST:" + port + "/secret",
           "http://127.1:" + port + "/secret",               // short form
           "http://127.0.1:" + port + "/secret",             // three parts
           "http://0x7f.1:" + port + "/secret",              // hexadecimal short form
           "http://0x7f.0.0.1:" + port + "/secret",          // hexadecimal octet
           "http://0x7f000001:" + port + "/secret",          // one hexadecimal number
           "http://2130706433:" + port + "/secret",          // one decimal number
           "http://017700000001:" + port + "/secret",        // one octal number
           "http://0177.0.0.1:" + port + "/secret",          // octal octet
           "http://[::ffff:127.0.0.1]:" + port + "/secret",  // IPv4-mapped
           "http://[::ffff:7f00:1]:" + port + "/secret",
           "http://[::127.0.0.1]:" + port + "/secret",  // IPv4-compatible
           "http://[::1]:" + port + "/secret", "http://[::]:" + port + "/secret",
           "http://0.0.0.0:" + port + "/secret", "http://0:" + port + "/secret",
           // Every other refused range.
           "http://10.0.0.1/x", "http://172.16.0.1/x", "http://172.31.255.254/x", "http://192.168.1.1/x",
           "http://100.64.0.1/x",
           "http://100.100.100.200/x",                  // Alibaba Cloud metadata (CGNAT range)
           "http://169.254.169.254/latest/meta-data/",  // AWS, GCP, Azure metadata
           "http://169.254.170.2/v2/credentials",       // ECS task credentials
           "http://192.0.0.192/x", "http://198.18.0.1/x", "http://198.19.255.254/x", "http://224.0.0.1/x",
           "http://239.255.255.250/x", "http://240.0.0.1/x", "http://255.255.255.255/x", "http://[fd00::1]/x",
           "http://[fd00:ec2::254]/latest/meta-data/",  // AWS metadata over IPv6
           "http://[fc00::1]/x", "http://[fe80::1]/x", "http://[ff02::1]/x",
           "http://[64:ff9b::7f00:1]/x",     // NAT64 of 127.0.0.1
           "http://[64:ff9b::a9fe:a9fe]/x",  // NAT64 of 169.254.169.254
           "http://[2002:7f00:1::1]/x",      // 6to4 of 127.0.0.1
           "http://[2002:c0a8:101::1]/x",    // 6to4 of 192.168.1.1
       }) {
    const auto r = fetch_input(url, {.timeout = 2000ms});
    BOOST_TEST_REQUIRE(!r.has_value(), url);
    BOOST_TEST(r.error().reason.find("refused to connect") != std::string::npos,
               url << ": " << r.error().reason);
  }
  BOOST_TEST(watched.connections() == 0);  // nothing ever reached the listener

  // Redirects from a harmless host (the only address allowed here) to the blocked listener, however
  // spelt, and to schemes other than http(s), are refused at that hop.
  test_http_server harmless("127.0.0.2");
  const fetch_limits only_harmless{.policy = {parse_networks("127.0.0.2/32").value()}};
  const std::vector<std::string> targets = {"http://127.0.0.1:" + port + "/secret",
                                            "http://localhost:" + port + "/secret",
                                            "http://2130706433:" + port + "/secret",
                                            "http://0x7f.1:" + port + "/secret",
                                            "http://[::ffff:127.0.0.1]:" + port + "/secret",
                                            "http://169.254.169.254/latest/meta-data/",
                                            "file:///etc/passwd",
                                            "gopher://127.0.0.1:" + port + "/_GET%20/secret",
                                            "ftp://127.0.0.1/x"};
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string path = "/hop" + std::to_string(i);
    harmless.route(path, {.status = 302, .headers = {{"Location", targets[i]}}});
    // Two hops: a redirect to an allowed place first, then the hostile one.
    harmless.route(path + "a", {.status = 301, .headers = {{"Location", path}}});
    const auto hop = fetch_input(harmless.url(path + "a"), only_harmless);
    BOOST_TEST_REQUIRE(!hop.has_value(), targets[i]);
    const std::string& why = hop.error().reason;
    BOOST_TEST((why.find("refused to connect") != std::string::npos ||
                why.find("only http and https") != std::string::npos),
               targets[i] << ": " << why);
  }
  BOOST_TEST(harmless.requests() == static_cast<int>(2 * targets.size()));
  BOOST_TEST(watched.connections() == 0);
}

BOOST_AUTO_TEST_CASE(the_builtin_engine_uses_input_images_visibly) {
  media_store media(dir / "media");
  const auto models = gesso::catalog::builtin();
  builtin_engine engine({});
  auto render = [&](std::vector<std::string> urls) {
    engine_job job;
    job.task_id = new_task_id();
    job.model = models.find("vendor4-2");
    job.prompt = "same prompt";
    job.aspect_ratio = "1:1";
    job.image_urls = std::move(urls);
    const auto out = engine.run(job, media);
    BOOST_REQUIRE_MESSAGE(out.result == engine_outcome::kind::succeeded, out.error);
    return decode_image(slurp(media.path_of(*out.image))).value();
  };
  const std::string red = "data:image/png;base64," + encode_base64(png);
  const std::string blue = "data:image/png;base64," + encode_base64(encode_png(solid(64, 48, 20, 20, 230)));
  const auto with_red = average(render({red}));
  const auto with_blue = average(render({blue}));
  BOOST_TEST(with_red[0] > with_red[2] + 40);  // the input shows through
  BOOST_TEST(with_blue[2] > with_blue[0] + 40);
  const auto one = render({red});
  const auto two = render({red, blue});  // the second input appears as a thumbnail
  BOOST_TEST((one.pixels != two.pixels));

  engine_job bad;
  bad.task_id = new_task_id();
  bad.model = models.find("vendor4-2");
  bad.prompt = "p";
  bad.aspect_ratio = "1:1";
  bad.image_urls = {"data:image/png;base64," + encode_base64("just text")};
  const auto refused = engine.run(bad, media);
  BOOST_TEST((refused.result == engine_outcome::kind::failed));
  BOOST_TEST(refused.error.find("image_urls[0] is not a usable image") != std::string::npos, refused.error);
}

BOOST_AUTO_TEST_SUITE_END()
