#include "harness/replay.h"

#include "harness/fingerprint.h"
#include "harness/kernel_info.h"
#include "harness/property.h"

namespace kprop {

bool ReplayResult::as_recorded() const {
  if (!fingerprint_matches || !signature_matches) return false;
  for (const auto& r : runs)
    if (!r.as_expected()) return false;
  return true;
}

ReplayResult replay(const CaseFile& f, const std::string& impl) {
  ReplayResult r;
  r.file = f;
  r.fingerprint = inputs_fingerprint(find_kernel(f.c.kernel).materialize(f.c));
  r.fingerprint_matches = f.inputs_fingerprint.empty() || r.fingerprint == f.inputs_fingerprint;
  std::vector<std::string> impls;
  if (!impl.empty()) {
    impls.push_back(impl);
  } else {
    for (const auto& [name, status] : f.expect) impls.push_back(name);
  }
  for (const auto& name : impls) {
    Case c = f.c;
    c.impl = name;
    ImplementationReplay run{name, evaluate(c), std::nullopt};
    if (auto it = f.expect.find(name); it != f.expect.end()) run.expected = it->second;
    if (name == f.c.impl && run.verdict.failed() && !f.signature.empty())
      r.signature_matches = run.verdict.signature() == f.signature;
    r.runs.push_back(std::move(run));
  }
  return r;
}

}  // namespace kprop
