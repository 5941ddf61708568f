#pragma once
// The built-in engine: an honest procedural renderer, not a neural model. Images are PNG stills of a
// scene derived from the prompt, aspect ratio and input image URLs; videos animate the same scene as
// H.264 MP4 with an AAC soundtrack (also stored alone for audio_url). Optional simulated latency and
// failure rates make it the load-test and chaos engine.

#include "server/engines/engine.hpp"

#include <mutex>
#include <random>

namespace gesso::engines {

/// engine_settings of the builtin engine (docs/engines.md).
struct builtin_settings {
  int latency_ms = 0;       ///< wait before rendering, holding no thread
  double failure_rate = 0;  ///< probability an attempt fails permanently (refunded)
  double retry_rate = 0;    ///< probability an attempt fails transiently (retried)
  int long_side = 512;      ///< pixels along the longer side
  int fps = 12;             ///< video frame rate
};

/// Parses engine_settings JSON; std::invalid_argument names the bad field.
builtin_settings parse_builtin_settings(std::string_view json_text);

class builtin_engine final : public engine {
 public:
  explicit builtin_engine(builtin_settings settings, engine_environment environment = {})
      : settings_(settings), environment_(std::move(environment)) {}
  std::chrono::milliseconds latency(const engine_job&) const override;
  engine_outcome run(const engine_job& job, media_store& media) override;

 private:
  double chance();
  builtin_settings settings_;
  engine_environment environment_;
  std::mutex random_mutex_;
  std::mt19937_64 random_{std::random_device{}()};
};

}  // namespace gesso::engines
