// The ways into kprop's command line. The `kprop` executable (harness/cli/main.cpp) and the
// Python entry (python/module.cpp: `python3 -m kprop`) run the same parser and the same
// commands; an entry differs only in how it starts itself again (as an isolation worker)
// and in whether it can import Python modules (--import).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kprop {

// Runs one kprop command line (args[0] is the program's name, as in argv) and returns its
// exit code: 0 pass, 1 a property failed, 2 bad usage or a bad case.
int run_cli(const std::vector<std::string>& args);

struct Entry {
  // How the commands name this entry in what they write down (a case file's found_by).
  std::string name = "kprop";
  // Starts kprop again, before `__worker ...`: empty for this process's own executable.
  std::vector<std::string> command;
  // Imports a module named by --import; throws UsageError naming what went wrong. Null:
  // this entry cannot import modules (the kprop executable), and --import is bad usage.
  std::function<void(const std::string&)> import_module;
  // Receives each command's result as JSON text (what --json prints), whatever it prints:
  // the Python API's result objects (python/kprop). Null: nobody asks.
  std::function<void(const std::string&)> result;
};
// Process-wide: set once by the entry before run_cli.
void set_entry(Entry entry);
const Entry& entry();

}  // namespace kprop
