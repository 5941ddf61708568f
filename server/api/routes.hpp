#pragma once
// The routing table of the public listener: path pattern and methods to endpoint, so 404 and 405 (with
// Allow) come from data. The handlers are dispatched on the endpoint (api_handlers.cpp).

#include "server/api/api_handlers.hpp"

#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace gesso::api {

enum class endpoint { create, query, cancel, list, account, usage, media, readyz, healthz, openapi };

/// One row of the table.
struct route_entry {
  endpoint id;
  std::string_view label;             ///< the metrics label
  std::array<http::verb, 2> methods;  ///< the methods it accepts (the same one twice when only one)
  std::string_view allow;             ///< the Allow header of a 405
  std::string_view path;              ///< its path as docs/openapi.yaml writes it ("/api/v1/tasks/{task_id}")
};

/// Every row, in the order of `endpoint` (the OpenAPI document's test walks it).
std::span<const route_entry> route_table();

/// A request target matched against the table.
struct matched_route {
  const route_entry* entry = nullptr;  ///< none: no such endpoint
  std::string_view path;               ///< the target without its query
  std::string_view param;              ///< the task id or media object
};

/// The route of `target` (its query ignored).
matched_route match_route(std::string_view target);

/// 404 when no route matched, 405 with Allow when the route does not accept `method`; nothing when
/// both fit. Sets rc->route to the route's label.
std::optional<response> route_refusal(const matched_route& m, http::verb method, request_context* rc);

}  // namespace gesso::api
