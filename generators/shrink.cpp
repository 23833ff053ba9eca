#include "generators/shrink.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "generators/value_steps.h"

namespace kprop {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

namespace {

std::vector<int64_t> integer_steps(const ParamSpec& spec, int64_t x, const Case& c, size_t index,
                                   int64_t simplest) {
  if (spec.shrinks) return spec.shrinks(x, c, index);
  return towards(x, spec.bounds_in(c, index).clamp(simplest));
}

// Lists lose elements first (the largest chunks first, never below their least count), then
// each element shrinks.
std::vector<std::vector<int64_t>> list_steps(const ParamSpec& spec, const std::vector<int64_t>& xs,
                                             const Case& c) {
  std::vector<std::vector<int64_t>> out;
  const auto n = static_cast<int64_t>(xs.size());
  if (spec.list.same_count_as.empty()) {
    const int64_t removable = n - entry_count(spec, c).lo;
    // Chunk sizes: all that may go, then halves down to one element.
    std::vector<int64_t> sizes;
    for (int64_t k = removable; k >= 1; k /= 2) sizes.push_back(k);
    if (removable > 1 && sizes.back() != 1) sizes.push_back(1);
    for (int64_t k : sizes) {
      for (int64_t start = 0; start + k <= n; ++start) {
        std::vector<int64_t> fewer(xs.begin(), xs.begin() + start);
        fewer.insert(fewer.end(), xs.begin() + start + k, xs.end());
        out.push_back(std::move(fewer));
      }
    }
  } else if (spec.list.may_be_empty && n > 0) {
    out.push_back({});
  }
  for (size_t i = 0; i < xs.size(); ++i)
    for (int64_t v : integer_steps(spec, xs[i], c, i, spec.element_simplest)) {
      auto smaller = xs;
      smaller[i] = v;
      out.push_back(std::move(smaller));
    }
  return out;
}

}  // namespace

std::vector<Case> shrink_steps(const Schema& schema, const Case& c,
                               const std::vector<DType>& dtypes,
                               const std::map<std::string, ParamValue>& fixed) {
  std::vector<Case> out;
  std::set<std::string> seen;
  auto offer = [&](Case candidate) {
    fit(schema, candidate);
    if (candidate == c || !validate(schema, candidate).empty()) return;
    // Cases are small; their printed form tells duplicates apart.
    std::string key = summary(schema, candidate);
    if (!seen.insert(key).second) return;
    out.push_back(std::move(candidate));
  };
  for (const auto& name : schema.shrink_names()) {
    if (fixed.count(name)) continue;
    const ParamSpec& spec = schema.at(name);
    const auto it = c.params.find(name);
    if (it == c.params.end()) continue;
    const ParamValue& v = it->second;
    switch (spec.type) {
      case ParamType::integer:
        for (int64_t x : integer_steps(spec, std::get<int64_t>(v), c, 0,
                                       std::get<int64_t>(spec.simplest_in(c)))) {
          Case s = c;
          s.params[name] = x;
          offer(std::move(s));
        }
        break;
      case ParamType::flag:
      case ParamType::choice:
        if (v != spec.simplest) {
          Case s = c;
          s.params[name] = spec.simplest;
          offer(std::move(s));
        }
        break;
      case ParamType::integers:
        for (auto& xs : list_steps(spec, std::get<std::vector<int64_t>>(v), c)) {
          Case s = c;
          s.params[name] = std::move(xs);
          offer(std::move(s));
        }
        break;
    }
  }
  if (!dtypes.empty())
    for (DType d : dtypes) {
      if (d == c.dtype) break;
      Case s = c;
      s.dtype = d;
      offer(std::move(s));
    }
  if (c.distribution != Distribution::normal) {
    Case s = c;
    s.distribution = Distribution::normal;
    offer(std::move(s));
  }
  if (c.cotangents != Cotangents::random && !fixed.count("cotangents")) {  // as test suites make them
    for (Cotangents simpler : {Cotangents::random, Cotangents::ones}) {
      if (simpler == c.cotangents) break;
      Case s = c;
      s.cotangents = simpler;
      offer(std::move(s));
    }
  }
  return out;
}

ShrinkRun shrink_case(const Schema& schema, const Case& failing, const std::vector<DType>& dtypes,
                      const std::function<bool(const Case&)>& still_fails,
                      double budget_seconds, const std::function<void(const ShrinkRun&)>& on_step,
                      const std::map<std::string, ParamValue>& fixed) {
  const auto start = Clock::now();
  ShrinkRun r{failing};
  bool improved = true;
  while (improved) {
    improved = false;
    for (const Case& candidate : shrink_steps(schema, r.minimal, dtypes, fixed)) {
      if (since(start) > budget_seconds) {
        r.budget_exhausted = true;
        r.seconds = since(start);
        return r;
      }
      ++r.evaluations;
      if (still_fails(candidate)) {
        r.minimal = candidate;
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

bool is_one_minimal(const Schema& schema, const Case& c, const std::vector<DType>& dtypes,
                    const std::function<bool(const Case&)>& still_fails,
                    const std::map<std::string, ParamValue>& fixed) {
  for (const Case& candidate : shrink_steps(schema, c, dtypes, fixed))
    if (still_fails(candidate)) return false;
  return true;
}

}  // namespace kprop
