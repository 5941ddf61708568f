#pragma once
// The single translation point from outcomes and exceptions to HTTP statuses and the
// {"code","msg","data"} envelope (docs/api.md#envelope).

#include "core/error.hpp"
#include "server/api/http_types.hpp"

#include <boost/json/value.hpp>

#include <exception>
#include <string_view>

namespace gesso::api {

/// The fixed message of a successful create.
inline constexpr std::string_view create_success_message = "任务提交成功";

/// A JSON response with the headers every Gesso response carries (X-Request-Id, no-store).
response json_response(http::status status, const boost::json::value& body, std::string_view request_id);

/// 200 with {"code":200,"msg":msg,"data":data}.
response success_response(std::string_view msg, boost::json::value data, std::string_view request_id);

/// The status and envelope for an expected failure: 401 answers code 401, the others code 0.
response problem_response(const problem& p, std::string_view request_id);

/// The answer to an exception escaping a handler: 503 + Retry-After for overload and database
/// outages, otherwise 500 with a generic message (the details go to the log with the request id).
response exception_response(std::exception_ptr error, std::string_view request_id);

/// The HTTP status of each errc.
http::status status_of(errc code);

}  // namespace gesso::api
