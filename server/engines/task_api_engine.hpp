#pragma once
// The task-api engine: forwards a task to an upstream that speaks Gesso's task API (docs/api.md: another
// Gesso, or the original service), polls it without holding a worker slot, and copies its outputs into the
// media store. A worker that crashes after submitting resumes polling the same upstream task on the next
// claim.

#include "server/engines/engine.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gesso::engines {

/// engine_settings of a task-api model (docs/engines.md).
struct task_api_settings {
  std::string base_url;  ///< the upstream's {base_url}, http(s)
  std::string api_key;   ///< Gesso's sk- key at the upstream
  std::string model_id;  ///< the upstream model; default: the same id
  int poll_interval_ms = 1000;
  int request_timeout_ms = 10000;
  std::size_t max_output_bytes = 256 * 1024 * 1024;
};

/// Parses and checks engine_settings; std::invalid_argument names the bad field.
task_api_settings parse_task_api_settings(std::string_view json_text, const model_spec& model);

/// What an upstream answered to a create, read from its status and envelope.
struct upstream_created {
  enum class kind { accepted, refused, unauthorized, unavailable } outcome = kind::unavailable;
  std::string task_id;
  std::string message;
};
upstream_created read_create_answer(unsigned status, std::string_view body);

/// What an upstream answered to a query.
struct upstream_task {
  enum class kind { found, not_found, unauthorized, unavailable } outcome = kind::unavailable;
  int task_status = 0;
  std::optional<std::string> image_url;
  std::optional<std::string> video_url;
  std::optional<std::string> audio_url;
  std::string message;
};
upstream_task read_query_answer(unsigned status, std::string_view body);

class task_api_engine final : public engine {
 public:
  task_api_engine(task_api_settings settings, const model_spec& model, fetch_policy policy)
      : settings_(std::move(settings)), type_(model.type), policy_(std::move(policy)) {}
  engine_outcome run(const engine_job& job, media_store& media) override;

 private:
  engine_outcome submit(const engine_job& job);
  engine_outcome poll(const engine_job& job, media_store& media);
  task_api_settings settings_;
  task_type type_;
  fetch_policy policy_;
};

}  // namespace gesso::engines
