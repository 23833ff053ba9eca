// The kprop executable: the command line of harness/cli/cli.cpp, nothing else.
#include <string>
#include <vector>

#include "harness/cli/entry.h"

int main(int argc, char** argv) { return kprop::run_cli(std::vector<std::string>(argv, argv + argc)); }
