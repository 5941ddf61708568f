#pragma once
// A throwaway PostgreSQL cluster for one test process: initdb into a temporary directory as an
// unprivileged user, listening only on a private Unix socket, fsync off; removed on destruction.

#include <string>

namespace gesso::testing {

class pg_cluster {
 public:
  pg_cluster();   ///< initdb and start; throws with the server log on failure
  ~pg_cluster();  ///< stop and delete everything
  pg_cluster(const pg_cluster&) = delete;
  pg_cluster& operator=(const pg_cluster&) = delete;

  /// libpq connection string for the cluster's database.
  std::string url() const;

  /// Runs SQL with psql (in `database`) and returns its unaligned, tuples-only output.
  std::string psql(const std::string& sql, const std::string& database = "postgres") const;

  /// Stops the server ("fast" or "immediate"), or starts it again on the same socket.
  void stop(const std::string& mode = "fast");
  void start();

 private:
  std::string run_as_owner(const std::string& command) const;
  std::string dir_;
  std::string bindir_;
};

/// Runs a shell command; throws with its output when it exits non-zero. Returns standard output.
std::string shell(const std::string& command);

}  // namespace gesso::testing
