#pragma once
// What every provider adapter shares (docs/engines.md#providers): the route settings every HTTP engine
// reads, what an adapter is given (the prompt, the fetched input images) and what it reports (one step
// of a remote task), and the kinds of failure a task can end with.
//
// An adapter speaks one provider's API and nothing else: it never fetches inputs, never stores outputs
// and never decides on failover; provider_engine (remote_engine.hpp) does those, the same way for all.

#include "core/catalog.hpp"
#include "server/engines/engine.hpp"
#include "server/engines/image_decoder.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gesso::engines {

/// Why a task failed, for the client (docs/api.md): a kind and a message with no secrets.
enum class failure_kind { invalid_input, content_policy, provider_unavailable, deadline, canceled, internal };
std::string_view failure_kind_name(failure_kind kind);

/// The settings every HTTP engine reads, as a catalog route gives them (docs/engines.md#route-settings).
struct route_settings {
  std::string engine;
  std::string base_url;  ///< no trailing slash; defaults to the provider's public URL
  std::string api_key_env;
  std::string api_key;  ///< read from api_key_env when the worker starts; never logged
  std::string model;    ///< the provider's model name
  std::chrono::milliseconds request_timeout{60'000};
  std::chrono::milliseconds poll_interval{2'000};
  std::size_t max_output_bytes = 256 * 1024 * 1024;
  int max_concurrency = 0;    ///< tasks in flight on this route across all workers; 0: no cap
  std::string label;          ///< "routes[1]", for messages
  int priority = 1;           ///< lower first
  int weight = 1;             ///< among routes of one priority
  boost::json::object extra;  ///< the engine's own settings, checked by its adapter
};

/// An input image, fetched through the SSRF-safe fetcher and sniffed.
struct provider_input {
  std::string bytes;
  image_format format = image_format::png;
  std::string url;  ///< where it came from (an http(s) URL, or a data: URL)
  std::string_view mime() const;
  std::string data_url() const;  ///< data:<mime>;base64,…
};

/// What an adapter is asked to run.
struct provider_request {
  std::string task_id;
  int attempt = 1;              ///< above 1: an earlier attempt may have submitted, its answer lost
  std::size_t image_count = 0;  ///< the task's input images (fetched into `images` on submission only)
  task_type type = task_type::image;
  std::string prompt;
  std::string aspect_ratio;  ///< "W:H", one the model allows
  int duration_seconds = 0;  ///< videos
  std::vector<provider_input> images;
};

/// An output as the provider gave it: bytes in hand (base64 decoded) or a URL to copy from.
struct provider_output {
  std::string bytes;
  std::string url;
  bool with_auth = false;  ///< the download needs the route's auth headers (Veo, Replicate, OpenAI videos)
};

/// One step of a remote task, as the adapter reports it.
struct provider_step {
  enum class kind {
    done,     ///< outputs ready
    pending,  ///< submitted or still running: poll `job` again after `delay`
    retry,    ///< a transient failure (429, 5xx, no answer): the same call again after `delay`
    failed,   ///< a permanent failure of this task
  } what = kind::failed;
  std::vector<provider_output> outputs;
  std::string job;  ///< pending: what poll() needs (an id, or the URLs a provider returned)
  std::chrono::milliseconds delay{0};
  failure_kind failure = failure_kind::internal;
  std::string message;        ///< failed and retry: a sentence, no secrets
  int progress = -1;          ///< 0–100 when the provider reports it
  std::string cost;           ///< done: what the provider says the job cost, as JSON (usage, units), or ""
  bool rate_limited = false;  ///< retry: the provider answered 429 (alive, pacing us), not a failure

  static provider_step done(std::vector<provider_output> outputs);
  static provider_step pending(std::string job, std::chrono::milliseconds delay, int progress = -1);
  static provider_step retry(std::string message, std::chrono::milliseconds delay);
  static provider_step failed(failure_kind kind, std::string message);
};

/// One provider's API. Blocking; called on an engine thread, one call per attempt step.
class provider_adapter {
 public:
  virtual ~provider_adapter() = default;
  /// Submits the task; a synchronous API answers done (or failed) here.
  virtual provider_step submit(const provider_request& request) = 0;
  /// Polls a submitted task.
  virtual provider_step poll(const provider_request& request, const std::string& job) = 0;
  /// Cancels a submitted task where the provider can; best effort.
  virtual void cancel(const std::string& /*job*/) {}
  /// How the adapter wants an input image: false when it takes only http(s) URLs it fetches itself.
  virtual bool needs_input_bytes() const { return true; }
};

}  // namespace gesso::engines
