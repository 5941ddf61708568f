#pragma once
// The Asio idioms every coroutine here uses, written once (Boost 1.81 has no bare as_tuple token and
// no cancel_after; those arrived later).

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <tuple>

namespace gesso::runtime {

/// The completion token for operations whose failures are expected outcomes (end of stream, timeout,
/// cancellation): `auto [ec, n] = co_await op(..., as_tuple_awaitable)` instead of an exception.
inline constexpr auto as_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

/// Waits `duration` on `timer`; a cancel of the timer ends the wait early, without an exception. The
/// timer is taken by pointer: g++ 12 mishandles reference parameters of coroutines (GCC PR 100611).
inline boost::asio::awaitable<void> sleep_for(boost::asio::steady_timer* timer,
                                              std::chrono::steady_clock::duration duration) {
  timer->expires_after(duration);
  std::tuple<boost::system::error_code> waited = co_await timer->async_wait(as_tuple_awaitable);
  static_cast<void>(waited);  // cancelled: the caller looks at its own state
}

}  // namespace gesso::runtime
