#include "server/api/http_server.hpp"

#include "core/ids.hpp"
#include "server/api/api_response.hpp"
#include "server/api/http_io.hpp"
#include "server/api/parked_waits.hpp"
#include "server/api/task_waiters.hpp"
#include "server/runtime/asio_helpers.hpp"
#include "server/runtime/health_server.hpp"
#include "server/runtime/log.hpp"
#include "server/runtime/process_setup.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <atomic>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace gesso::api {
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
using runtime::as_tuple_awaitable;

namespace {

struct connection {
  explicit connection(tcp::socket socket) : stream(std::move(socket)) {}
  beast::tcp_stream stream;
  /// Waiting for the first byte of a request. Written on the connection's strand, read by the
  /// acceptor when it looks for a connection to give way.
  std::atomic<bool> idle{true};
  bool evicted = false;  ///< asked to give way; guarded by the registry mutex
};

// The query string stays out of the logs: a media link's carries its signature.
std::string_view path_without_query(std::string_view target) {
  return target.substr(0, target.find('?'));
}

}  // namespace

struct http_server::impl {
  explicit impl(http_settings s) : settings(std::move(s)), bodies(settings.body_memory_bytes) {}
  http_settings settings;
  api_context api;
  asio::io_context ioc;
  tcp::acceptor acceptor{asio::make_strand(ioc)};
  // Signals and the drain's grace timer share one strand: their handlers never run concurrently.
  asio::strand<asio::io_context::executor_type> control{asio::make_strand(ioc)};
  asio::signal_set signals{control, SIGTERM, SIGINT};
  std::optional<task_signal> wake_workers;
  api_metrics metrics;
  memory_budget bodies;                         ///< request bodies held at once, all connections together
  request_reading reading{&settings, &bodies};  ///< what reading a request needs
  std::optional<runtime::health_server> admin;  ///< GESSO_ADMIN_LISTEN: /metrics
  std::atomic<bool> drain_started{false};  ///< the drain began: /readyz fails, responses close connections
  std::atomic<bool> accepting_stopped{false};  ///< the grace is over: no longer accepting
  std::optional<asio::steady_timer> grace_timer;
  std::mutex registry_mutex;
  std::unordered_map<std::uint64_t, std::weak_ptr<connection>> registry;
  std::uint64_t next_id = 0;

  std::uint64_t enroll(const std::shared_ptr<connection>& c) {
    std::lock_guard lock(registry_mutex);
    registry.emplace(++next_id, c);
    return next_id;
  }

  /// Whether a new connection may be served: below the limit, or after asking the oldest idle
  /// connection to give way (it closes on its strand, so the count can exceed the limit by the
  /// connections still closing).
  bool make_room() {
    std::lock_guard lock(registry_mutex);
    if (registry.size() < settings.max_connections) {
      return true;
    }
    std::shared_ptr<connection> oldest;
    std::uint64_t oldest_id = 0;
    for (const auto& [id, weak] : registry) {
      auto c = weak.lock();
      if (c && c->idle && !c->evicted && (!oldest || id < oldest_id)) {
        oldest = std::move(c);
        oldest_id = id;
      }
    }
    if (!oldest) {
      return false;
    }
    oldest->evicted = true;
    asio::post(oldest->stream.get_executor(), [this, oldest] {
      if (oldest->idle) {
        oldest->stream.cancel();
      } else {  // a request arrived meanwhile: it stays, and may give way when idle again
        std::lock_guard relock(registry_mutex);
        oldest->evicted = false;
      }
    });
    return true;
  }

  void withdraw(std::uint64_t id) {
    std::lock_guard lock(registry_mutex);
    registry.erase(id);
  }

  // First signal: fail readiness for the grace period, then stop. A second signal stops at once.
  void on_signal(int signal) {
    if (drain_started.exchange(true)) {
      grace_timer->cancel();
      return;
    }
    log::write(log::level::info, "drain_started",
               {{"signal", signal}, {"grace_ms", static_cast<std::int64_t>(settings.drain_grace.count())}});
    // The wait for a second signal goes first: begin_drain cancels it, and a wait registered after
    // that cancel would keep the event loop, and so the process, alive.
    signals.async_wait([this](const boost::system::error_code& ec, int again) {
      if (!ec) {
        on_signal(again);
      }
    });
    grace_timer.emplace(control, settings.drain_grace);
    grace_timer->async_wait([this, signal](const boost::system::error_code&) { begin_drain(signal); });
  }

  void begin_drain(int signal) {
    if (accepting_stopped.exchange(true)) {
      return;
    }
    log::write(log::level::info, "draining", {{"signal", signal}});
    signals.cancel();
    if (api.waiters != nullptr) {
      api.waiters->close();  // waiting queries answer now, with their task's current state
    }
    asio::post(acceptor.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor.close(ignored);
    });
    std::lock_guard lock(registry_mutex);
    for (const auto& [id, weak] : registry) {
      if (auto c = weak.lock()) {
        asio::post(c->stream.get_executor(), [c] {
          if (c->idle) {
            c->stream.cancel();
          }
        });
      }
    }
  }
};

