#include "server/api/routes.hpp"

#include "server/api/api_response.hpp"

namespace gesso::api {
namespace {

constexpr std::string_view create_path = "/api/v1/tasks/create";
constexpr std::string_view task_prefix = "/api/v1/tasks/";
constexpr std::string_view cancel_suffix = "/cancel";
constexpr std::string_view list_path = "/api/v1/tasks";
constexpr std::string_view account_path = "/api/v1/account";
constexpr std::string_view usage_path = "/api/v1/account/usage";
constexpr std::string_view openapi_path = "/api/v1/openapi.json";

// One row per endpoint, in the order of `endpoint`.
constexpr std::array<route_entry, 10> routes{{
    {endpoint::create, "create", {http::verb::post, http::verb::post}, "POST", create_path},
    {endpoint::query, "query", {http::verb::get, http::verb::get}, "GET", "/api/v1/tasks/{task_id}"},
    {endpoint::cancel,
     "cancel",
     {http::verb::post, http::verb::post},
     "POST",
     "/api/v1/tasks/{task_id}/cancel"},
    {endpoint::list, "list", {http::verb::get, http::verb::get}, "GET", list_path},
    {endpoint::account, "account", {http::verb::get, http::verb::get}, "GET", account_path},
    {endpoint::usage, "usage", {http::verb::get, http::verb::get}, "GET", usage_path},
    {endpoint::media, "media", {http::verb::get, http::verb::head}, "GET, HEAD", "/media/{object}"},
    {endpoint::readyz, "readyz", {http::verb::get, http::verb::head}, "GET, HEAD", "/readyz"},
    {endpoint::healthz, "healthz", {http::verb::get, http::verb::head}, "GET, HEAD", "/healthz"},
    {endpoint::openapi, "openapi", {http::verb::get, http::verb::head}, "GET, HEAD", openapi_path},
}};

const route_entry& entry_of(endpoint id) {
  return routes[static_cast<std::size_t>(id)];
}

}  // namespace

std::span<const route_entry> route_table() {
  return routes;
}

matched_route match_route(std::string_view target) {
  matched_route m;
  m.path = target.substr(0, target.find('?'));
  if (m.path == list_path) {
    m.entry = &entry_of(endpoint::list);
  } else if (m.path == account_path) {
    m.entry = &entry_of(endpoint::account);
  } else if (m.path == usage_path) {
    m.entry = &entry_of(endpoint::usage);
  } else if (m.path == openapi_path) {
    m.entry = &entry_of(endpoint::openapi);
  } else if (m.path == create_path) {
    m.entry = &entry_of(endpoint::create);
  } else if (m.path.starts_with(task_prefix) && m.path.size() > task_prefix.size()) {
    const std::string_view rest = m.path.substr(task_prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
      m.entry = &entry_of(endpoint::query);
      m.param = rest;
    } else if (slash > 0 && rest.substr(slash) == cancel_suffix) {
      m.entry = &entry_of(endpoint::cancel);
      m.param = rest.substr(0, slash);
    }
  } else if (m.path.starts_with("/media/")) {
    m.entry = &entry_of(endpoint::media);
    m.param = m.path.substr(7);
  } else if (m.path == "/readyz") {
    m.entry = &entry_of(endpoint::readyz);
  } else if (m.path == "/healthz") {
    m.entry = &entry_of(endpoint::healthz);
  }
  return m;
}

std::optional<response> route_refusal(const matched_route& m, http::verb method, request_context* rc) {
  if (m.entry == nullptr) {
    return problem_response({errc::not_found,
                             "no such endpoint; the API is POST /api/v1/tasks/create and "
                             "GET /api/v1/tasks/{task_id}"},
                            rc->request_id);
  }
  rc->route = m.entry->label;
  if (method != m.entry->methods[0] && method != m.entry->methods[1]) {
    response res = problem_response({errc::method_not_allowed, "method not allowed; this endpoint accepts " +
                                                                   std::string(m.entry->allow)},
                                    rc->request_id);
    res.set(http::field::allow, m.entry->allow);
    return res;
  }
  return std::nullopt;
}

}  // namespace gesso::api
