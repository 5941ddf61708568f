#pragma once
// The HTTP message types the frontend speaks.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace gesso::api {

namespace http = boost::beast::http;
using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

}  // namespace gesso::api
