#include "server/api/api_response.hpp"

#include "server/runtime/blocking_pool.hpp"
#include "server/runtime/log.hpp"
#include "storage/connection_pool.hpp"

#include <boost/json.hpp>

namespace gesso::api {
namespace json = boost::json;

http::status status_of(errc code) {
  switch (code) {
    case errc::malformed_request:
    case errc::invalid_json:
    case errc::invalid_field:
    case errc::unknown_model:
      return http::status::bad_request;
    case errc::unauthorized:
      return http::status::unauthorized;
    case errc::insufficient_credits:
      return http::status::payment_required;
    case errc::forbidden:
      return http::status::forbidden;
    case errc::range_not_satisfiable:
      return http::status::range_not_satisfiable;
    case errc::not_found:
      return http::status::not_found;
    case errc::method_not_allowed:
      return http::status::method_not_allowed;
    case errc::payload_too_large:
      return http::status::payload_too_large;
    case errc::unsupported_media_type:
      return http::status::unsupported_media_type;
    case errc::header_too_large:
      return http::status::request_header_fields_too_large;
    case errc::unavailable:
      return http::status::service_unavailable;
    case errc::not_implemented:
      return http::status::not_implemented;
    case errc::conflict:
      return http::status::conflict;
    case errc::unprocessable:
      return http::status::unprocessable_entity;
    case errc::rate_limited:
      return http::status::too_many_requests;
  }
  return http::status::internal_server_error;
}

response json_response(http::status status, const json::value& body, std::string_view request_id) {
  response res(status, 11);
  res.set(http::field::content_type, "application/json; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  res.set("X-Request-Id", request_id);
  res.body() = json::serialize(body);
  res.prepare_payload();
  return res;
}

response success_response(std::string_view msg, json::value data, std::string_view request_id) {
  return json_response(http::status::ok, json::object{{"code", 200}, {"msg", msg}, {"data", std::move(data)}},
                       request_id);
}

response problem_response(const problem& p, std::string_view request_id) {
  const bool auth = p.code == errc::unauthorized;
  response res = json_response(status_of(p.code),
                               json::object{{"code", auth ? 401 : 0}, {"msg", p.message}, {"data", nullptr}},
                               request_id);
  if (auth) {
    res.set(http::field::www_authenticate, "Bearer");
  }
  if (p.code == errc::unavailable) {
    res.set(http::field::retry_after, "1");
  }
  return res;
}

response exception_response(std::exception_ptr error, std::string_view request_id) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const runtime::overloaded& e) {
    log::write(log::level::warn, "overloaded", {{"request_id", request_id}, {"reason", e.what()}});
    return problem_response({errc::unavailable, "the service is overloaded; retry shortly"}, request_id);
  } catch (const storage::unavailable& e) {
    log::write(log::level::warn, "database_unavailable", {{"request_id", request_id}, {"reason", e.what()}});
    return problem_response({errc::unavailable, "the database is unavailable; retry shortly"}, request_id);
  } catch (const std::exception& e) {
    log::write(log::level::error, "internal_error", {{"request_id", request_id}, {"reason", e.what()}});
  } catch (...) {
    log::write(log::level::error, "internal_error",
               {{"request_id", request_id}, {"reason", "unknown exception"}});
  }
  return json_response(http::status::internal_server_error,
                       json::object{{"code", 0},
                                    {"msg", "internal error; quote request id " + std::string(request_id)},
                                    {"data", nullptr}},
                       request_id);
}

}  // namespace gesso::api
