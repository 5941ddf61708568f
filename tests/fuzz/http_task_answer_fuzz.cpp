// Fuzzes how an http-task route reads a provider's answers (docs/engines.md#http-task), with the
// Runway-shaped configuration of deploy/http-task: the first two bytes choose the HTTP status, the rest
// is the body, read as a create, a poll and a result answer. Every step must be whole: a failure says
// why, a pending step names its job, a finished one holds an output.

#include "server/engines/providers/http_task_answers.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json.hpp>

using gesso::fuzz::require;
namespace json = boost::json;
namespace ht = gesso::engines::http_task;
using gesso::engines::provider_step;

namespace {

const ht::spec& runway_like() {
  static const ht::spec s = [] {
    gesso::engines::route_settings settings;
    settings.api_key = "k";
    settings.extra = json::parse(R"({
      "create": {"path": "/v1/image_to_video", "body": {"promptText": "{{prompt}}"}, "id": "/id"},
      "poll": {"path": "/v1/tasks/{{id}}", "status": "/status", "error": "/failure",
               "status_map": {"PENDING": "queued", "RUNNING": "running", "SUCCEEDED": "succeeded",
                              "FAILED": "failed", "CANCELLED": "canceled"},
               "capture": {"file_id": "/file_id"}},
      "result": {"path": "/v1/files/{{file_id}}"},
      "progress": {"pointer": "/progress", "scale": 100},
      "output": {"base64": "/output/0"},
      "errors": {"message": "/error/message", "code": "/code", "ok": [0], "retry_codes": [1002],
                 "policy_codes": [1026], "invalid_codes": [2013], "policy_patterns": ["SAFETY."]},
      "cost": "/usage"})")
                         .as_object();
    gesso::model_spec model;
    return ht::parse_spec(settings, model);
  }();
  return s;
}

void require_whole(const provider_step& step) {
  switch (step.what) {
    case provider_step::kind::failed:
    case provider_step::kind::retry:
      require(!step.message.empty(), "a failure or retry says why");
      break;
    case provider_step::kind::pending:
      require(!step.job.empty(), "a pending step names its job");
      require(step.progress >= -1 && step.progress <= 100, "progress is 0-100 or unknown");
      break;
    case provider_step::kind::done:
      require(step.outputs.size() == 1 && !(step.outputs[0].bytes.empty() && step.outputs[0].url.empty()),
              "a finished step holds an output");
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  gesso::engines::http_answer answer;
  answer.status = 100u + (static_cast<unsigned>(data[0]) << 8 | data[1]) % 500u;
  answer.body = std::string(gesso::fuzz::as_text(data + 2, size - 2));
  const ht::answer_reader read(runway_like(), "http-task routes[0]", std::chrono::seconds(5));
  for (const char* step : {"create", "poll", "result"}) {
    auto checked = read.check(answer, step);
    if (checked.stop) {
      require_whole(*checked.stop);
      require(checked.stop->what != provider_step::kind::done, "an error answer is never a finished job");
      continue;
    }
    require(answer.status >= 200 && answer.status < 300, "only a 2xx answer is read on");
    require_whole(read.job_of(checked.body, answer));
    if (auto state = read.state_of(checked.body, answer, "job-1")) {
      require_whole(*state);
    } else {
      ht::template_values values;
      if (auto missing = read.capture(checked.body, values)) {
        require_whole(*missing);
      }
      require_whole(read.output_of(checked.body, step));
    }
  }
  return 0;
}
