// Memory bounds under hostile input, measured as resident memory of the real processes (VmHWM, the
// peak): chunk-size lines and trailers without end, JSON bodies of tiny values, downloads of large
// outputs by slow readers, and tasks with many large input images (docs/security.md#bounds).

#include "core/base64.hpp"
#include "core/media_url.hpp"
#include "server/engines/picture.hpp"
#include "tests/support/gesso_env.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::uint64_t mib = 1024 * 1024;

// Under AddressSanitizer freed memory is held in a quarantine; without it, resident memory measures
// what the program holds rather than what the sanitizer keeps.
env_map measurable(env_map env = {}) {
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    env["ASAN_OPTIONS"] = std::string(asan) + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
  }
  return env;
}

std::string mb(std::uint64_t bytes) {
  return std::to_string(bytes / mib) + " MiB";
}

// Sends `prefix`, then `filler` bytes of 'a' in 1 MiB pieces, reading whatever the server answers
// meanwhile; returns the answer. Stops sending when the server stops reading or closes.
std::string flood(std::uint16_t port, const std::string& prefix, char fill, std::uint64_t filler) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  std::string answer;
  std::array<char, 4096> chunk{};
  const auto drain = [&] {
    socket.non_blocking(true);
    for (;;) {
      boost::system::error_code ec;
      const std::size_t n = socket.read_some(asio::buffer(chunk), ec);
      if (ec) {
        break;
      }
      answer.append(chunk.data(), n);
    }
    socket.non_blocking(false);
  };
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(prefix), ec);
  const std::string piece(mib, fill);
  for (std::uint64_t sent = 0; !ec && sent < filler; sent += piece.size()) {
    asio::write(socket, asio::buffer(piece), ec);
    drain();
  }
  socket.shutdown(tcp::socket::shutdown_send, ec);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline && answer.find("\r\n\r\n") == std::string::npos) {
    drain();
    std::this_thread::sleep_for(20ms);
  }
  return answer;
}

std::uint64_t peak_growth(int pid, std::uint64_t before) {
  const std::uint64_t peak = memory_of(pid).peak_rss_bytes;
  return peak > before ? peak - before : 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory_bounds)

// One connection used to grow the server by whatever it sent: a chunk extension, a chunk size of
// endless zeros or a trailer field without end was buffered whole, whatever the limits.
BOOST_AUTO_TEST_CASE(endless_chunk_lines_and_trailers_are_cut_off_within_the_read_buffer) {
  server_process server(measurable());
  const std::uint64_t before = memory_of(server.pid()).peak_rss_bytes;
  const std::string head = "POST /anything HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const auto& [name, prefix, fill] : std::vector<std::tuple<std::string, std::string, char>>{
           {"chunk extension", head + "5;x=", 'a'},
           {"leading zeros", head, '0'},
           {"trailer", head + "1\r\nx\r\n0\r\nX-Trailer: ", 'a'}}) {
    const std::string answer = flood(server.port(), prefix, fill, 32 * mib);
    BOOST_TEST(answer.starts_with("HTTP/1.1 400"), name << ": " << answer.substr(0, 200));
  }
  const std::uint64_t growth = peak_growth(server.pid(), before);
  BOOST_TEST_MESSAGE("server peak RSS " << mb(before) << " before, +" << mb(growth)
                                        << " after 3 x 32 MiB of endless chunk lines");
  BOOST_TEST(growth < 16 * mib, "peak RSS grew by " << mb(growth));
}

// An 8 MiB body of `0,0,0,…` used to cost about 25 times its size while parsing.
BOOST_AUTO_TEST_CASE(json_bodies_of_tiny_values_are_refused_within_the_body_budget) {
  server_process server(measurable());
  const std::uint64_t before = memory_of(server.pid()).peak_rss_bytes;
  std::string zeros = "[0";
  while (zeros.size() < 8 * mib - 16) {
    zeros += ",0";
  }
  zeros += "]";
  const std::string key = "sk-" + std::string(43, 'Z');  // shaped like a key: the parse comes first
  std::vector<int> statuses(8);
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    clients.emplace_back([&, i] { statuses[i] = server.client().create(key, zeros).status; });
  }
  const auto health = server.client().request("GET", "/healthz");
  for (auto& t : clients) {
    t.join();
  }
  BOOST_TEST(health.status == 200);
  for (const int status : statuses) {
    BOOST_TEST((status == 400 || status == 503), status);
  }
  const auto one = server.client().create(key, zeros);
  BOOST_TEST(one.status == 400);
  BOOST_TEST(std::string(one.json().at("msg").as_string()).find("too many JSON values") != std::string::npos,
             one.body);
  const std::uint64_t growth = peak_growth(server.pid(), before);
  BOOST_TEST_MESSAGE("server peak RSS " << mb(before) << " before, +" << mb(growth)
                                        << " after 8 concurrent 8 MiB bodies of zeros (limit 512 MiB)");
  BOOST_TEST(growth < 200 * mib, "peak RSS grew by " << mb(growth));
}

