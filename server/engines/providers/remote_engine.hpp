#pragma once
// The engine behind every provider adapter: picks a route (priority, then weight), fails over to the
// next route when one is unavailable or its circuit is open, fetches input images through the SSRF-safe
// fetcher, and copies outputs into the media store (provider URLs expire in 1–24 h), sniffing their type
// and size. A submitted task holds no worker slot: the provider's job is remembered on the task and
// polled by later claims.

#include "server/engines/engine.hpp"
#include "server/engines/providers/provider.hpp"
#include "server/engines/providers/provider_http.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace gesso::engines {

/// One route's health, shared by the worker's engine threads: the circuit opens after `failures_to_open`
/// consecutive unavailable answers and lets one probe through after `open_for` (half-open); a success
/// closes it. A 429 is not a failure — the provider is up and pacing us: the route is paced (skipped
/// without a request) until its Retry-After has passed.
class circuit {
 public:
  static constexpr int failures_to_open = 5;
  static constexpr std::chrono::seconds open_for{30};
  enum class state { closed, open, half_open };
  using time_point = std::chrono::steady_clock::time_point;

  bool allows(time_point now);  ///< may a request go now?
  void succeeded();
  void failed(time_point now);
  /// A 429 asking for `retry_after`: counts as an answer (closes a half-open probe), paces the route.
  void rate_limited(time_point now, std::chrono::milliseconds retry_after);
  /// How long the route is still paced by a 429; zero when it is not.
  std::chrono::milliseconds paced_for(time_point now) const;
  /// How long until an open circuit lets a probe through; zero when it is not open.
  std::chrono::milliseconds opens_in(time_point now) const;
  state current(time_point now) const;

 private:
  mutable std::mutex mutex_;
  int consecutive_failures_ = 0;
  time_point opened_at_{};
  time_point paced_until_{};
  bool probing_ = false;
};

/// A route ready to run: its settings, its adapter and its health.
struct route {
  route_settings settings;
  std::unique_ptr<provider_client> client;
  std::unique_ptr<provider_adapter> adapter;
  circuit health;
};

class provider_engine : public engine {
 public:
  provider_engine(const model_spec& model, std::vector<std::unique_ptr<route>> routes,
                  const engine_environment& environment);
  engine_outcome run(const engine_job& job, media_store& media) override;
  std::vector<route_health> routes_health() const override;
  void cancel(const std::string& provider_job) override;

  const std::vector<std::unique_ptr<route>>& routes() const { return routes_; }

 private:
  engine_outcome submit(const engine_job& job, media_store& media);
  /// Fetches the job's input images into `request`; the failure when one cannot be had.
  std::optional<engine_outcome> fetch_inputs(const engine_job& job, provider_request& request) const;
  engine_outcome poll(const engine_job& job, media_store& media);
  engine_outcome finish(const engine_job& job, std::size_t route_index, const std::string& job_id,
                        provider_step step, media_store& media);
  std::vector<std::size_t> route_order();
  /// Runs one adapter call and tells observe_route how it went.
  provider_step observed(std::size_t index, const std::function<provider_step()>& call);
  provider_request request_for(const engine_job& job) const;

  std::string model_id_;
  task_type type_;
  int duration_seconds_;
  std::function<bool(const std::string&, int, const std::string&)> take_route_slot_;
  std::function<void(const route_call&)> observe_route_;
  std::vector<std::unique_ptr<route>> routes_;
  fetch_policy fetching_;
  std::mutex random_mutex_;
  std::mt19937_64 random_{std::random_device{}()};
};

/// The job text remembered on a task while a provider holds it — which route, and the adapter's job —
/// and kept when it ends, with the upstream cost where the provider reports one (`cost`, JSON).
std::string provider_job_text(std::size_t route_index, const route_settings& settings, const std::string& job,
                              const std::string& cost = "");
struct remembered_job {
  std::size_t route_index = 0;
  std::string job;
};
std::optional<remembered_job> read_provider_job(std::string_view text);

}  // namespace gesso::engines
