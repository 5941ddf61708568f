#pragma once
// Reading a provider's answers the way an http-task route describes them (docs/engines.md#http-task):
// HTTP and envelope errors into failure kinds, the job id, the poll state, progress, the output and its
// cost. An answer that does not match the settings fails as `internal`, naming the route's label, the
// pointer and the setting. No I/O: the adapter sends, this reads (and is fuzzed, tests/fuzz).

#include "server/engines/providers/http_task_spec.hpp"
#include "server/engines/providers/http_task_template.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gesso::engines::http_task {

class answer_reader {
 public:
  answer_reader(const spec& s, std::string label, std::chrono::milliseconds poll_interval)
      : spec_(&s), label_(std::move(label)), poll_interval_(poll_interval) {}

  /// An answer read as JSON, or the step that ends this exchange: a retry (a retryable status or
  /// envelope code), a failure of its kind (an error answer), `internal` (a success that is not JSON).
  struct checked_answer {
    std::optional<provider_step> stop;
    boost::json::value body;
  };
  checked_answer check(const http_answer& answer, std::string_view step) const;

  /// A create answer: pending on the job id it holds.
  provider_step job_of(const boost::json::value& body, const http_answer& answer) const;

  /// A poll answer: pending, failed or canceled as its status says; for a succeeded job, nothing (the
  /// caller reads the output, after the result request when there is one).
  std::optional<provider_step> state_of(const boost::json::value& body, const http_answer& answer,
                                        const std::string& job) const;

  /// Puts the poll answer's captured values into `values` (for the result request); a failure when one
  /// is missing.
  std::optional<provider_step> capture(const boost::json::value& body, template_values& values) const;

  /// The output (and cost) an answer holds, as settings.output says.
  provider_step output_of(const boost::json::value& body, std::string_view step) const;

  /// The route's poll_interval_ms, or longer when the provider's header asks (milliseconds).
  std::chrono::milliseconds next_poll(const http_answer& answer) const;

 private:
  std::pair<std::string, std::string> error_of(const boost::json::value* body) const;
  bool is_policy(const std::string& message, const std::string& code) const;
  provider_step http_failure(const http_answer& answer, const boost::json::value* body) const;
  std::optional<provider_step> envelope_failure(const boost::json::value& body) const;
  provider_step job_failed(const boost::json::value& body) const;
  provider_step mismatch(std::string_view step, const std::string& pointer, const std::string& setting,
                         const boost::json::value* found, std::string_view wanted) const;
  int progress_of(const boost::json::value& body) const;

  const spec* spec_;
  std::string label_;
  std::chrono::milliseconds poll_interval_;
};

}  // namespace gesso::engines::http_task
