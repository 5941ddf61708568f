// gesso-bare-server: the ceiling that Gesso's query path is measured against (docs/benchmarks.md) and
// the fast local server the load generator's pacing test runs against. A bare Beast server on the
// same threading as gesso-server (a strand per connection, N I/O threads), no database: GET answers a
// fixed finished task, POST a fixed created task, both in the API's envelope.
//
//   gesso-bare-server [--threads N] [--pending]
//
// prints "listening on 127.0.0.1:PORT" and serves until SIGTERM. --pending: GET answers a queued task
// instead, so a Gesso worker's task-api engine keeps polling it (the in-flight remote tasks benchmark).

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <csignal>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

const std::string finished_task =
    R"({"code":200,"msg":"ok","data":{"task_id":"task_00000000000000000000000000","task_status":3,)"
    R"("task_type":"image","model_id":"vendor4-2","image_url":null,"video_url":null,"audio_url":null,)"
    R"("credits":6,"created_at":1700000000}})";
const std::string pending_task =
    R"({"code":200,"msg":"ok","data":{"task_id":"task_00000000000000000000000000","task_status":1,)"
    R"("task_type":"image","model_id":"vendor4-2","image_url":null,"video_url":null,"audio_url":null,)"
    R"("credits":6,"created_at":1700000000}})";
const std::string created_task =
    R"({"code":200,"msg":"ok","data":{"task_id":"task_00000000000000000000000000",)"
    R"("request_id":"req_00000000000000000000","credits":6}})";

asio::awaitable<void> session(tcp::socket socket, const std::string* query_answer) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(1 << 20);
    stream.expires_after(60s);
    auto [read_ec, read] =
        co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    static_cast<void>(read);
    if (read_ec) {
      break;
    }
    const http::request<http::string_body>& req = parser.get();
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/json");
    res.body() = req.method() == http::verb::post ? created_task : *query_answer;
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    stream.expires_after(60s);
    auto [write_ec, written] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
    static_cast<void>(written);
    if (write_ec || !res.keep_alive()) {
      break;
    }
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor* acceptor, const std::string* query_answer) {
  for (;;) {
    auto [ec, socket] = co_await acceptor->async_accept(asio::make_strand(acceptor->get_executor()),
                                                        asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted) {
      co_return;
    }
    if (!ec) {
      socket.set_option(tcp::no_delay(true));
      asio::co_spawn(socket.get_executor(), session(std::move(socket), query_answer), asio::detached);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  const std::string* query_answer = &finished_task;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--pending") {
      query_answer = &pending_task;
    } else {
      std::cerr << "usage: gesso-bare-server [--threads N] [--pending]\n";
      return 2;
    }
  }
  asio::io_context ioc(threads);
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::cout << "listening on 127.0.0.1:" << acceptor.local_endpoint().port() << std::endl;
  asio::signal_set signals(ioc, SIGTERM, SIGINT);
  signals.async_wait([&](const beast::error_code&, int) {
    acceptor.close();
    ioc.stop();
  });
  asio::co_spawn(ioc, accept_loop(&acceptor, query_answer), asio::detached);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) {
    pool.emplace_back([&ioc] { ioc.run(); });
  }
  ioc.run();
  for (auto& t : pool) {
    t.join();
  }
  return 0;
}
