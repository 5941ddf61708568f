#pragma once
// Runs blocking database work on a bounded pool of threads, off the I/O threads. When more work
// is waiting than the limit allows, callers are refused at once (503) instead of queueing unboundedly.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <type_traits>

namespace gesso::runtime {

/// Thrown by blocking_pool::run when the pool and its queue are full.
class overloaded : public std::runtime_error {
 public:
  overloaded() : std::runtime_error("too many requests are waiting for the database") {}
};

class blocking_pool {
 public:
  /// `threads` run work; up to `queue_limit` more wait for one.
  blocking_pool(std::size_t threads, std::size_t queue_limit);

  /// Runs `work()` on a pool thread and resumes the caller on its own executor with the result;
  /// exceptions from `work` propagate. Throws `overloaded` without running it when full.
  template <class Work>
  boost::asio::awaitable<std::invoke_result_t<Work&>> run(Work work) {
    if (in_flight_.fetch_add(1, std::memory_order_relaxed) >= limit_) {
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      throw overloaded();
    }
    const in_flight_guard guard{in_flight_};
    co_return co_await on_pool(std::move(work));
  }

  /// Like run, for the process's own housekeeping (a NOTIFY after creates): never refused and not
  /// counted against the limit, so it cannot take the place of a client's request. It still waits for
  /// a thread like everything else.
  template <class Work>
  boost::asio::awaitable<std::invoke_result_t<Work&>> run_internal(Work work) {
    co_return co_await on_pool(std::move(work));
  }

  /// Work running or waiting now, and the number of threads (for metrics).
  std::size_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  std::size_t threads() const { return threads_; }

  /// Waits for queued work to finish and stops the threads.
  void join() { pool_.join(); }

 private:
  template <class Work>
  boost::asio::awaitable<std::invoke_result_t<Work&>> on_pool(Work work) {
    using result_type = std::invoke_result_t<Work&>;
    auto job = [work = std::move(work)]() mutable -> boost::asio::awaitable<result_type> {
      co_return work();
    };
    boost::asio::awaitable<result_type> op =
        boost::asio::co_spawn(pool_.get_executor(), std::move(job), boost::asio::use_awaitable);
    co_return co_await std::move(op);
  }

  struct in_flight_guard {
    std::atomic<std::size_t>& count;
    ~in_flight_guard() { count.fetch_sub(1, std::memory_order_relaxed); }
  };

  boost::asio::thread_pool pool_;
  std::atomic<std::size_t> in_flight_{0};
  std::size_t limit_;
  std::size_t threads_;
};

}  // namespace gesso::runtime
