#include "harness/engine/triage.h"

#include "harness/model/kernel.h"

namespace kprop {

TriageOutcome Triage::classify(const Case& failing, const Verdict& v,
                               const std::function<void(const ShrinkResult&)>& on_step) {
  std::string key = v.signature();
  for (const auto& on : needs(find_kernel(failing.kernel).schema(), failing)) key += " +" + on;
  TriageOutcome out;
  if (auto it = known_signatures_.find(key); it != known_signatures_.end()) {
    out.known_seen = it->second;
    return out;
  }
  Diagnosis d = diagnose(failing, v, options_.known, options_.shrink, options_.shrink_seconds,
                         options_.dtypes, options_.fixed, on_step, options_.memo.get());
  out.all_known = d.all_known;
  out.known_seen = std::move(d.known_seen);
  out.fresh = std::move(d.fresh);
  out.shrink_seconds = d.shrink_seconds;
  if (out.all_known) known_signatures_[key] = out.known_seen;
  return out;
}

}  // namespace kprop
