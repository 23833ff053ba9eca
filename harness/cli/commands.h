// The kprop subcommands: each adds its options to the CLI and runs.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kprop {

struct CheckOptions {
  std::string kernel;
  std::string impl = "tiled";
  int64_t cases = 1000;
  uint64_t seed = 0;
  std::vector<std::string> properties;
  std::vector<std::string> dtypes;
  int64_t max_segments = 8;
  int64_t max_length = 64;
  bool no_shrink = false;
  double shrink_seconds = 60;
  std::vector<std::string> libraries;
};

void add_check_command(CLI::App& app, CheckOptions& options);
int run_check(const CheckOptions& options);

// Loads an operator library; a failure is a usage error (exit 2).
void load_operator_library_or_usage_error(const std::string& path);

}  // namespace kprop
