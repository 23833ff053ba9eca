// Replay: rebuild a case file's tensors from its seed (bit-identical, checked against the
// stored fingerprint), run its property for each implementation it names, and compare
// with what the file expects.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/storage/case_file.h"

namespace kprop {

struct ImplementationReplay {
  std::string impl;
  Verdict verdict;
  std::optional<Verdict::Status> expected;
  bool as_expected() const { return !expected || verdict.status == *expected; }
};

struct ReplayResult {
  CaseFile file;
  std::string fingerprint;  // of the rebuilt inputs
  bool fingerprint_matches = true;
  bool signature_matches = true;  // the case's own failure still has its signature
  std::vector<ImplementationReplay> runs;
  // Every expectation holds and the inputs are the recorded ones.
  bool as_recorded() const;
};

// All implementations the file expects something of; or only `impl` when given; or, with
// `builtin_only`, kprop's own among them. The last two need no outside implementation
// (NS::kernel) at hand: a case kept from a GPU kernel replays on a machine without it, its
// inputs checked by the fingerprint. CaseError (naming the file and field) when an
// implementation the replay needs is unknown, when nothing would run, or when the case
// fails but the file records no signature: replay never passes without checking.
ReplayResult replay(const CaseFile& f, const std::string& impl = "", bool builtin_only = false);

}  // namespace kprop
