#include "harness/engine/runner.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "core/splitmix64.h"
#include "generators/draw.h"
#include "generators/shrink.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/engine/triage.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"

namespace kprop {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A drawn case that the limits allow but memory would not (more elements than
// KPROP_MAX_ELEMENTS: large --limit values reach it) is rejected and counted, as the fuzz
// targets do, rather than ending the run the way a too-large case a user wrote does. One
// message for all of them, so the summary counts them on one line.
Verdict evaluate_drawn(const Target& target, const Case& c) {
  const Kernel& kernel = *target.kernel;
  const Schema& schema = kernel.schema();
  if (schema.size_check && !schema.size_check(c).empty()) {
    Verdict v = open_verdict(kernel, c);
    v.status = Verdict::Status::rejected;
    v.message = fmt::format("drawn too large to materialize: more than {} elements in one "
                            "tensor (KPROP_MAX_ELEMENTS)",
                            max_elements());
    return v;
  }
  return evaluate(target, c);
}

}  // namespace

void Tally::count(const Verdict& v) {
  for (Tally* t : {this, &by_property[v.property]}) {
    ++t->cases;
    switch (v.status) {
      case Verdict::Status::pass: ++t->passed; break;
      case Verdict::Status::fail: ++t->failed; break;
      case Verdict::Status::rejected: ++t->rejected; break;
      case Verdict::Status::skipped: ++t->skipped; break;
    }
  }
}

void Tally::count_known(const std::string& property) {
  ++known;
  ++by_property[property].known;
}

void Tally::add(const Tally& other) {
  cases += other.cases;
  passed += other.passed;
  failed += other.failed;
  known += other.known;
  rejected += other.rejected;
  skipped += other.skipped;
  seconds += other.seconds;
}

// The index-th word of the seed's SplitMix64 stream, reached without the words before it.
uint64_t case_seed(uint64_t seed, int64_t index) {
  return SplitMix64::at(seed, static_cast<uint64_t>(index)).next();
}

CaseSpace search_space(const SearchOptions& options, const std::string& property, int64_t index) {
  CaseSpace space;
  space.impl = options.impl;
  space.property = property;
  space.dtypes = dtypes_for(options.dtypes, property);
  space.limits = options.limits;
  space.fixed = options.fixed;
  // Sizes grow over the first cases, as RapidCheck's do: small cases first.
  space.size = static_cast<int>(std::min<int64_t>(100, 10 + index));
  return space;
}

SearchResult search(const SearchOptions& options) {
  const Kernel& kernel = find_kernel(options.kernel);
  const Schema& schema = kernel.schema();
  std::vector<std::string> properties =
      options.properties.empty() ? kernel.properties() : options.properties;
  // Each property's target, resolved once (a bad name fails here, before any case).
  std::vector<Target> targets;
  for (const auto& name : properties) targets.push_back(resolve_target(options.kernel, options.impl, name));

  SearchResult result;
  Triage triage({options.known_identities, options.shrink, options.shrink_seconds,
                 options.dtypes, options.fixed, options.memo});
  const auto start = Clock::now();
  for (int64_t i = options.first_case; i < options.cases; ++i) {
    const size_t which = static_cast<size_t>(i) % properties.size();
    const CaseSpace space = search_space(options, properties[which], i);
    RandomChoices choices(case_seed(options.seed, i));
    const Case drawn = draw_case(schema, choices, space);
    const Verdict v = evaluate_drawn(targets[which], drawn);
    if (v.status == Verdict::Status::rejected) ++result.rejections[v.message];
    if (v.status == Verdict::Status::skipped && v.message.rfind(kNotTaken, 0) == 0)
      ++result.not_taken[v.message.substr(std::string(kNotTaken).size())];

    if (v.failed()) {
      TriageOutcome t = triage.classify(drawn, v, [&](const ShrinkResult&) {
        if (options.on_progress) options.on_progress(result.tally, "shrink");
      });
      for (const auto& id : t.known_seen) ++result.sightings[id];
      if (t.all_known) {
        result.tally.count_known(drawn.property);
        result.tally.seconds = since(start);
        if (options.on_progress) options.on_progress(result.tally, "search");
        continue;
      }
      result.tally.count(v);
      for (Failure& f : t.fresh) {
        f.case_number = i + 1;
        f.seconds_to_find = since(start) - t.shrink_seconds;
      }
      result.failure = t.fresh.front();
      result.failures = std::move(t.fresh);
      result.tally.seconds = since(start);
      // "found", not "search": a caller that stops the search on an interrupt by throwing
      // from a "search" call must not throw the failure away with it.
      if (options.on_progress) options.on_progress(result.tally, "found");
      break;
    }
    result.tally.count(v);
    result.tally.seconds = since(start);
    if (options.on_progress) options.on_progress(result.tally, "search");
  }
  return result;
}

HuntResult hunt(SearchOptions options, const std::function<bool(const Failure&)>& wanted) {
  HuntResult h;
  // The same case is searched again after each unwanted defect: keep what was shrunk.
  if (!options.memo) options.memo = std::make_shared<DiagnosisMemo>();
  const auto start = Clock::now();
  while (options.first_case < options.cases) {
    SearchResult r = search(options);
    if (!r.failure) {
      h.cases = options.cases;
      break;
    }
    h.cases = r.failure->case_number;
    for (Failure& f : r.failures) {
      if (!h.match && wanted(f)) {
        h.match = std::move(f);
      } else {
        options.known_identities.insert(f.identity);
        h.others.push_back(std::move(f));
      }
    }
    if (h.match) break;
    options.first_case = h.cases;
  }
  h.seconds = since(start);
  return h;
}

}  // namespace kprop
