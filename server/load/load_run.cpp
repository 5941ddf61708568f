#include "server/load/load_run.hpp"

#include "server/load/api_answers.hpp"
#include "server/load/http_connection.hpp"
#include "server/runtime/asio_helpers.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

namespace gesso::load {
namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

/// What every thread shares.
struct run_state {
  const options* o = nullptr;
  const std::vector<std::string>* keys = nullptr;
  recorder rec;
  std::mutex tasks_mutex;
  std::vector<created_task> tasks;
  std::atomic<std::uint64_t> unanswered{0};
  std::atomic<std::uint64_t> generator_errors{0};
  std::vector<std::pair<std::size_t, std::string>> query_targets;  ///< (key, task id)
  std::vector<double> model_cumulative;
  steady::time_point start;
  steady::time_point arrivals_end;
  steady::time_point settle_deadline;
  std::chrono::milliseconds timeout{};
};

/// One I/O thread: its io_context, its connections and its random numbers.
struct lane {
  asio::io_context ioc{1};
  connection_set connections;
  std::mt19937_64 rng;
  lane(const asio::ip::tcp::resolver::results_type& endpoints, int limit, std::uint64_t seed)
      : connections(ioc.get_executor(), endpoints, limit), rng(seed) {}
};

std::uint64_t micros_since(steady::time_point t) {
  const auto d = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - t).count();
  return d < 0 ? 0 : static_cast<std::uint64_t>(d);
}

std::size_t pick_model(run_state* s, lane* l) {
  const double total = s->model_cumulative.back();
  const double x = std::uniform_real_distribution<double>(0, total)(l->rng);
  for (std::size_t i = 0; i < s->model_cumulative.size(); ++i) {
    if (x < s->model_cumulative[i]) {
      return i;
    }
  }
  return s->model_cumulative.size() - 1;
}

/// One create, latency from `intended`; the new task's index in run_state::tasks when accepted.
asio::awaitable<std::optional<std::size_t>> create_one(run_state* s, lane* l, steady::time_point intended) {
  const std::size_t key = std::uniform_int_distribution<std::size_t>(0, s->keys->size() - 1)(l->rng);
  const std::string& model = s->o->models[pick_model(s, l)].model_id;
  const request req = create_request(*s->o, (*s->keys)[key], model, s->o->prompt);
  const http_answer answer = co_await send_on(&l->connections, &req, s->timeout);
  s->rec.answered(request_kind::create, answer.status, answer.failure, micros_since(intended),
                  answer.retried);
  if (answer.status == 0 && answer.failure != "connect refused") {
    ++s->unanswered;  // it may or may not have been created: the ledger check sees it
  }
  const std::optional<json::object> data = data_of(answer);
  if (!data || string_field(*data, "task_id").empty()) {
    co_return std::nullopt;
  }
  std::lock_guard lock(s->tasks_mutex);
  s->tasks.push_back(created_task{string_field(*data, "task_id"), key, integer_field(*data, "credits")});
  co_return s->tasks.size() - 1;
}

asio::awaitable<task_view> query_one(run_state* s, lane* l, std::string task_id, std::size_t key,
                                     std::optional<request_kind> kind, steady::time_point intended) {
  const request req = api_request(*s->o, http::verb::get, "/api/v1/tasks/" + task_id, &(*s->keys)[key]);
  const http_answer answer = co_await send_on(&l->connections, &req, s->timeout);
  if (kind) {
    s->rec.answered(*kind, answer.status, answer.failure, micros_since(intended), answer.retried);
  }
  co_return task_view_of(answer);
}

void mark(run_state* s, std::size_t index, int status) {
  std::lock_guard lock(s->tasks_mutex);
  s->tasks[index].status = status;
}

std::pair<std::string, std::size_t> id_and_key(run_state* s, std::size_t index) {
  std::lock_guard lock(s->tasks_mutex);
  return {s->tasks[index].id, s->tasks[index].key};
}

/// The whole client journey: create, poll every interval until final, download the result.
asio::awaitable<void> journey(run_state* s, lane* l, steady::time_point intended) {
  const std::optional<std::size_t> index = co_await create_one(s, l, intended);
  if (!index) {
    co_return;
  }
  const auto [task_id, key] = id_and_key(s, *index);
  asio::steady_timer timer(l->ioc);
  steady::time_point due = steady::now() + std::chrono::milliseconds(s->o->poll_interval_ms);
  while (due <= s->settle_deadline) {
    timer.expires_at(due);
    auto [ec] = co_await timer.async_wait(runtime::as_tuple_awaitable);
    static_cast<void>(ec);
    const task_view view = co_await query_one(s, l, task_id, key, request_kind::poll, due);
    if (view.status == 3 || view.status == 4) {
      mark(s, *index, view.status);
      s->rec.task_final(micros_since(intended));
      if (view.status == 3 && s->o->download && !view.result_path.empty()) {
        const request req = api_request(*s->o, http::verb::get, view.result_path, nullptr);
        const steady::time_point sent = steady::now();
        const http_answer file = co_await send_on(&l->connections, &req, s->timeout);
        const bool empty = file.status == 200 && file.body.empty();
        s->rec.answered(request_kind::download, empty ? 0 : file.status, empty ? "empty file" : file.failure,
                        micros_since(sent), file.retried);
      }
      co_return;
    }
    due = steady::now() + std::chrono::milliseconds(s->o->poll_interval_ms);
  }
}

