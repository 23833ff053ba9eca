// SIGINT and SIGTERM as a request to stop soon, not a kill: a long run (check, hunt,
// shrink, nightly) installs the handlers, polls interrupted() where it can stop, prints
// what it has and exits with interrupted_exit_code(). A second signal kills at once, as
// the default action would (a temporary file it leaves is removed by the next run:
// harness/storage/atomic_file.h).
#pragma once

#include <stdexcept>

namespace kprop {

// Installs the handlers for SIGINT and SIGTERM (idempotent).
void install_interrupt_handlers();
bool interrupted();
int interrupt_signal();          // SIGINT, SIGTERM, or 0 when none came
const char* interrupt_name();    // "SIGINT", "SIGTERM", or ""
int interrupted_exit_code();     // 128 + the signal: 130 for SIGINT, 143 for SIGTERM
void clear_interrupt();          // a new command line (harness/cli/cli.cpp), tests

// Whether an interrupt cuts evaluation short is the session's (harness/execution/session.h).

// Thrown (from a progress callback) to unwind a search that was interrupted.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace kprop
