#pragma once
// The read endpoints beside the specification's two (docs/api.md): the listing of an account's tasks,
// and the account with its usage.

#include "server/api/api_handlers.hpp"

namespace gesso::api {

/// GET /api/v1/tasks?status=&model_id=&created_after=&created_before=&limit=&cursor=
boost::asio::awaitable<response> list_tasks(api_context* ctx, request_context* rc);

/// GET /api/v1/account: the key's account, its balance and the limits that hold for it.
boost::asio::awaitable<response> show_account(api_context* ctx, request_context* rc);

/// GET /api/v1/account/usage?from=&to=&group_by=model|day
boost::asio::awaitable<response> show_usage(api_context* ctx, request_context* rc);

}  // namespace gesso::api
