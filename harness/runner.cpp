#include "harness/runner.h"

#include <chrono>

#include "harness/kernel_info.h"
#include "harness/property.h"

namespace kprop {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The dtypes a case of `property` may take under `options`.
std::vector<DType> dtypes_for(const SearchOptions& options, const Property& property) {
  if (!options.dtypes.empty()) return options.dtypes;
  return property.dtypes();
}

}  // namespace

void Tally::count(const Verdict& v) {
  ++cases;
  switch (v.status) {
    case Verdict::Status::pass: ++passed; break;
    case Verdict::Status::fail: ++failed; break;
    case Verdict::Status::rejected: ++rejected; break;
    case Verdict::Status::skipped: ++skipped; break;
  }
}

uint64_t case_seed(uint64_t seed, int64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SearchResult search(const SearchOptions& options) {
  const KernelInfo& kernel = find_kernel(options.kernel);
  std::vector<std::string> properties =
      options.properties.empty() ? kernel.properties() : options.properties;
  for (const auto& name : properties) find_property(name);  // fail early on a bad name

  SearchResult result;
  const auto start = Clock::now();
  for (int64_t i = options.first_case; i < options.cases; ++i) {
    const Property& property = find_property(properties[i % properties.size()]);
    CaseSpace space;
    space.impl = options.impl;
    space.property = property.name();
    space.dtypes = dtypes_for(options, property);
    space.max_segments = options.max_segments;
    space.max_length = options.max_length;
    // Sizes grow over the first cases, as RapidCheck's do: small cases first.
    const int size = static_cast<int>(std::min<int64_t>(100, 10 + i));
    const auto drawn = kernel.draw(space, case_seed(options.seed, i), size);
    const Verdict v = evaluate(drawn.value());
    const bool known = v.failed() && options.known_signatures.count(v.signature()) > 0;
    if (known)
      ++result.tally.known;
    else
      result.tally.count(v);
    result.tally.seconds = since(start);
    if (v.status == Verdict::Status::rejected) ++result.rejections[v.message];
    if (options.on_progress) options.on_progress(result.tally, "search");
    if (!v.failed() || known) continue;

    Failure failure;
    failure.case_number = i + 1;
    failure.found = drawn.value();
    failure.found_verdict = v;
    failure.seconds_to_find = since(start);
    if (options.shrink)
      failure.shrunk = shrink(drawn, v, options.shrink_seconds, [&](const ShrinkResult&) {
        if (options.on_progress) options.on_progress(result.tally, "shrink");
      });
    result.failure = std::move(failure);
    break;
  }
  return result;
}

HuntResult hunt(SearchOptions options, const std::function<bool(const Failure&)>& wanted) {
  HuntResult h;
  const auto start = Clock::now();
  while (options.first_case < options.cases) {
    SearchResult r = search(options);
    if (!r.failure) {
      h.cases = options.cases;
      break;
    }
    Failure& f = *r.failure;
    h.cases = f.case_number;
    if (wanted(f)) {
      h.match = std::move(f);
      break;
    }
    options.known_signatures.insert(f.verdict().signature());
    options.known_signatures.insert(f.found_verdict.signature());
    options.first_case = f.case_number;
    h.others.push_back(std::move(f));
  }
  h.seconds = since(start);
  return h;
}

ShrinkResult shrink(const rc::Shrinkable<Case>& failing, const Verdict& verdict,
                    double budget_seconds,
                    const std::function<void(const ShrinkResult&)>& on_step) {
  const auto start = Clock::now();
  const std::string signature = verdict.signature();
  ShrinkResult r{failing.value(), verdict, failing};
  rc::Shrinkable<Case> current = failing;
  bool improved = true;
  while (improved) {
    improved = false;
    auto candidates = current.shrinks();
    while (auto candidate = candidates.next()) {
      if (since(start) > budget_seconds) {
        r.budget_exhausted = true;
        r.seconds = since(start);
        return r;
      }
      const Case c = candidate->value();
      if (!validate(c).empty()) continue;
      ++r.evaluations;
      const Verdict v = evaluate(c);
      if (v.failed() && v.signature() == signature) {
        current = *candidate;
        r.tree = current;
        r.minimal = c;
        r.verdict = v;
        ++r.steps;
        improved = true;
        if (on_step) on_step(r);
        break;
      }
    }
  }
  r.seconds = since(start);
  return r;
}

}  // namespace kprop
