// The database hand-off's admission: client work beyond threads + queue is refused at once, and the
// process's own housekeeping neither counts against that limit nor is ever refused.

#include "server/runtime/blocking_pool.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>

using gesso::runtime::blocking_pool;
using gesso::runtime::overloaded;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

/// Starts `pool.run` (or run_internal) of a job that waits for `gate`, on `ioc`.
template <class Run>
std::future<int> start(asio::io_context& ioc, Run run) {
  return asio::co_spawn(ioc, std::move(run), asio::use_future);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(blocking_pool_admission)

BOOST_AUTO_TEST_CASE(work_beyond_threads_and_queue_is_refused_at_once) {
  blocking_pool pool(1, 1);
  asio::io_context ioc;
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  auto wait_for_gate = [opened] {
    opened.wait();
    return 1;
  };
  auto first = start(ioc, [&]() -> asio::awaitable<int> { co_return co_await pool.run(wait_for_gate); });
  auto second = start(ioc, [&]() -> asio::awaitable<int> { co_return co_await pool.run(wait_for_gate); });
  auto third = start(ioc, [&]() -> asio::awaitable<int> { co_return co_await pool.run(wait_for_gate); });
  std::thread runner([&ioc] { ioc.run(); });
  BOOST_CHECK_THROW(third.get(), overloaded);
  BOOST_TEST(pool.in_flight() == 2u);
  gate.set_value();
  BOOST_TEST(first.get() == 1);
  BOOST_TEST(second.get() == 1);
  runner.join();
  BOOST_TEST(pool.in_flight() == 0u);
  pool.join();
}

BOOST_AUTO_TEST_CASE(internal_work_never_takes_a_clients_place) {
  blocking_pool pool(1, 0);
  asio::io_context ioc;
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::promise<void> internal_started;
  auto housekeeping = [opened, &internal_started] {
    internal_started.set_value();
    opened.wait();
    return 7;
  };
  auto internal =
      start(ioc, [&]() -> asio::awaitable<int> { co_return co_await pool.run_internal(housekeeping); });
  std::thread runner([&ioc] { ioc.run(); });
  internal_started.get_future().wait();  // the only thread is busy with housekeeping
  BOOST_TEST(pool.in_flight() == 0u);
  asio::io_context client_ioc;
  auto client =
      start(client_ioc, [&]() -> asio::awaitable<int> { co_return co_await pool.run([] { return 3; }); });
  std::thread client_runner([&client_ioc] { client_ioc.run(); });
  BOOST_TEST((client.wait_for(50ms) == std::future_status::timeout));  // admitted, waiting for the thread
  gate.set_value();
  BOOST_TEST(client.get() == 3);
  BOOST_TEST(internal.get() == 7);
  runner.join();
  client_runner.join();
  pool.join();
}

BOOST_AUTO_TEST_SUITE_END()
