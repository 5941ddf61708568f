#include "server/db_executor.hpp"

namespace gesso::server {

db_executor::db_executor(std::size_t threads, std::size_t queue_limit)
    : pool_(threads), limit_(threads + queue_limit) {}

}  // namespace gesso::server
