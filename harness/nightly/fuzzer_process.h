// One libFuzzer target running as a child process in fork mode: a crash, timeout or
// out-of-memory of an input ends one of its jobs, not the target, and leaves an artifact
// file (crash-*, timeout-*, oom-*) for kprop to replay. Its standard error goes to a log,
// whose last statistics line says how fast and how far it got.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace kprop {

struct FuzzerLaunch {
  std::string binary;
  std::vector<std::string> arguments;        // libFuzzer flags and corpus folders
  std::map<std::string, std::string> environment;  // added to this process's
  std::string log;                           // standard output and error go here (appended)
};

// What the last statistics line of a libFuzzer log says (zero when none yet).
struct FuzzerStats {
  int64_t executions = 0;   // "#N"
  int64_t coverage = 0;     // "cov:" edges
  int64_t features = 0;     // "ft:"
  int64_t corpus = 0;       // "corp:" inputs
  int64_t exec_per_second = 0;
  int64_t crashes = 0, timeouts = 0, ooms = 0;  // fork mode's "oom/timeout/crash:"
  int64_t seconds = 0;      // fork mode's "time:"
};
FuzzerStats parse_fuzzer_log(const std::string& text);

class FuzzerProcess {
 public:
  explicit FuzzerProcess(FuzzerLaunch launch);  // starts it; throws FileError
  ~FuzzerProcess();                             // stops it if running
  FuzzerProcess(const FuzzerProcess&) = delete;
  FuzzerProcess& operator=(const FuzzerProcess&) = delete;

  bool running();  // reaps it when it has ended
  int exit_code() const { return exit_code_; }
  // SIGINT to its process group (libFuzzer then stops its jobs and prints its final
  // statistics), SIGKILL after `grace_seconds`.
  void stop(double grace_seconds = 5);
  const FuzzerLaunch& launch() const { return launch_; }

 private:
  FuzzerLaunch launch_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

}  // namespace kprop