namespace {

asio::awaitable<void> serve(http_server::impl* s, std::shared_ptr<connection> c, std::uint64_t id) {
  beast::flat_buffer buffer(read_buffer_limit(s->settings));
  while (!s->accepting_stopped) {
    c->idle = true;
    if (buffer.size() == 0) {
      c->stream.expires_after(s->settings.idle_timeout);
      auto [ec, n] = co_await c->stream.async_read_some(buffer.prepare(4096), as_tuple_awaitable);
      if (ec) {
        break;
      }
      buffer.commit(n);
    }
    c->idle = false;
    const auto started = std::chrono::steady_clock::now();
    request_context rc;
    rc.request_id = new_request_id();
    bool quit = false;
    std::optional<memory_budget::reservation> body_memory;
    std::optional<response> refused =
        co_await read_request(&s->reading, &c->stream, &buffer, &rc, &quit, &body_memory);
    if (quit) {
      break;
    }
    // No co_await inside a conditional expression: g++ 12 miscompiles the temporaries it creates.
    response res;
    if (refused) {
      res = std::move(*refused);
    } else {
      res = co_await handle_request(&s->api, &rc);
      if (rc.parked) {
        // A query that waits: only this frame and the timer's stay while it does, and the read buffer is
        // given back unless it holds the start of a pipelined request.
        if (buffer.size() == 0) {
          buffer.shrink_to_fit();
        }
        co_await finish_wait(&s->api, &rc, &res);
      }
    }
    // Decided after handling: a drain that began meanwhile closes the connection after this response.
    const bool keep_alive = !refused && rc.req.keep_alive() && !s->drain_started;
    res.version(refused ? 11 : rc.req.version());
    res.keep_alive(keep_alive);
    const bool head = !refused && rc.req.method() == http::verb::head;
    const boost::system::error_code wec = co_await write_response(&s->settings, &c->stream, &res, &rc, head);
    body_memory.reset();
    const auto elapsed = std::chrono::steady_clock::now() - started;
    const std::string_view route = rc.route;  // "other" for refused requests: never routed
    s->metrics.requests.add({route, std::to_string(res.result_int())});
    s->metrics.durations.observe({route}, std::chrono::duration<double>(elapsed).count());
    if (log::enabled(log::level::info)) {
      const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
      log::write(log::level::info, "request",
                 {{"request_id", rc.request_id},
                  {"method", refused ? "-" : std::string(rc.req.method_string())},
                  {"path", refused ? "-" : log::printable(path_without_query(rc.req.target()))},
                  {"status", res.result_int()},
                  {"duration_us", micros}});
    }
    if (wec || !keep_alive) {
      if (refused && !wec) {
        co_await linger(&c->stream);
      }
      break;
    }
  }
  boost::system::error_code ignored;
  c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  c->stream.close();
  s->withdraw(id);
}

asio::awaitable<void> accept_loop(http_server::impl* s) {
  asio::steady_timer backoff(s->acceptor.get_executor());
  std::chrono::steady_clock::time_point last_refusal_log{};
  while (s->acceptor.is_open()) {
    auto [ec, socket] = co_await s->acceptor.async_accept(asio::make_strand(s->ioc), as_tuple_awaitable);
    if (ec) {
      if (ec == asio::error::operation_aborted || !s->acceptor.is_open()) {
        break;
      }
      // Out of descriptors or a transient network error: pause instead of spinning.
      log::write(log::level::warn, "accept_failed", {{"reason", ec.message()}});
      co_await runtime::sleep_for(&backoff, std::chrono::milliseconds(50));  // cancelled: retries sooner
      continue;
    }
    boost::system::error_code ignored;
    if (!s->make_room()) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_refusal_log > std::chrono::seconds(1)) {  // one line a second under a flood
        log::write(log::level::warn, "connection_limit",
                   {{"max_connections", s->settings.max_connections}, {"action", "closed new connection"}});
        last_refusal_log = now;
      }
      socket.close(ignored);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ignored);
    auto c = std::make_shared<connection>(tcp::socket(std::move(socket)));
    const std::uint64_t id = s->enroll(c);
    asio::co_spawn(c->stream.get_executor(), serve(s, c, id), asio::detached);
  }
}

tcp::endpoint resolve_listen_address(asio::io_context& ioc, const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) {
    return {address, port};
  }
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(host, std::to_string(port));
  return results.begin()->endpoint();
}

}  // namespace

