#pragma once
// A byte budget shared by every connection of a server: request bodies (and the memory their parse
// may take) are reserved from it before they are read, so the bodies held at once stay bounded
// whatever the clients send. A request that does not fit is refused with 503 before its body is read.

#include <atomic>
#include <cstddef>
#include <optional>

namespace gesso::api {

class memory_budget {
 public:
  explicit memory_budget(std::size_t capacity) : capacity_(capacity) {}
  memory_budget(const memory_budget&) = delete;
  memory_budget& operator=(const memory_budget&) = delete;

  /// Bytes held until destroyed (movable, never copied).
  class reservation {
   public:
    reservation(reservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    reservation& operator=(reservation&&) = delete;
    ~reservation() {
      if (budget_ != nullptr) {
        budget_->used_.fetch_sub(bytes_, std::memory_order_relaxed);
      }
    }

   private:
    friend class memory_budget;
    reservation(memory_budget* budget, std::size_t bytes) : budget_(budget), bytes_(bytes) {}
    memory_budget* budget_;
    std::size_t bytes_;
  };

  /// `bytes` from the budget, or nothing when they do not fit beside what is already held.
  std::optional<reservation> try_reserve(std::size_t bytes) {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (bytes > capacity_ - used) {
        return std::nullopt;
      }
    } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return reservation(this, bytes);
  }

  std::size_t in_use() const { return used_.load(std::memory_order_relaxed); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::atomic<std::size_t> used_{0};
};

}  // namespace gesso::api
