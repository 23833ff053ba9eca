// Human-readable renderings of cases, verdicts and search results.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "harness/engine/runner.h"
#include "harness/execution/call_profile.h"
#include "harness/storage/verdict_json.h"

namespace kprop {

// The case, one field per line, as a kernel engineer would write it down.
std::string format_case(const Case& c);

// The per-tensor error table of a verdict (plus memory-checker findings).
std::string format_error_table(const Verdict& v);

// One line: cases, failures, rejections, rate.
std::string format_tally(const Tally& t);
// One line per property ("  layout: 40 cases: 39 passed, 1 failed, ..."), where the run
// drew cases of two or more; "" otherwise.
std::string format_property_tallies(const Tally& t);
// "time: implementation 1.20 s (2000 calls), transfers 0.10 s, float64 reference 0.40 s,
// the rest 0.30 s": where the `total_seconds` of a run went (harness/execution/call_profile.h).
std::string format_call_profile(const CallProfile::Totals& p, double total_seconds);

// The same, for machines (--json); a verdict's own is in verdict_json.h.
nlohmann::json tally_to_json(const Tally& t);

}  // namespace kprop
