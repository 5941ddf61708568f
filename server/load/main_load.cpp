// gesso-load: the load generator (docs/benchmarks.md). Exits 0 when the end check passed, 1 when it
// did not, 2 for bad options or a run that could not start.

#include "server/load/load_options.hpp"
#include "server/load/load_report.hpp"
#include "server/load/load_run.hpp"

#include <boost/json/serialize.hpp>

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  using namespace gesso::load;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << usage;
    return 0;
  }
  const auto parsed = parse_options(args);
  if (!parsed) {
    std::cerr << "gesso-load: " << parsed.error().reason << "\n" << usage;
    return 2;
  }
  const options& o = *parsed;
  try {
    const run_accounts accounts = accounts_for(o);
    const report r = run_load(o, accounts, std::cerr);
    print_summary(r, std::cout);
    if (!o.json_path.empty()) {
      std::ofstream(o.json_path) << boost::json::serialize(to_json(r)) << "\n";
    }
    if (!o.timeline_path.empty()) {
      std::ofstream out(o.timeline_path);
      write_timeline(r, out);
    }
    return r.check.passed() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "gesso-load: " << e.what() << "\n";
    return 2;
  }
}
