// Fuzzes the readers of an upstream task-api's answers (create and query envelopes). The first two
// bytes choose the HTTP status, the rest is the body.

#include "server/engines/task_api_engine.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using gesso::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  const unsigned status = 100u + (static_cast<unsigned>(data[0]) << 8 | data[1]) % 500u;
  const auto body = gesso::fuzz::as_text(data + 2, size - 2);
  const auto created = gesso::engines::read_create_answer(status, body);
  if (created.outcome == gesso::engines::upstream_created::kind::accepted) {
    require(!created.task_id.empty(), "an accepted create names the upstream task");
    require(status == 200, "only HTTP 200 is an accepted create");
  }
  const auto task = gesso::engines::read_query_answer(status, body);
  if (task.outcome == gesso::engines::upstream_task::kind::found) {
    require(status == 200, "only HTTP 200 is a found task");
    require(task.task_status >= 1 && task.task_status <= 4, "a found task has a status of 1 to 4");
  }
  return 0;
}
