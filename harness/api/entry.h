// The ways into kprop. The `kprop` executable (harness/cli/main.cpp) and the Python entry
// (python/module.cpp: `python3 -m kprop`, `import kprop`) run the same engine; an entry
// differs only in how it starts itself again (as an isolation worker) and in whether it
// can import Python modules (--import).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kprop {

struct Entry {
  // How the commands name this entry in what they write down (a case file's found_by).
  std::string name = "kprop";
  // Starts kprop again, before `__worker ...`: empty for this process's own executable.
  std::vector<std::string> command;
  // Imports a module named by --import; throws UsageError naming what went wrong. Null:
  // this entry cannot import modules (the kprop executable), and --import is bad usage.
  std::function<void(const std::string&)> import_module;
  // Receives each command's result as JSON text (what --json prints), whatever it prints.
  // Null: nobody asks.
  std::function<void(const std::string&)> result;
};
// Process-wide: set once by the entry before it runs anything.
void set_entry(Entry entry);
const Entry& entry();

}  // namespace kprop
