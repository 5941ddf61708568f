#pragma once
// A task as the API shows it (docs/api.md): the query's data, the cancel's and each listed task.

#include "core/task.hpp"
#include "server/api/api_handlers.hpp"

#include <boost/json/value.hpp>

namespace gesso::api {

/// The task's data object: the specification's fields in its order, then error, progress, finished_at
/// and cancel_requested. Output URLs are signed with `links`.
boost::json::value task_json(const task_record& t, const media_links& links);

}  // namespace gesso::api
