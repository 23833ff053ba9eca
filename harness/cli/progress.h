// Progress of a long run on stderr: rewritten in place on a terminal, a line every few
// seconds otherwise (logs stay readable); silent for runs shorter than a second.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "harness/engine/runner.h"

namespace kprop {

class ProgressLine {
 public:
  explicit ProgressLine(int64_t total_cases);
  ~ProgressLine() { finish(); }
  void update(const Tally& t, const std::string& phase);
  void finish();

 private:
  int64_t total_;
  bool terminal_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kprop
