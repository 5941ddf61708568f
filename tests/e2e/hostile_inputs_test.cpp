// The hostile probe's findings about input images: inline data: URLs kept in the database forever,
// an upper-case DATA: scheme, #fragments, the Host header of a non-default port, and interim 1xx
// answers from an image host.

#include "core/base64.hpp"
#include "server/engines/picture.hpp"
#include "tests/support/gesso_env.hpp"
#include "tests/support/test_http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <thread>

using namespace gesso;
using namespace gesso::testing;
using namespace std::chrono_literals;
namespace json = boost::json;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::string small_png() {
  return engines::encode_png({16, 16, std::vector<std::uint8_t>(16 * 16 * 3, 200)});
}

std::string create_with(const std::vector<std::string>& urls) {
  json::array list;
  for (const auto& u : urls) {
    list.emplace_back(u);
  }
  return json::serialize(json::object{{"model_id", "vendor4-2"}, {"prompt", "inputs"}, {"image_urls", list}});
}

std::string task_id_of(const http_reply& reply) {
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

/// An image host that answers every connection with fixed bytes and records what it was asked.
class raw_image_host {
 public:
  explicit raw_image_host(std::string answer) : answer_(std::move(answer)) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    thread_ = std::thread([this] {
      for (;;) {
        tcp::socket socket(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec || stopping_) {
          return;
        }
        std::string request;
        asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n", ec);
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(request);
        }
        asio::write(socket, asio::buffer(answer_), ec);
        socket.shutdown(tcp::socket::shutdown_both, ec);
      }
    });
  }
  ~raw_image_host() {
    stopping_ = true;
    boost::system::error_code ec;
    tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::vector<std::string> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  std::string answer_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<std::string> requests_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_inputs)

// A junk data: URL fails and is refunded, so it costs nothing; it must not stay in the database.
BOOST_AUTO_TEST_CASE(inline_inputs_are_dropped_from_the_database_when_the_task_is_final) {
  server_process server;
  worker_process worker;
  const auto account = make_account("inline", 100);
  const std::string good = "data:image/png;base64," + encode_base64(small_png());
  const std::string junk = "data:image/png;base64," + std::string(400000, 'A');  // decodes, but no image
  const std::string ok = task_id_of(server.client().create(account.key, create_with({good})));
  const std::string bad = task_id_of(server.client().create(account.key, create_with({junk})));
  BOOST_TEST(poll_until_final(server.client(), account.key, ok).statuses.back() == 3);
  BOOST_TEST(poll_until_final(server.client(), account.key, bad).statuses.back() == 4);
  for (const auto& [id, url] : {std::pair{ok, good}, std::pair{bad, junk}}) {
    const std::string stored = cluster().psql("SELECT image_urls::text FROM tasks WHERE id = '" + id + "'");
    BOOST_TEST(stored.size() < 200U, stored);
    BOOST_TEST(stored.find(std::to_string(url.size()) + " bytes, dropped when the task finished") !=
                   std::string::npos,
               stored);
  }
  BOOST_TEST(account_show(account.id).at("balance").as_int64() ==
             100 - 6);  // vendor4-2 costs 6; the failure is refunded
}

// URL schemes and media types are case-insensitive: create and the worker agree on that.
BOOST_AUTO_TEST_CASE(an_upper_case_data_url_is_accepted_and_used) {
  server_process server;
  worker_process worker;
  const auto account = make_account("upper", 100);
  for (const std::string prefix : {"DATA:IMAGE/PNG;BASE64,", "Data:Image/Png;Base64,"}) {
    const std::string id =
        task_id_of(server.client().create(account.key, create_with({prefix + encode_base64(small_png())})));
    BOOST_TEST(poll_until_final(server.client(), account.key, id).statuses.back() == 3, prefix);
  }
}

BOOST_AUTO_TEST_CASE(a_fragment_is_stripped_and_a_non_default_port_is_kept_in_host) {
  server_process server;
  worker_process worker;
  const auto account = make_account("fragment", 100);
  const std::string png = small_png();
  raw_image_host host("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: " +
                      std::to_string(png.size()) + "\r\nConnection: close\r\n\r\n" + png);
  const std::string url = "http://127.0.0.1:" + std::to_string(host.port()) + "/input.png#part";
  const std::string id = task_id_of(server.client().create(account.key, create_with({url})));
  BOOST_TEST(poll_until_final(server.client(), account.key, id).statuses.back() == 3);
  const auto seen = host.requests();
  BOOST_TEST_REQUIRE(seen.size() == 1U);
  BOOST_TEST(seen[0].starts_with("GET /input.png HTTP/1.1\r\n"), seen[0]);
  BOOST_TEST(seen[0].find("\r\nHost: 127.0.0.1:" + std::to_string(host.port()) + "\r\n") != std::string::npos,
             seen[0]);
}

BOOST_AUTO_TEST_CASE(interim_1xx_answers_before_the_image_are_skipped) {
  server_process server;
  worker_process worker;
  const auto account = make_account("interim", 100);
  const std::string png = small_png();
  raw_image_host host(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: " +
      std::to_string(png.size()) + "\r\n\r\n" + png);
  const std::string url = "http://127.0.0.1:" + std::to_string(host.port()) + "/input.png";
  const std::string id = task_id_of(server.client().create(account.key, create_with({url})));
  const auto done = poll_until_final(server.client(), account.key, id);
  BOOST_TEST(done.statuses.back() == 3);
}

BOOST_AUTO_TEST_SUITE_END()
