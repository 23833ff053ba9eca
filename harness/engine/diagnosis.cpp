#include "harness/engine/diagnosis.h"

#include <sstream>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/model/identity.h"

namespace kprop {

namespace {

// A case's full text: what a memo of its diagnosis is keyed by.
std::string to_string_key(const Case& c) {
  std::ostringstream os;
  os << c;
  return os.str();
}

// The tensor a symptom names: its first word ("dh0" of "dh0 used twice [...]").
std::string tensor_of(const std::string& symptom) { return symptom.substr(0, symptom.find(' ')); }

// `direct` fails in a tensor that `relation` fails in.
bool fails_in_a_tensor_of(const Verdict& direct, const Verdict& relation) {
  for (const auto& d : direct.symptoms())
    for (const auto& r : relation.symptoms())
      if (tensor_of(d) == tensor_of(r)) return true;
  return false;
}


}  // namespace

std::vector<DType> dtypes_for(const std::vector<DType>& wanted, const std::string& property) {
  if (!wanted.empty()) return wanted;
  return find_property(property).dtypes();
}

ShrinkResult shrink(const Case& failing, const Verdict& verdict, const std::string& symptom,
                    double budget_seconds, const std::function<void(const ShrinkResult&)>& on_step,
                    const std::vector<DType>& dtypes,
                    const std::map<std::string, ParamValue>& fixed) {
  // Shrinking moves parameters, never the kernel, implementation or property: one target
  // for every evaluation (a shrink makes hundreds).
  const Target target = target_of(failing);
  const Schema& schema = target.kernel->schema();
  ShrinkResult r{failing, verdict};
  const auto shows = [&](const Case& c) {
    Verdict v = evaluate(target, c);
    if (!v.shows(symptom)) return false;
    r.verdict = std::move(v);
    return true;
  };
  const auto run = shrink_case(
      schema, failing, dtypes_for(dtypes, failing.property), shows, budget_seconds,
      [&](const ShrinkRun& s) {
        r.minimal = s.minimal;
        r.steps = s.steps;
        if (on_step) on_step(r);
      },
      fixed);
  r.minimal = run.minimal;
  r.steps = run.steps;
  r.evaluations = run.evaluations;
  r.seconds = run.seconds;
  r.budget_exhausted = run.budget_exhausted;
  return r;
}

Localized localize(const Case& found, const Verdict& verdict) {
  const Kernel& kernel = find_kernel(found.kernel);
  const auto& props = kernel.properties();
  if (found.property == kDirectProperty ||
      std::find(props.begin(), props.end(), kDirectProperty) == props.end())
    return {found, verdict};
  for (Case call : find_property(found.property).calls(kernel, found)) {
    call.property = kDirectProperty;
    if (!validate(kernel.schema(), call).empty()) continue;
    Verdict v = evaluate(call);
    if (v.failed()) return {call, v};
  }
  // A relation that hands the call cotangents of its own (composition's graph) fails where
  // the case's choice of them hides the defect from the direct call (zero_first: the first
  // rows of dy are zero, the graph's are not). The direct call with random cotangents
  // names it as the defect it is, when it fails in a tensor the relation saw fail: else
  // one defect would be kept twice ("dh0 used twice [...]" beside "dh0 [...]").
  if (found.cotangents != Cotangents::random) {
    Case call = found;
    call.property = kDirectProperty;
    call.cotangents = Cotangents::random;
    if (validate(kernel.schema(), call).empty()) {
      Verdict v = evaluate(call);
      if (v.failed() && fails_in_a_tensor_of(v, verdict)) return {call, v};
    }
  }
  return {found, verdict};  // only the relation fails: keep the property's own view
}

Diagnosis diagnose(const Case& failing, const Verdict& verdict, const std::set<std::string>& known,
                   bool shrink_it, double shrink_seconds, const std::vector<DType>& dtypes,
                   const std::map<std::string, ParamValue>& fixed,
                   const std::function<void(const ShrinkResult&)>& on_step, DiagnosisMemo* memo) {
  const Schema& schema = find_kernel(failing.kernel).schema();
  const std::string key = to_string_key(failing);
  Diagnosis d;
  d.all_known = true;
  const Localized direct = localize(failing, verdict);
  for (const auto& symptom : direct.verdict.symptoms()) {
    Failure f;
    const std::string memo_key = key + "\n" + symptom;
    if (memo && memo->count(memo_key)) {
      f = memo->at(memo_key);
    } else {
      f.found = failing;
      f.found_verdict = verdict;
      f.symptom = symptom;
      if (shrink_it) {
        f.shrunk = shrink(direct.c, direct.verdict, symptom, shrink_seconds, on_step, dtypes,
                          fixed);
        d.shrink_seconds += f.shrunk->seconds;
      } else if (direct.c != failing) {
        f.shrunk = ShrinkResult{direct.c, direct.verdict};
      }
      // An unlocated symptom takes the region the minimal case shows it in.
      f.identity = identity(schema, f.minimal(), f.verdict().symptom_like(symptom));
      if (memo) (*memo)[memo_key] = f;
    }
    if (known.count(f.identity)) {
      d.known_seen.push_back(f.identity);
    } else if (std::none_of(d.fresh.begin(), d.fresh.end(),
                            [&](const Failure& g) { return g.identity == f.identity; })) {
      d.all_known = false;
      d.fresh.push_back(f);
    }
    d.failure = std::move(f);
  }
  if (!d.fresh.empty()) d.failure = d.fresh.front();
  if (direct.verdict.symptoms().empty()) {
    d.failure.found = failing;
    d.failure.found_verdict = verdict;
  }
  return d;
}

bool shows(const KnownDefect& defect, const Failure& f) {
  return symptom_of(f.identity) == defect.symptom && f.minimal().impl == f.found.impl &&
         (!defect.shape || defect.shape(f.minimal()));
}

}  // namespace kprop
