#pragma once
// The API's routes: translate HTTP into core and storage calls and back, nothing else.

#include "core/catalog.hpp"
#include "server/db_executor.hpp"
#include "server/http_types.hpp"
#include "storage/connection_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>

namespace gesso::server {

/// What the handlers need; owned by main() and alive for the whole run.
struct api_context {
  const catalog* models = nullptr;
  storage::connection_pool* database = nullptr;
  db_executor* db = nullptr;
};

/// One request and what the frontend knows of it. Coroutines take it by pointer: g++ 12 mishandles
/// class-type temporaries that live across a co_await (GCC PR 100611).
struct exchange {
  request req;
  std::string request_id;
};

/// Answers one request. Never throws: every failure becomes a response (api_response.hpp).
boost::asio::awaitable<response> handle_request(api_context* ctx, exchange* ex);

}  // namespace gesso::server
