#include "server/runtime/blocking_pool.hpp"

namespace gesso::runtime {

blocking_pool::blocking_pool(std::size_t threads, std::size_t queue_limit)
    : pool_(threads), limit_(threads + queue_limit), threads_(threads) {}

}  // namespace gesso::runtime