http_settings http_settings_from(const config& cfg) {
  http_settings http;
  http.host = cfg.listen_host;
  http.port = cfg.listen_port;
  http.io_threads = cfg.io_threads > 0 ? cfg.io_threads
                                       : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  http.idle_timeout = cfg.idle_timeout;
  http.read_timeout = cfg.read_timeout;
  http.write_timeout = cfg.write_timeout;
  http.max_body_bytes = cfg.max_body_bytes;
  http.max_header_bytes = cfg.max_header_bytes;
  http.body_memory_bytes = cfg.body_memory_bytes;
  if (cfg.admin_listen_port) {
    http.admin_host = cfg.admin_listen_host;
    http.admin_port = *cfg.admin_listen_port;
  }
  http.max_connections =
      runtime::connection_limit_within_open_files(static_cast<std::size_t>(cfg.max_connections));
  http.notify_window = cfg.notify_window;
  http.drain_grace = cfg.drain_grace;
  return http;
}

http_server::http_server(http_settings settings, api_context api)
    : impl_(std::make_unique<impl>(std::move(settings))) {
  impl_->api = api;
  impl_->wake_workers.emplace(impl_->ioc.get_executor(), *api.database_calls, *api.connections,
                              impl_->settings.notify_window);
  impl_->api.wake_workers = &*impl_->wake_workers;
  impl_->api.drain_started = &impl_->drain_started;
  impl_->api.metrics = &impl_->metrics;
  impl* s = impl_.get();
  s->metrics.registry.gauge("gesso_http_connections", "Open client connections.", [s] {
    std::lock_guard lock(s->registry_mutex);
    return static_cast<double>(s->registry.size());
  });
  const runtime::blocking_pool* calls = api.database_calls;
  s->metrics.registry.gauge(
      "gesso_db_pool_in_use", "Database threads (= connections) running a request's work.",
      [calls] { return static_cast<double>(std::min(calls->in_flight(), calls->threads())); });
  s->metrics.registry.gauge("gesso_db_pool_waiting", "Requests waiting for a database thread.", [calls] {
    return static_cast<double>(calls->in_flight() > calls->threads() ? calls->in_flight() - calls->threads()
                                                                     : 0);
  });
  s->metrics.registry.gauge(
      "gesso_http_body_memory_bytes",
      "Bytes reserved for request bodies being read and parsed (GESSO_BODY_MEMORY_BYTES).",
      [s] { return static_cast<double>(s->bodies.in_use()); });
  s->metrics.registry.gauge("gesso_db_pool_threads", "Database threads (GESSO_DB_POOL_SIZE).",
                            [calls] { return static_cast<double>(calls->threads()); });
}

http_server::~http_server() = default;

void http_server::run() {
  impl& s = *impl_;
  const tcp::endpoint endpoint = resolve_listen_address(s.ioc, s.settings.host, s.settings.port);
  s.acceptor.open(endpoint.protocol());
  s.acceptor.set_option(asio::socket_base::reuse_address(true));
  s.acceptor.bind(endpoint);
  s.acceptor.listen(asio::socket_base::max_listen_connections);
  const tcp::endpoint bound = s.acceptor.local_endpoint();
  const std::string host =
      bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
  const std::string local =
      bound.address().is_unspecified() ? (bound.address().is_v6() ? "[::1]" : "127.0.0.1") : host;
  if (s.api.links->public_url.empty()) {
    s.api.links->public_url = "http://" + local + ":" + std::to_string(bound.port());
  }
  std::cout << "gesso-server listening on http://" << host << ":" << bound.port() << std::endl;
  if (!s.settings.admin_host.empty()) {
    s.admin.emplace(s.settings.admin_host, s.settings.admin_port, [&s](std::string_view path) {
      if (path == "/metrics") {
        return runtime::probe_answer{200, s.metrics.registry.render(),
                                     std::string(runtime::metrics::content_type)};
      }
      if (path == "/healthz") {
        return runtime::probe_answer{200, R"({"status":"ok"})"};
      }
      return runtime::probe_answer{404,
                                   R"({"status":"no such endpoint; the admin listener serves /metrics"})"};
    });
    std::cout << "gesso-server admin on http://" << s.settings.admin_host << ":" << s.admin->port()
              << std::endl;
  }
  log::write(log::level::info, "listening", {{"address", host + ":" + std::to_string(bound.port())}});

  s.signals.async_wait([&s](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      s.on_signal(signal);
    }
  });
  asio::co_spawn(s.acceptor.get_executor(), accept_loop(&s), asio::detached);

  std::vector<std::thread> threads;
  for (int i = 1; i < s.settings.io_threads; ++i) {
    threads.emplace_back([&s] { s.ioc.run(); });
  }
  s.ioc.run();
  for (auto& t : threads) {
    t.join();
  }
  log::write(log::level::info, "stopped", {});
}

}  // namespace gesso::api
