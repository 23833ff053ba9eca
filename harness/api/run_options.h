// What every run of kprop is given besides its own options, and the session it opens
// (harness/execution/session.h): the libraries and modules that register operators, where
// outside implementations and the oracle run, and how outside implementations are judged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/execution/session.h"

namespace kprop {

struct RunOptions {
  std::vector<std::string> libraries;  // operator libraries to load first (--load)
  std::vector<std::string> imports;    // then Python modules (--import; the Python entry only)
  std::string device = "cpu";          // where outside implementations run (--device)
  std::string oracle_device = "auto";  // where the float64 oracle runs (--oracle-device)
  // Errors of an outside implementation whose message holds one of these are refusals.
  std::vector<std::string> refusals;
  double case_timeout = kDefaultCaseTimeoutSeconds;  // per case of an outside implementation
  // Outside implementations in worker processes (harness/execution/isolation.h); false:
  // in this process (a crash ends kprop).
  bool isolate = false;
};

// Loads the libraries, imports the modules (a UsageError names what failed) and opens the
// run's session; it is current until the pointer is dropped.
std::unique_ptr<Session> open_session(const RunOptions& options);

}  // namespace kprop
