// Triage: naming the defects of failing cases one after another, as every long run does
// (a search, a fuzz target, the nightly run).
//
// A failure is diagnosed (localized, shrunk per symptom, named: harness/engine/diagnosis.h) unless
// its signature, with the flags and choices its case has on, already led to identities
// that are all known: then it is a sighting of those, counted, and not shrunk again. The
// same signature with a flag on or off can be two defects, so the flags are in the key.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/engine/diagnosis.h"

namespace kprop {

struct TriageOptions {
  std::set<std::string> known;  // identities already kept (the corpus)
  bool shrink = true;
  double shrink_seconds = 60;  // per symptom
  std::vector<DType> dtypes;   // shrink toward the first; empty: the property's own
  std::map<std::string, ParamValue> fixed;  // parameters shrinking must not move
  std::shared_ptr<DiagnosisMemo> memo;      // diagnoses shared with other triages
};

struct TriageOutcome {
  bool all_known = true;
  std::vector<std::string> known_seen;  // known identities it showed
  std::vector<Failure> fresh;           // new defects, each with its minimal case
  double shrink_seconds = 0;
};

class Triage {
 public:
  explicit Triage(TriageOptions options) : options_(std::move(options)) {}

  // `failing` failed with verdict `v`.
  TriageOutcome classify(const Case& failing, const Verdict& v,
                         const std::function<void(const ShrinkResult&)>& on_step = nullptr);
  // From now on, failures of this identity are sightings (it was kept, or reported).
  void learn(const std::string& identity) { options_.known.insert(identity); }
  const std::set<std::string>& known() const { return options_.known; }

 private:
  TriageOptions options_;
  std::map<std::string, std::vector<std::string>> known_signatures_;
};

}  // namespace kprop
