#pragma once
// GET/HEAD /media/<object>?expires=…&sig=…: signed, expiring downloads of task outputs, with Range.

#include "server/api/api_handlers.hpp"

#include <boost/asio/awaitable.hpp>

namespace gesso::api {

/// Answers a request under /media/.
boost::asio::awaitable<response> serve_media(api_context* ctx, request_context* rc, std::string_view object,
                                             std::string_view query);

}  // namespace gesso::api
