#include "server/load/load_report.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <iomanip>

namespace gesso::load {
namespace json = boost::json;

const char* name_of(request_kind k) {
  switch (k) {
    case request_kind::create:
      return "create";
    case request_kind::query:
      return "query";
    case request_kind::poll:
      return "poll";
    case request_kind::download:
      return "download";
  }
  return "?";
}

void recorder::arrival() {
  std::lock_guard lock(mutex_);
  ++arrivals_;
  ++current_.arrivals;
}

void recorder::answered(request_kind kind, int status, const std::string& failure, std::uint64_t micros,
                        bool retried) {
  const auto k = static_cast<std::size_t>(kind);
  const bool ok = status >= 200 && status < 300;
  std::lock_guard lock(mutex_);
  kind_totals& t = kinds_[k];
  t.ok += ok ? 1 : 0;
  ++t.outcomes[status != 0 ? std::to_string(status) : failure];
  t.retried += retried ? 1 : 0;
  t.latency.record(micros);
  ++current_.done[k];
  current_.failed[k] += ok ? 0 : 1;
  this_second_[k].record(micros);
}

void recorder::task_final(std::uint64_t micros) {
  std::lock_guard lock(mutex_);
  task_latency_.record(micros);
}

void recorder::send_lag(std::uint64_t micros) {
  std::lock_guard lock(mutex_);
  max_send_lag_ = std::max(max_send_lag_, micros);
}

timeline_second recorder::tick(int second) {
  std::lock_guard lock(mutex_);
  current_.second = second;
  for (std::size_t k = 0; k < request_kinds; ++k) {
    const latency_histogram& h = this_second_[k];
    current_.micros[k] = {h.value_at(50), h.value_at(90), h.value_at(99), h.max()};
    this_second_[k].reset();
  }
  timeline_.push_back(current_);
  current_ = timeline_second{};
  return timeline_.back();
}

void recorder::finish(report& r) {
  std::lock_guard lock(mutex_);
  r.arrivals = arrivals_;
  r.max_send_lag_us = max_send_lag_;
  r.kinds = std::move(kinds_);
  r.task_latency = std::move(task_latency_);
  r.timeline = std::move(timeline_);
}

namespace {

constexpr std::array<double, 5> reported_percentiles{50, 90, 99, 99.9, 100};

double ms(std::uint64_t micros) {
  return static_cast<double>(micros) / 1000.0;
}

json::object latency_json(const latency_histogram& h) {
  json::object o{{"count", h.count()}, {"mean_ms", h.mean() / 1000.0}};
  o["p50_ms"] = ms(h.value_at(50));
  o["p90_ms"] = ms(h.value_at(90));
  o["p99_ms"] = ms(h.value_at(99));
  o["p99_9_ms"] = ms(h.value_at(99.9));
  o["max_ms"] = ms(h.max());
  return o;
}

const char* mode_name(loop_mode m) {
  return m == loop_mode::open ? "open" : "closed";
}

const char* scenario_name(scenario s) {
  switch (s) {
    case scenario::create:
      return "create";
    case scenario::query:
      return "query";
    case scenario::journey:
      return "journey";
  }
  return "?";
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

// Creates and queries happen while arrivals do; polls and downloads go on until the journeys end.
double seconds_of(const report& r, std::size_t kind) {
  const auto k = static_cast<request_kind>(kind);
  return k == request_kind::create || k == request_kind::query ? r.arrival_window_s : r.elapsed_s;
}

}  // namespace

json::object to_json(const report& r) {
  const options& o = r.settings;
  json::array models;
  for (const model_share& m : o.models) {
    models.push_back(json::object{{"model_id", m.model_id}, {"weight", m.weight}});
  }
  json::object settings{{"target", "http://" + o.host + ":" + o.port},
                        {"mode", mode_name(o.mode)},
                        {"scenario", scenario_name(o.kind)},
                        {"rate", o.rate},
                        {"connections", o.connections},
                        {"duration_s", o.duration_s},
                        {"threads", o.threads},
                        {"models", models},
                        {"poll_interval_ms", o.poll_interval_ms},
                        {"download", o.download}};
  json::object requests;
  for (std::size_t k = 0; k < request_kinds; ++k) {
    const kind_totals& t = r.kinds[k];
    if (t.latency.count() == 0) {
      continue;
    }
    json::object outcomes;
    for (const auto& [name, count] : t.outcomes) {
      outcomes[name] = count;
    }
    json::object entry = latency_json(t.latency);
    entry["ok"] = t.ok;
    entry["per_second"] = static_cast<double>(t.latency.count()) / seconds_of(r, k);
    entry["outcomes"] = std::move(outcomes);
    entry["retried"] = t.retried;
    requests[name_of(static_cast<request_kind>(k))] = std::move(entry);
  }
  json::array timeline;
  for (const timeline_second& s : r.timeline) {
    json::object row{{"second", s.second}, {"arrivals", s.arrivals}};
    for (std::size_t k = 0; k < request_kinds; ++k) {
      if (s.done[k] == 0) {
        continue;
      }
      row[name_of(static_cast<request_kind>(k))] = json::object{{"done", s.done[k]},
                                                                {"failed", s.failed[k]},
                                                                {"p50_ms", ms(s.micros[k][0])},
                                                                {"p90_ms", ms(s.micros[k][1])},
                                                                {"p99_ms", ms(s.micros[k][2])},
                                                                {"max_ms", ms(s.micros[k][3])}};
    }
    timeline.push_back(std::move(row));
  }
  const end_check& c = r.check;
  json::array violations;
  for (const std::string& v : c.violations) {
    violations.push_back(json::string(v));
  }
  json::object check{{"passed", c.passed()},
                     {"created", c.created},
                     {"unanswered_creates", c.unanswered},
                     {"succeeded", c.succeeded},
                     {"failed", c.failed},
                     {"not_final", c.not_final},
                     {"finality_checked", c.finality_checked},
                     {"credits_charged", c.credits_charged},
                     {"credits_refunded", c.credits_refunded},
                     {"ledger_checked", c.ledger_checked},
                     {"violations", std::move(violations)}};
  if (c.ledger_checked) {
    check["ledger_charged"] = c.ledger_charged;
    check["ledger_refunded"] = c.ledger_refunded;
  }
  return json::object{{"settings", std::move(settings)},
                      {"elapsed_s", r.elapsed_s},
                      {"arrivals", r.arrivals},
                      {"arrivals_per_second", static_cast<double>(r.arrivals) / r.arrival_window_s},
                      {"max_send_lag_ms", ms(r.max_send_lag_us)},
                      {"connections_opened", r.connections_opened},
                      {"requests", std::move(requests)},
                      {"task_end_to_end", latency_json(r.task_latency)},
                      {"timeline", std::move(timeline)},
                      {"end_check", std::move(check)}};
}

void print_summary(const report& r, std::ostream& out) {
  const options& o = r.settings;
  out << "gesso-load: " << mode_name(o.mode) << " loop, " << scenario_name(o.kind) << ", ";
  if (o.mode == loop_mode::open) {
    out << fixed(o.rate, 1) << "/s offered";
  } else {
    out << o.connections << " clients";
  }
  out << " for " << fixed(o.duration_s, 1) << " s against http://" << o.host << ":" << o.port << "\n";
  out << "arrivals " << r.arrivals << " (" << fixed(static_cast<double>(r.arrivals) / r.arrival_window_s, 1)
      << "/s), elapsed " << fixed(r.elapsed_s, 2) << " s, connections opened " << r.connections_opened;
  if (o.mode == loop_mode::open) {
    out << ", furthest behind schedule " << fixed(ms(r.max_send_lag_us), 2) << " ms";
  }
  out << "\n\n";
  out << std::left << std::setw(10) << "request" << std::right << std::setw(9) << "count" << std::setw(9)
      << "ok" << std::setw(10) << "per s";
  for (const char* p : {"p50", "p90", "p99", "p99.9", "max"}) {
    out << std::setw(10) << p;
  }
  out << "  (ms)\n";
  auto row = [&out](const std::string& name, const latency_histogram& h, std::uint64_t ok, double seconds) {
    out << std::left << std::setw(10) << name << std::right << std::setw(9) << h.count() << std::setw(9) << ok
        << std::setw(10) << fixed(static_cast<double>(h.count()) / seconds, 1);
    for (const double p : reported_percentiles) {
      out << std::setw(10) << fixed(ms(h.value_at(p)), 2);
    }
    out << "\n";
  };
  for (std::size_t k = 0; k < request_kinds; ++k) {
    if (r.kinds[k].latency.count() > 0) {
      row(name_of(static_cast<request_kind>(k)), r.kinds[k].latency, r.kinds[k].ok, seconds_of(r, k));
    }
  }
  if (r.task_latency.count() > 0) {
    row("task e2e", r.task_latency, r.task_latency.count(), r.elapsed_s);
  }
  out << "\n";
  for (std::size_t k = 0; k < request_kinds; ++k) {
    const kind_totals& t = r.kinds[k];
    if (t.latency.count() == 0) {
      continue;
    }
    out << name_of(static_cast<request_kind>(k)) << " outcomes:";
    for (const auto& [name, count] : t.outcomes) {
      out << " " << name << " x" << count;
    }
    if (t.retried > 0) {  // idempotent requests sent again after a reused connection closed unanswered
      out << " (" << t.retried << " retried once)";
    }
    out << "\n";
  }
  const end_check& c = r.check;
  out << "\nend check: " << c.created << " tasks created (" << c.unanswered << " creates unanswered), "
      << c.succeeded << " succeeded, " << c.failed << " failed, " << c.not_final << " not final"
      << (c.finality_checked ? "" : " (not waited for: --settle 0)") << "\n";
  out << "credits: charged " << c.credits_charged << ", refunded " << c.credits_refunded << ", paid "
      << c.credits_charged - c.credits_refunded;
  if (c.ledger_checked) {
    out << "; the ledger says charged " << c.ledger_charged << ", refunded " << c.ledger_refunded;
  } else {
    out << "; ledger not checked (no --database-url)";
  }
  out << "\n";
  for (const std::string& v : c.violations) {
    out << "VIOLATION: " << v << "\n";
  }
  out << (c.passed() ? "end check passed" : "END CHECK FAILED") << "\n";
}

void write_timeline(const report& r, std::ostream& out) {
  out << "# second\tarrivals";
  for (std::size_t k = 0; k < request_kinds; ++k) {
    const std::string n = name_of(static_cast<request_kind>(k));
    out << "\t" << n << "_done\t" << n << "_failed\t" << n << "_p50_ms\t" << n << "_p90_ms\t" << n
        << "_p99_ms\t" << n << "_max_ms";
  }
  out << "\n";
  for (const timeline_second& s : r.timeline) {
    out << s.second << "\t" << s.arrivals;
    for (std::size_t k = 0; k < request_kinds; ++k) {
      out << "\t" << s.done[k] << "\t" << s.failed[k];
      for (const std::uint64_t v : s.micros[k]) {
        out << "\t" << fixed(ms(v), 3);
      }
    }
    out << "\n";
  }
}

void print_progress(std::ostream& out, const timeline_second& t) {
  out << "[gesso-load] " << t.second + 1 << " s: " << t.arrivals << " arrivals";
  for (std::size_t k = 0; k < request_kinds; ++k) {
    if (t.done[k] > 0) {
      out << ", " << name_of(static_cast<request_kind>(k)) << " " << t.done[k] << " (" << t.failed[k]
          << " failed, p99 " << static_cast<double>(t.micros[k][2]) / 1000.0 << " ms)";
    }
  }
  out << std::endl;
}

}  // namespace gesso::load
