#include "tests/support/pg_cluster.hpp"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gesso::testing {
namespace {

std::string find_bindir() {
  if (const char* dir = std::getenv("GESSO_PG_BINDIR")) {
    return dir;
  }
  std::string best;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql")) {
    if (std::filesystem::exists(entry.path() / "bin" / "initdb") && entry.path().string() > best) {
      best = entry.path().string();
    }
  }
  if (best.empty()) {
    throw std::runtime_error(
        "no PostgreSQL server found under /usr/lib/postgresql (apt-get install postgresql)");
  }
  return best + "/bin";
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

}  // namespace

std::string shell(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("cannot run: " + command);
  }
  std::string output;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
    output.append(chunk.data(), n);
  }
  const int status = pclose(pipe);
  if (status != 0) {
    throw std::runtime_error("command failed (" + std::to_string(WEXITSTATUS(status)) + "): " + command +
                             "\n" + output);
  }
  return output;
}

pg_cluster::pg_cluster() : bindir_(find_bindir()) {
  std::string pattern = (std::filesystem::temp_directory_path() / "gesso-pg-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  dir_ = pattern;
  if (geteuid() == 0) {
    // initdb refuses to run as root: the cluster belongs to the unprivileged postgres user.
    const passwd* owner = getpwnam("postgres");
    if (owner == nullptr || chown(dir_.c_str(), owner->pw_uid, owner->pw_gid) != 0) {
      throw std::runtime_error("cannot hand " + dir_ + " to the postgres user");
    }
  }
  run_as_owner(bindir_ + "/initdb -D " + dir_ +
               "/data -U gesso --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync");
  start();
}

pg_cluster::~pg_cluster() {
  try {
    run_as_owner(bindir_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop");
  } catch (const std::exception&) {
    // already stopped
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string pg_cluster::url() const {
  return "host=" + dir_ + " port=5432 user=gesso dbname=postgres";
}

std::string pg_cluster::psql(const std::string& sql, const std::string& database) const {
  return shell(bindir_ + "/psql -X -q -At -v ON_ERROR_STOP=1 -h " + dir_ + " -U gesso -d " + quote(database) +
               " -c " + quote(sql));
}

void pg_cluster::stop(const std::string& mode) {
  run_as_owner(bindir_ + "/pg_ctl -D " + dir_ + "/data -m " + mode + " -w stop");
}

void pg_cluster::start() {
  const std::string options = "-F -k " + dir_ + " -c listen_addresses='' -c max_connections=200";
  run_as_owner(bindir_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 30 -o " +
               quote(options) + " start");
}

std::string pg_cluster::run_as_owner(const std::string& command) const {
  return shell(geteuid() == 0 ? "runuser -u postgres -- " + command : command);
}

}  // namespace gesso::testing