asio::awaitable<void> one_arrival(run_state* s, lane* l, steady::time_point intended) {
  switch (s->o->kind) {
    case scenario::create: {
      const std::optional<std::size_t> created = co_await create_one(s, l, intended);
      static_cast<void>(created);
      break;
    }
    case scenario::query: {
      const auto& [key, task_id] = s->query_targets[std::uniform_int_distribution<std::size_t>(
          0, s->query_targets.size() - 1)(l->rng)];
      const task_view view = co_await query_one(s, l, task_id, key, request_kind::query, intended);
      static_cast<void>(view);
      break;
    }
    case scenario::journey:
      co_await journey(s, l, intended);
      break;
  }
}

void count_failure(run_state* s, std::exception_ptr e) {
  if (e) {
    ++s->generator_errors;
  }
}

/// Open loop: arrival i of this lane is due at start + offset + i × interval, sent then whatever the
/// earlier ones are doing; its latency runs from that due time.
asio::awaitable<void> open_arrivals(run_state* s, lane* l, int lane_index, int lanes) {
  const auto interval = std::chrono::duration<double>(static_cast<double>(lanes) / s->o->rate);
  const auto offset = std::chrono::duration<double>(static_cast<double>(lane_index) / s->o->rate);
  asio::steady_timer timer(l->ioc);
  for (std::uint64_t i = 0;; ++i) {
    const auto intended =
        s->start + std::chrono::duration_cast<steady::duration>(offset + interval * static_cast<double>(i));
    if (intended >= s->arrivals_end) {
      break;
    }
    if (steady::now() < intended) {  // when due already (a dense schedule), send without a timer round
      timer.expires_at(intended);
      auto [ec] = co_await timer.async_wait(runtime::as_tuple_awaitable);
      static_cast<void>(ec);
    }
    s->rec.send_lag(micros_since(intended));
    s->rec.arrival();
    asio::co_spawn(l->ioc, one_arrival(s, l, intended), [s](std::exception_ptr e) { count_failure(s, e); });
  }
}

/// Closed loop: one client, sending its next arrival as soon as the previous one is done.
asio::awaitable<void> closed_client(run_state* s, lane* l) {
  while (steady::now() < s->arrivals_end) {
    const steady::time_point sent = steady::now();
    s->rec.arrival();
    co_await one_arrival(s, l, sent);
  }
}

/// Before a query run: tasks to query, created through the API and spread over the keys.
asio::awaitable<void> make_query_targets(run_state* s, lane* l, std::size_t first, std::size_t step) {
  for (std::size_t i = first; i < static_cast<std::size_t>(s->o->query_tasks); i += step) {
    const std::size_t key = i % s->keys->size();
    const request req = create_request(*s->o, (*s->keys)[key], s->o->models.front().model_id, "query target");
    const http_answer answer = co_await send_on(&l->connections, &req, s->timeout);
    const std::optional<json::object> data = data_of(answer);
    if (!data) {
      throw std::runtime_error(
          "could not create a task to query: " +
          (answer.status != 0 ? std::to_string(answer.status) + " " + answer.body : answer.failure));
    }
    std::lock_guard lock(s->tasks_mutex);
    s->tasks.push_back(created_task{string_field(*data, "task_id"), key, integer_field(*data, "credits")});
    s->query_targets.emplace_back(key, s->tasks.back().id);
  }
}

/// After the run: polls every task not yet seen final until it is or the settle deadline passes.
asio::awaitable<void> settle_worker(run_state* s, lane* l,
                                    std::deque<std::pair<std::size_t, steady::time_point>>* pending) {
  asio::steady_timer timer(l->ioc);
  while (!pending->empty() && steady::now() < s->settle_deadline) {
    const auto [index, due] = pending->front();
    pending->pop_front();
    timer.expires_at(due);
    auto [ec] = co_await timer.async_wait(runtime::as_tuple_awaitable);
    static_cast<void>(ec);
    const auto [task_id, key] = id_and_key(s, index);
    const task_view view = co_await query_one(s, l, task_id, key, std::nullopt, due);
    if (view.status == 3 || view.status == 4) {
      mark(s, index, view.status);
    } else {
      pending->emplace_back(index, steady::now() + std::chrono::milliseconds(s->o->poll_interval_ms));
    }
  }
}

void settle(run_state* s, lane* l) {
  std::deque<std::pair<std::size_t, steady::time_point>> pending;
  {
    std::lock_guard lock(s->tasks_mutex);
    for (std::size_t i = 0; i < s->tasks.size(); ++i) {
      if (s->tasks[i].status != 3 && s->tasks[i].status != 4) {
        pending.emplace_back(i, steady::now());
      }
    }
  }
  if (pending.empty() || steady::now() >= s->settle_deadline) {
    return;
  }
  const int workers = std::min(s->o->connections, 64);
  l->ioc.restart();
  for (int i = 0; i < workers; ++i) {
    asio::co_spawn(l->ioc, settle_worker(s, l, &pending), [s](std::exception_ptr e) { count_failure(s, e); });
  }
  l->ioc.run();
}

