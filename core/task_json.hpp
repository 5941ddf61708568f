#pragma once
// A task as the API shows it (docs/api.md): the query's data, the cancel's, each listed task's, and a
// webhook's body.

#include "core/task.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <string>

namespace gesso {

/// How result URLs are made: absolute, on the public base URL, signed and expiring.
struct media_links {
  std::string public_url;  ///< filled with the bound address at start-up when not configured
  std::string signing_key;
  std::chrono::seconds ttl{86400};
};

/// The task's data object: the specification's fields in its order, then error, progress, finished_at,
/// cancel_requested and webhook. Output URLs are signed with `links`.
boost::json::value task_json(const task_record& t, const media_links& links);

}  // namespace gesso
