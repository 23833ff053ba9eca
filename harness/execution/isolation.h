// Crash isolation for implementations from outside (NS::kernel of a loaded library): their
// cases run in a worker process, so that a segfault, an abort, an exit or a hang of the
// kernel is a failing verdict with its reason (harness/model/verdict.h, Fault) and kprop goes on.
//
// The worker is kprop itself, started fresh (posix_spawn of /proc/self/exe, never a fork
// of a process that ran libtorch's thread pools) as `kprop __worker --load LIB...
// --import MODULE... --refusal TEXT...`; under the Python entry it is that entry again
// (`python3 -m kprop __worker ...`, harness/api/entry.h), so a Python kernel's exception,
// a Triton compile error or a CUDA fault ends the worker's case, not kprop's run. It
// loads the same libraries and imports the same modules, then
// answers one case per line: the parent writes {"case": {...}} to its stdin, the worker
// runs evaluate() in-process and answers the verdict as one JSON line (verdict_json.h's
// verdict_to_json) on its stdout; its own stdout is moved to stderr first, so a kernel
// that prints cannot corrupt the answers. The parent waits with poll() up to the case's
// time limit; on end of file it reaps the worker (the signal or exit code is the fault),
// on timeout it kills it (SIGKILL); the next case starts a fresh worker. A case whose
// implementation raised a CUDA error (sticky: the context is poisoned for every later
// call) is answered with "retire": the worker exits and the next case gets a fresh one. The worker is in
// its own process group (a terminal's Ctrl-C reaches only kprop, which decides) and dies
// with its parent (PR_SET_PDEATHSIG).
//
// Off by default: tests and fuzz targets that call evaluate() run everything in-process.
// The CLI's session switches it on for check, hunt, shrink, replay and nightly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "generators/case.h"
#include "harness/execution/session.h"
#include "harness/model/verdict.h"

namespace kprop {

// The settings are the current session's (harness/execution/session.h): a worker started
// for one session is stopped when a case of another comes.

// Runs `c` in the worker (starting one if none runs). Validation is the caller's
// (evaluate() validates first). A CaseError or UsageError of the worker is rethrown as
// such; a worker that cannot start is a UsageError (kprop cannot test outside
// implementations here: exit 2). While an interrupt cuts the run short: skipped.
Verdict evaluate_isolated(const Case& c);

// Ends the worker, if one runs (it exits on end of input).
void stop_isolated_worker();

struct IsolationStats {
  int64_t cases = 0;             // cases answered or faulted in workers
  int64_t workers_started = 0;
  double start_seconds = 0;      // spent starting workers (spawn to ready)
};
IsolationStats isolation_stats();

// The worker's side: answers cases from `in_fd` on `out_fd` with `evaluate` (property.h's,
// handed down by the worker command: isolation sits below the properties) until end of
// input; 0.
int serve_isolated_cases(int in_fd, int out_fd, const std::function<Verdict(const Case&)>& evaluate);

// "SIGSEGV" for SIGSEGV; "signal 77" for one without a name.
std::string signal_name(int sig);

}  // namespace kprop