// One lane per thread, the connections shared out between them.
std::vector<std::unique_ptr<lane>> make_lanes(const options& o) {
  asio::io_context resolve_context;
  asio::ip::tcp::resolver resolver(resolve_context);
  const auto endpoints = resolver.resolve(o.host, o.port);
  std::vector<std::unique_ptr<lane>> lanes;
  std::random_device seed;
  for (int i = 0; i < o.threads; ++i) {
    const int limit = o.connections / o.threads + (i < o.connections % o.threads ? 1 : 0);
    lanes.push_back(
        std::make_unique<lane>(endpoints, std::max(limit, 1), (std::uint64_t{seed()} << 32) | seed()));
  }
  return lanes;
}

// The query scenario's tasks, created before the clock starts (sixteen at a time).
void prepare_query_targets(run_state* s, lane* l) {
  std::exception_ptr failed;
  for (std::size_t i = 0; i < 16; ++i) {
    asio::co_spawn(l->ioc, make_query_targets(s, l, i, 16),
                   [&failed](std::exception_ptr e) { failed = e ? e : failed; });
  }
  l->ioc.run();
  l->ioc.restart();
  if (failed) {
    std::rethrow_exception(failed);
  }
}

// Sets the clock and spawns each lane's arrivals (open loop) or clients (closed loop).
void start_traffic(run_state* s, const std::vector<std::unique_ptr<lane>>& lanes) {
  const options& o = *s->o;
  s->start = steady::now() + std::chrono::milliseconds(50);
  s->arrivals_end =
      s->start + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.duration_s));
  s->settle_deadline = s->arrivals_end + std::chrono::duration_cast<steady::duration>(
                                             std::chrono::duration<double>(o.settle_s));
  for (int i = 0; i < o.threads; ++i) {
    lane* l = lanes[static_cast<std::size_t>(i)].get();
    if (o.mode == loop_mode::open) {
      asio::co_spawn(l->ioc, open_arrivals(s, l, i, o.threads),
                     [s](std::exception_ptr e) { count_failure(s, e); });
    } else {
      const int clients = o.connections / o.threads + (i < o.connections % o.threads ? 1 : 0);
      for (int c = 0; c < clients; ++c) {
        asio::co_spawn(l->ioc, closed_client(s, l), [s](std::exception_ptr e) { count_failure(s, e); });
      }
    }
  }
}

// Runs every lane on its own thread until all are done, closing a timeline second each second (and
// printing every fifth); answers how many seconds were closed.
int run_lanes(run_state* s, const std::vector<std::unique_ptr<lane>>& lanes, std::ostream& progress) {
  std::atomic<int> running{static_cast<int>(lanes.size())};
  std::vector<std::thread> threads;
  for (const auto& l : lanes) {
    threads.emplace_back([&running, l = l.get()] {
      l->ioc.run();
      --running;
    });
  }
  int second = 0;
  while (running > 0) {
    const steady::time_point next = s->start + std::chrono::seconds(second + 1);
    while (running > 0 && steady::now() < next) {
      std::this_thread::sleep_for(
          std::min<steady::duration>(next - steady::now(), std::chrono::milliseconds(20)));
    }
    if (steady::now() >= next) {
      const timeline_second row = s->rec.tick(second);
      if (!s->o->quiet && (second + 1) % 5 == 0) {
        print_progress(progress, row);
      }
      ++second;
    }
  }
  for (auto& t : threads) {
    t.join();
  }
  return second;
}

}  // namespace

report run_load(const options& o, const run_accounts& accounts, std::ostream& progress) {
  run_state s;
  s.o = &o;
  s.keys = &accounts.keys;
  s.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000));
  double total = 0;
  for (const model_share& m : o.models) {
    total += m.weight;
    s.model_cumulative.push_back(total);
  }
  const std::vector<std::unique_ptr<lane>> lanes = make_lanes(o);
  if (o.kind == scenario::query) {
    prepare_query_targets(&s, lanes[0].get());
  }
  start_traffic(&s, lanes);
  const int seconds = run_lanes(&s, lanes, progress);
  report r;
  r.settings = o;
  r.elapsed_s = std::chrono::duration<double>(steady::now() - s.start).count();
  s.rec.tick(seconds);  // the last, partial second
  r.arrival_window_s = o.mode == loop_mode::open ? o.duration_s : std::min(o.duration_s, r.elapsed_s);
  for (const auto& l : lanes) {
    r.connections_opened += l->connections.opened();
  }
  s.rec.finish(r);
  settle(&s, lanes[0].get());
  r.check = check_end(o, s.tasks, s.unanswered, s.generator_errors, accounts);
  return r;
}

}  // namespace gesso::load
