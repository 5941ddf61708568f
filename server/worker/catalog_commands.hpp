#pragma once
// The catalog's offline checks and one-task trial, run by gesso-worker (which holds the engines) and
// reached as `gesso catalog …` (docs/operations.md#catalog-check-and-try):
//
//   gesso-worker catalog check FILE
//       the checks a worker makes when it starts, without a database: every model's engine and routes
//       built, every problem one line naming the model, the route and the field
//   gesso-worker catalog try MODEL --prompt TEXT [--catalog FILE] [--route N] [--image URL]...
//                            [--aspect-ratio W:H] [--out DIR]
//       one real task through one route, every exchange printed with secrets redacted, the output
//       written under DIR

#include <ostream>
#include <string>
#include <vector>

namespace gesso::worker {

/// Runs `catalog check|try …` (args without the program name); answers the exit status: 0 fine,
/// 1 the task failed, 2 a refused catalog or bad usage.
int run_catalog_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gesso::worker
