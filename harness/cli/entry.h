// kprop's command line as a function (the entries: harness/api/entry.h). The `kprop` executable (harness/cli/main.cpp) and the
// Python entry (python/module.cpp: `python3 -m kprop`) run the same parser and the same
// commands; an entry differs only in how it starts itself again (as an isolation worker)
// and in whether it can import Python modules (--import).
#pragma once

#include <string>
#include <vector>

#include "harness/api/entry.h"

namespace kprop {

// Runs one kprop command line (args[0] is the program's name, as in argv) and returns its
// exit code: 0 pass, 1 a property failed, 2 bad usage or a bad case.
int run_cli(const std::vector<std::string>& args);

}  // namespace kprop
