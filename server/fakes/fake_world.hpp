#pragma once
// What the fake providers share: their jobs, the output files they serve (with the lifetimes real
// providers give them), the prompt markers that script a fault, and real media to return.
//
// Prompt markers (docs/fake-providers.md), anywhere in a prompt:
//   [fake:policy]      the provider's safety rejection, in its own shape
//   [fake:invalid]     the provider's input validation error
//   [fake:fail]        the job fails at the provider (a generation error)
//   [fake:429] / [fake:429x3]   the first (three) creates of this prompt answer 429 with Retry-After: 1
//   [fake:500] / [fake:500x2]   the same with 500
//   [fake:drop]        the first create of this prompt closes the connection without an answer
//   [fake:lost]        the first create of this prompt is made, but the connection closes before the
//                      answer (Kling: the retry must find it by external_task_id, not make a second)
//   [fake:malformed]   creates answer 200 with a body that is not JSON
//   [fake:slow=N]      the create (or, for a synchronous API, the whole call) takes N seconds
//   [fake:steps=N]     the job needs N polls before it completes (default 2)
//   [fake:expire]      output URLs stop working at once (410 Gone), as they do after 1–24 h
//   [fake:video] / [fake:image]   return the other media type (a mismatch Gesso must catch)
//   [fake:429x3@openai]  any create marker scoped to one provider (openai, replicate, fal, sdcpp, …)

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace gesso::fakes {

struct markers {
  bool policy = false;
  bool invalid = false;
  bool fail = false;
  int rate_limited = 0;  ///< how many creates answer 429
  int server_errors = 0;
  bool drop = false;
  bool lost = false;
  bool malformed = false;
  int slow_seconds = 0;
  int steps = 2;
  bool expire = false;
  bool wrong_type = false;
};

/// The markers of a prompt; one scoped with "@provider" ([fake:500x5@openai]) counts only for that
/// provider's creates.
markers read_markers(const std::string& prompt, const std::string& provider = "");

/// A generated output waiting to be fetched.
struct fake_file {
  std::string bytes;
  std::string content_type;
  std::chrono::steady_clock::time_point expires_at;
  std::string needs_header;  ///< "" or "lower-case-name:value", a header a download must carry
};

class fake_world {
 public:
  explicit fake_world(std::string base_url) : base_url_(std::move(base_url)) {}
  const std::string& base_url() const { return base_url_; }

  /// How many times a create with this prompt has been seen before this one (for the xN markers).
  int seen(const std::string& provider, const std::string& prompt);

  /// Stores an output; answers its URL (base_url + "/files/<token>").
  std::string publish(fake_file file);
  std::optional<fake_file> file(const std::string& token);

  /// A fresh id with a provider's prefix.
  std::string new_id(const std::string& prefix);

  /// Jobs a provider holds: counted from submission until the job is seen final (GET /stats).
  void job_started(const std::string& provider);
  void job_ended(const std::string& provider);
  void job_canceled(const std::string& provider);
  std::string stats_json();

  /// A 429 storm: every create of every provider answers 429 with Retry-After for the next `seconds`
  /// (POST /faults/storm?seconds=N), as a provider's rate limiter does under a burst.
  void start_storm(std::chrono::milliseconds length);
  bool storming();

  std::mutex mutex;  ///< guards the providers' own job maps

 private:
  std::string base_url_;
  std::mutex own_;
  std::map<std::string, int> seen_;
  std::map<std::string, fake_file> files_;
  struct job_counts {
    int now = 0;
    int most = 0;
    int canceled = 0;
  };
  std::map<std::string, job_counts> jobs_;
  std::uint64_t next_ = 0;
  std::chrono::steady_clock::time_point storm_until_{};
  int storm_refusals_ = 0;
};

/// A real PNG of `width` x `height` (a gradient keyed by the prompt).
std::string fake_png(int width, int height, const std::string& prompt);
/// A real H.264 MP4 (made once with ffmpeg, then served for every video).
std::string fake_mp4();

/// "WxH" into its numbers, or {0, 0}.
std::pair<int, int> parse_size(const std::string& text);
/// The pixel size for a ratio "W:H" with a long side of `long_side`.
std::pair<int, int> size_of_ratio(const std::string& ratio, int long_side);

}  // namespace gesso::fakes
