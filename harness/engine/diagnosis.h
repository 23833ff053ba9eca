// Diagnosing one failing case: localized to the call that is wrong, shrunk for each symptom
// to a 1-minimal case that still shows it (generators/shrink.h), and named by the minimal
// case's identity (harness/model/identity.h). A search (harness/engine/runner.h) and a triage
// (harness/engine/triage.h) both call it; it calls neither.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/model/kernel.h"
#include "harness/model/verdict.h"

namespace kprop {

struct Failure;
// Diagnoses already made, by case and symptom (see diagnose()).
using DiagnosisMemo = std::map<std::string, Failure>;

struct ShrinkResult {
  Case minimal;
  Verdict verdict;
  int64_t steps = 0;        // accepted smaller cases
  int64_t evaluations = 0;  // candidates tried
  double seconds = 0;
  bool budget_exhausted = false;  // then the case may not be 1-minimal
};

struct Failure {
  int64_t case_number = 0;  // 1-based: cases drawn until this one
  Case found;
  Verdict found_verdict;
  double seconds_to_find = 0;
  std::string symptom;      // the symptom the minimal case was shrunk to keep
  std::optional<ShrinkResult> shrunk;
  std::string identity;     // of the minimal case
  const Case& minimal() const { return shrunk ? shrunk->minimal : found; }
  const Verdict& verdict() const { return shrunk ? shrunk->verdict : found_verdict; }
};

// The dtypes a property's cases are drawn and shrunk in: `wanted`, else the property's own.
std::vector<DType> dtypes_for(const std::vector<DType>& wanted, const std::string& property);

// Shrinks any failing case (drawn, decoded, read from a file) to a 1-minimal case that
// still shows `symptom`. `dtypes`: toward the first; empty: the property's own.
ShrinkResult shrink(const Case& failing, const Verdict& verdict, const std::string& symptom,
                    double budget_seconds,
                    const std::function<void(const ShrinkResult&)>& on_step = nullptr,
                    const std::vector<DType>& dtypes = {},
                    const std::map<std::string, ParamValue>& fixed = {});

// The property that compares one call with the oracle: every failure is localized to
// the call that is wrong, and named and kept through it (docs/design.md §6). A defect seen
// by a metamorphic relation (a wrong dh0 of the second part of a chunked call) is then
// the same corpus entry as the defect seen directly.
inline constexpr const char* kDirectProperty = "vs_reference";

struct Localized {
  Case c;
  Verdict verdict;
};
// The first call of the failing property (its calls(), each checked against the oracle)
// that fails on its own; the case itself when none does (only the relation fails).
Localized localize(const Case& found, const Verdict& verdict);

// A failure of any case, localized, then shrunk for each symptom in turn: the ones whose
// identity is not in `known` are fresh.
struct Diagnosis {
  Failure failure;                      // the first new one (or the last known one)
  std::vector<Failure> fresh;           // every symptom whose identity is new
  bool all_known = false;
  std::vector<std::string> known_seen;  // known identities it showed
  double shrink_seconds = 0;            // every symptom's shrinking
};
Diagnosis diagnose(const Case& failing, const Verdict& verdict, const std::set<std::string>& known,
                   bool shrink, double shrink_seconds, const std::vector<DType>& dtypes = {},
                   const std::map<std::string, ParamValue>& fixed = {},
                   const std::function<void(const ShrinkResult&)>& on_step = nullptr,
                   DiagnosisMemo* memo = nullptr);

// Does this minimal failure show the known defect (its symptom, on a case of its shape)?
bool shows(const KnownDefect& defect, const Failure& f);

}  // namespace kprop
