#include "storage/notifications.hpp"

#include "storage/pool_internal.hpp"

namespace gesso::storage {
namespace {

constexpr const char* channel = "gesso_tasks_created";

class counter final : public pqxx::notification_receiver {
 public:
  counter(pqxx::connection_base& c, const std::string& name) : pqxx::notification_receiver(c, name) {}
  void operator()(const std::string&, int) override { ++received; }
  int received = 0;
};

}  // namespace

void notify_tasks_created(connection_pool& pool) {
  detail::with_connection(pool, [](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    tx.exec(std::string("NOTIFY ") + channel);
    return true;
  });
}

struct task_listener::impl {
  std::unique_ptr<pqxx::connection> connection;
  std::unique_ptr<counter> receiver;
};

task_listener::task_listener(const pool_settings& settings) : impl_(std::make_unique<impl>()) {
  // A one-connection pool gives the same client options (timeouts, keepalives) as every other connection.
  connection_pool single(settings);
  auto session = detail::pool_access::acquire(single);
  impl_->connection = std::move(session->connection);
  try {
    impl_->receiver = std::make_unique<counter>(*impl_->connection, channel);
  } catch (const pqxx::broken_connection& e) {
    throw unavailable(std::string("cannot listen for new tasks: ") + e.what());
  }
}

task_listener::~task_listener() {
  impl_->receiver.reset();  // before its connection
}

bool task_listener::wait(std::chrono::milliseconds timeout) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds);
  try {
    const int before = impl_->receiver->received;
    impl_->connection->await_notification(static_cast<long>(seconds.count()),
                                          static_cast<long>(micros.count()));
    return impl_->receiver->received != before;
  } catch (const pqxx::broken_connection& e) {
    throw unavailable(std::string("lost the task listener connection: ") + e.what());
  }
}

}  // namespace gesso::storage
