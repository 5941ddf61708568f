#pragma once
// What a gesso-load run measured: latency histograms and outcomes per request kind, task end-to-end
// latency, a per-second timeline and the end check; rendered as JSON, as a readable summary and as a
// tab-separated timeline for plots.

#include "core/latency_histogram.hpp"
#include "server/load/load_options.hpp"

#include <boost/json/object.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace gesso::load {

enum class request_kind { create, query, poll, download };
constexpr std::size_t request_kinds = 4;
const char* name_of(request_kind k);

/// The outcomes and latencies of one kind of request.
struct kind_totals {
  std::uint64_t ok = 0;                           ///< 2xx answers
  std::map<std::string, std::uint64_t> outcomes;  ///< "200", "503", "timeout", … → count
  std::uint64_t retried = 0;  ///< answered (or failed) on a second try: see http_answer::retried
  latency_histogram latency;  ///< microseconds, every answer and failure
};

/// One second of the run.
struct timeline_second {
  int second = 0;
  std::uint64_t arrivals = 0;
  std::array<std::uint64_t, request_kinds> done{};
  std::array<std::uint64_t, request_kinds> failed{};                 ///< not 2xx
  std::array<std::array<std::uint64_t, 4>, request_kinds> micros{};  ///< p50, p90, p99, max
};

/// The end check: every task final, credits paid as the ledger says.
struct end_check {
  std::uint64_t created = 0;     ///< creates answered 200 with a task id
  std::uint64_t unanswered = 0;  ///< creates with no answer (timeouts, closed connections)
  std::uint64_t succeeded = 0;
  std::uint64_t failed = 0;
  std::uint64_t not_final = 0;        ///< still queued or running when --settle ran out
  bool finality_checked = true;       ///< false with --settle 0: the run does not wait for workers
  std::int64_t credits_charged = 0;   ///< what the create answers said
  std::int64_t credits_refunded = 0;  ///< the credits of the tasks seen failed
  bool ledger_checked = false;
  std::int64_t ledger_charged = 0;
  std::int64_t ledger_refunded = 0;
  std::vector<std::string> violations;  ///< each a sentence; empty when everything holds
  bool passed() const { return violations.empty() && (not_final == 0 || !finality_checked); }
};

struct report {
  options settings;
  double elapsed_s = 0;         ///< from the first arrival to the last answer
  double arrival_window_s = 0;  ///< how long arrivals were started for
  std::uint64_t arrivals = 0;
  std::uint64_t max_send_lag_us = 0;  ///< open loop: how far behind its schedule the generator fell
  int connections_opened = 0;
  std::array<kind_totals, request_kinds> kinds;
  latency_histogram task_latency;  ///< create sent → final seen (journeys), microseconds
  std::vector<timeline_second> timeline;
  end_check check;
};

/// Collects measurements from every thread; one mutex, held for a few counter updates.
class recorder {
 public:
  void arrival();
  void answered(request_kind kind, int status, const std::string& failure, std::uint64_t micros,
                bool retried = false);
  void task_final(std::uint64_t micros);
  void send_lag(std::uint64_t micros);
  /// Closes second `second` of the timeline, starts the next, and returns the closed one.
  timeline_second tick(int second);
  /// Moves everything into `r`.
  void finish(report& r);

 private:
  std::mutex mutex_;
  std::uint64_t arrivals_ = 0;
  std::uint64_t max_send_lag_ = 0;
  std::array<kind_totals, request_kinds> kinds_;
  latency_histogram task_latency_;
  timeline_second current_;
  std::array<latency_histogram, request_kinds> this_second_;
  std::vector<timeline_second> timeline_;
};

boost::json::object to_json(const report& r);
void print_summary(const report& r, std::ostream& out);

/// One progress line for a second of the run.
void print_progress(std::ostream& out, const timeline_second& t);
void write_timeline(const report& r, std::ostream& out);

}  // namespace gesso::load
