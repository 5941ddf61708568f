#include "storage/notifications.hpp"

#include "storage/pool_internal.hpp"

#include <utility>

namespace gesso::storage {
namespace {

constexpr const char* channel = "gesso_tasks_created";

class counter final : public pqxx::notification_receiver {
 public:
  counter(pqxx::connection_base& c, const std::string& name) : pqxx::notification_receiver(c, name) {}
  void operator()(const std::string&, int) override { ++received; }
  int received = 0;
};

class collector final : public pqxx::notification_receiver {
 public:
  collector(pqxx::connection_base& c, const std::string& name) : pqxx::notification_receiver(c, name) {}
  void operator()(const std::string& payload, int) override {
    std::size_t start = 0;
    while (start < payload.size()) {
      const auto comma = payload.find(',', start);
      const auto end = comma == std::string::npos ? payload.size() : comma;
      if (end > start) {
        ids.push_back(payload.substr(start, end - start));
      }
      start = end + 1;
    }
  }
  std::vector<std::string> ids;
};

// A dedicated connection with the pool's client options (timeouts, keepalives).
std::unique_ptr<pqxx::connection> dedicated_connection(const pool_settings& settings) {
  connection_pool single(settings);
  auto session = detail::pool_access::acquire(single);
  return std::move(session->connection);
}

// await_notification with a millisecond timeout; broken connections become `unavailable`.
void await_for(pqxx::connection& c, std::chrono::milliseconds timeout, const char* what) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds);
  try {
    c.await_notification(static_cast<long>(seconds.count()), static_cast<long>(micros.count()));
  } catch (const pqxx::broken_connection& e) {
    throw unavailable(std::string(what) + e.what());
  }
}

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
  impl_->connection = dedicated_connection(settings);
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
  const int before = impl_->receiver->received;
  await_for(*impl_->connection, timeout, "lost the task listener connection: ");
  return impl_->receiver->received != before;
}

struct final_listener::impl {
  std::unique_ptr<pqxx::connection> connection;
  std::unique_ptr<collector> receiver;
};

final_listener::final_listener(const pool_settings& settings) : impl_(std::make_unique<impl>()) {
  impl_->connection = dedicated_connection(settings);
  try {
    impl_->receiver = std::make_unique<collector>(*impl_->connection, tasks_final_channel);
  } catch (const pqxx::broken_connection& e) {
    throw unavailable(std::string("cannot listen for finished tasks: ") + e.what());
  }
}

final_listener::~final_listener() {
  impl_->receiver.reset();  // before its connection
}

std::vector<std::string> final_listener::wait(std::chrono::milliseconds timeout) {
  await_for(*impl_->connection, timeout, "lost the finished-task listener connection: ");
  return std::exchange(impl_->receiver->ids, {});
}

}  // namespace gesso::storage
