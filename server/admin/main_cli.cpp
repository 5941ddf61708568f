// gesso: the admin command line (docs/operations.md).

#include "server/admin/admin_cli.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return gesso::admin::run_admin_cli(args, std::cout, std::cerr);
}
