#pragma once
// The requests gesso-load sends and what it reads from the answers: the task API as a client sees it.

#include "server/load/http_connection.hpp"
#include "server/load/load_options.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace gesso::load {

using request = boost::beast::http::request<boost::beast::http::string_body>;

/// A keep-alive request to the target of `o`, with the bearer `key` when given.
request api_request(const options& o, boost::beast::http::verb method, std::string target,
                    const std::string* key);

/// POST /api/v1/tasks/create for `model` and `prompt`.
request create_request(const options& o, const std::string& key, const std::string& model,
                       const std::string& prompt);

/// The `data` object of a 200 answer, or nothing.
std::optional<boost::json::object> data_of(const http_answer& answer);

/// A field of `o`, or "" / 0 when it is missing or of another type.
std::string string_field(const boost::json::object& o, const char* name);
std::int64_t integer_field(const boost::json::object& o, const char* name);

/// The path and query of a result URL: the generator fetches it from its own target, whatever host the
/// server wrote into the link (GESSO_PUBLIC_URL may name a load balancer the generator also uses).
std::string path_of(const std::string& url);

/// A task's status, and its result's path when it succeeded (0 and "" when the answer is not a 200).
struct task_view {
  int status = 0;
  std::string result_path;
};
task_view task_view_of(const http_answer& answer);

}  // namespace gesso::load
