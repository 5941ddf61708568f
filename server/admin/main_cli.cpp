// gesso: the admin command line (docs/operations.md).

#include "server/admin/admin_cli.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "catalog") {
    // The engines live in gesso-worker (this program links none): hand `catalog check|try` to it.
    std::error_code ec;
    const auto worker = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "gesso-worker";
    std::vector<char*> worker_args{const_cast<char*>("gesso-worker")};
    for (int i = 1; i < argc; ++i) {
      worker_args.push_back(argv[i]);
    }
    worker_args.push_back(nullptr);
    execv(worker.c_str(), worker_args.data());
    std::cerr << "gesso catalog: cannot run " << worker.string()
              << " (gesso catalog runs gesso-worker, which holds the engines: install both together)\n";
    return 2;
  }
  return gesso::admin::run_admin_cli(args, std::cout, std::cerr);
}
