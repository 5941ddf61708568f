#include "server/worker/completer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include "server/runtime/asio_helpers.hpp"

namespace gesso::worker {
namespace asio = boost::asio;

struct completer::waiter {
  storage::lease_end end;
  asio::steady_timer done;  ///< cancelled when the batch holding this end is written
  bool finished = false;
  bool applied = false;
  std::exception_ptr error;
};

asio::awaitable<bool> completer::complete(storage::lease_end end) {
  waiter w{std::move(end), asio::steady_timer(executor_, asio::steady_timer::time_point::max()), false, false,
           nullptr};
  queued_.push_back(&w);
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(executor_, write_batches(), asio::detached);
  }
  while (!w.finished) {
    auto [ec] = co_await w.done.async_wait(runtime::as_tuple_awaitable);
    static_cast<void>(ec);
  }
  if (w.error) {
    std::rethrow_exception(w.error);
  }
  co_return w.applied;
}

asio::awaitable<void> completer::write_batches() {
  while (!queued_.empty()) {
    std::vector<waiter*> batch;
    std::vector<storage::lease_end> ends;
    while (!queued_.empty() && batch.size() < max_batch_) {
      batch.push_back(queued_.front());
      ends.push_back(queued_.front()->end);
      queued_.pop_front();
    }
    std::vector<bool> applied;
    std::exception_ptr error;
    try {
      storage::connection_pool* pool = connections_;
      // Named, not a temporary inside the co_await (GCC PR 100611).
      auto write = [pool, ends = std::move(ends)] { return storage::end_leases(*pool, ends); };
      applied = co_await database_calls_->run_internal(std::move(write));
    } catch (...) {
      error = std::current_exception();
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i]->finished = true;
      batch[i]->error = error;
      batch[i]->applied = !error && applied[i];
      batch[i]->done.cancel();
    }
  }
  writing_ = false;
}

}  // namespace gesso::worker
