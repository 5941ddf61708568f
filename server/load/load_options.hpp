#pragma once
// gesso-load's settings: one typed struct, parsed and checked in one place (docs/benchmarks.md lists
// every option).

#include "core/error.hpp"

#include <string>
#include <vector>

namespace gesso::load {

/// open: arrivals at a fixed rate whatever the answers take (latency from the intended send time, so a
/// slow server cannot hide its queueing); closed: a fixed number of clients, each sending when its
/// previous exchange is done.
enum class loop_mode { open, closed };

/// What one arrival (open) or one iteration (closed) does.
enum class scenario { create, query, journey };

struct model_share {
  std::string model_id;
  double weight = 1;
};

struct options {
  std::string host = "127.0.0.1";
  std::string port = "8080";
  loop_mode mode = loop_mode::open;
  scenario kind = scenario::journey;
  double rate = 50;        ///< open: arrivals a second
  int connections = 256;   ///< open: most connections at once; closed: the number of clients
  double duration_s = 10;  ///< how long arrivals (open) or iterations (closed) start
  int threads = 1;         ///< I/O threads
  std::vector<model_share> models{{"vendor4-2", 1}};
  std::string prompt = "gesso-load";
  int poll_interval_ms = 500;  ///< journey: between polls of one task
  bool download = true;        ///< journey: fetch the result once final
  double settle_s = 120;       ///< after the run: how long tasks may take to become final
  double timeout_s = 30;       ///< per request
  std::string keys_file;       ///< API keys, one a line (or accounts made with --accounts)
  int accounts = 0;            ///< accounts to create in the database (needs database_url)
  std::string database_url;    ///< for --accounts and the ledger check
  int query_tasks = 64;        ///< query: tasks created (and their keys kept) before the run
  std::string json_path;       ///< the whole report as JSON
  std::string timeline_path;   ///< one line a second, tab-separated, for plots
  bool quiet = false;          ///< no progress lines on standard error
};

/// Reads `--name value` pairs; a problem names the option and what was wrong with it.
checked<options> parse_options(const std::vector<std::string>& args);

/// The usage text printed by --help and after a bad option.
extern const char* const usage;

}  // namespace gesso::load
