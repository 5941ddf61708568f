#include "server/worker/success_batch.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include "server/runtime/asio_helpers.hpp"

namespace gesso::server {
namespace asio = boost::asio;

struct success_batch::waiter {
  storage::success_record record;
  asio::steady_timer done;  ///< cancelled when the batch holding this record is written
  bool finished = false;
  bool applied = false;
  std::exception_ptr error;
};

asio::awaitable<bool> success_batch::finalize(storage::success_record record) {
  waiter w{std::move(record), asio::steady_timer(executor_, asio::steady_timer::time_point::max()), false,
           false, nullptr};
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

asio::awaitable<void> success_batch::write_batches() {
  while (!queued_.empty()) {
    std::vector<waiter*> batch;
    std::vector<storage::success_record> records;
    while (!queued_.empty() && batch.size() < max_batch_) {
      batch.push_back(queued_.front());
      records.push_back(queued_.front()->record);
      queued_.pop_front();
    }
    std::vector<bool> applied;
    std::exception_ptr error;
    try {
      storage::connection_pool* pool = pool_;
      // Named, not a temporary inside the co_await (GCC PR 100611).
      auto write = [pool, records = std::move(records)] {
        return storage::finalize_successes(*pool, records);
      };
      applied = co_await db_->run_internal(std::move(write));
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

}  // namespace gesso::server