// Outputs above 64 MiB used to be cut at 64 MiB, and every download held its bytes in memory.
BOOST_AUTO_TEST_CASE(large_media_is_streamed_whole_with_exact_ranges_and_slow_readers_cost_little) {
  server_process server(measurable());
  const std::string object = "2026/11/22/task_large.mp4";
  const auto path = std::filesystem::path(shared_env().at("GESSO_MEDIA_DIR")) / object;
  std::filesystem::create_directories(path.parent_path());
  const std::uint64_t size = 72 * mib;
  {
    std::string bytes(size, '\0');
    for (std::uint64_t i = 0; i < size; ++i) {
      bytes[i] = static_cast<char>(i % 251);
    }
    std::ofstream(path, std::ios::binary) << bytes;
  }
  const std::string link = sign_media_path(test_signing_key, object, 4'000'000'000);
  const auto whole = server.client().request("GET", link);
  BOOST_TEST(whole.status == 200);
  BOOST_TEST(whole.header("content-length") == std::to_string(size));
  BOOST_TEST_REQUIRE(whole.body.size() == size);
  BOOST_TEST(static_cast<unsigned char>(whole.body[size - 1]) == (size - 1) % 251);
  const auto from_zero = server.client().request("GET", link, "", {{"Range", "bytes=0-"}});
  BOOST_TEST(from_zero.status == 206);
  BOOST_TEST(from_zero.header("content-range") ==
             "bytes 0-" + std::to_string(size - 1) + "/" + std::to_string(size));
  BOOST_TEST(from_zero.body.size() == size);
  const auto tail = server.client().request("GET", link, "", {{"Range", "bytes=70000000-70000009"}});
  BOOST_TEST(tail.status == 206);
  BOOST_TEST_REQUIRE(tail.body.size() == 10U);
  BOOST_TEST(static_cast<unsigned char>(tail.body[0]) == 70000000 % 251);

  const std::uint64_t before = memory_of(server.pid()).rss_bytes;
  asio::io_context ioc;
  std::vector<tcp::socket> readers;
  for (int i = 0; i < 10; ++i) {  // ask, then read nothing
    readers.emplace_back(ioc).connect({asio::ip::make_address("127.0.0.1"), server.port()});
    asio::write(readers.back(), asio::buffer("GET " + link + " HTTP/1.1\r\nHost: a\r\n\r\n"));
  }
  std::this_thread::sleep_for(1500ms);
  const std::uint64_t held = memory_of(server.pid()).rss_bytes;
  const std::uint64_t growth = held > before ? held - before : 0;
  BOOST_TEST_MESSAGE("server RSS " << mb(before) << " before, +" << mb(growth)
                                   << " with 10 slow readers of a 72 MiB file");
  BOOST_TEST(growth < 32 * mib, "RSS grew by " << mb(growth));
}

// Every input used to be decoded to full-size RGB at once: ten 4096x4096 PNGs took half a gigabyte.
BOOST_AUTO_TEST_CASE(large_input_images_are_decoded_one_at_a_time_and_small) {
  server_process server;
  worker_process worker(measurable());
  const auto account = make_account("big-inputs", 1000);
  engines::rgb_image big{4096, 4096, std::vector<std::uint8_t>(4096ULL * 4096 * 3)};
  for (std::size_t i = 0; i < big.pixels.size(); ++i) {
    big.pixels[i] = static_cast<std::uint8_t>((i / 3 / 4096) * 255 / 4096);  // a vertical ramp
  }
  const std::string url = "data:image/png;base64," + encode_base64(engines::encode_png(big));
  const auto body = [&](int inputs) {
    json::array urls;
    for (int i = 0; i < inputs; ++i) {
      urls.emplace_back(url);
    }
    return json::serialize(
        json::object{{"model_id", "vendor4-2"}, {"prompt", "ramps"}, {"image_urls", urls}});
  };
  const std::uint64_t before = memory_of(worker.pid()).peak_rss_bytes;
  const auto four = server.client().create(account.key, body(4));  // 64 Mi pixels: the whole budget
  BOOST_TEST_REQUIRE(four.status == 200, four.body);
  const auto done = poll_until_final(server.client(), account.key,
                                     std::string(four.json().at("data").at("task_id").as_string()), 180s);
  BOOST_TEST(done.statuses.back() == 3);
  const std::uint64_t growth = peak_growth(worker.pid(), before);
  BOOST_TEST_MESSAGE("worker peak RSS " << mb(before) << " before, +" << mb(growth)
                                        << " for one task with four 4096x4096 PNG inputs");
  BOOST_TEST(growth < 64 * mib, "peak RSS grew by " << mb(growth));

  const auto ten = server.client().create(account.key, body(10));
  BOOST_TEST_REQUIRE(ten.status == 200, ten.body);
  const std::string id(ten.json().at("data").at("task_id").as_string());
  BOOST_TEST(poll_until_final(server.client(), account.key, id, 180s).statuses.back() == 4);
  const auto shown = json::parse(gesso_cli({"task", "show", id, "--json"}).out).as_object();
  BOOST_TEST(std::string(shown.at("error").as_string()).find("budget for input pixels") != std::string::npos,
             shown.at("error"));
}

BOOST_AUTO_TEST_SUITE_END()
