#include "harness/presentation/tolerance_report.h"

#include "generators/draw.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/errors.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/runner.h"
#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"
#include "harness/model/verdict.h"
#include "harness/presentation/report_numbers.h"

namespace kprop {

namespace {

const double kInf = std::numeric_limits<double>::infinity();

int64_t flat_index(const std::vector<int64_t>& index, at::IntArrayRef sizes) {
  int64_t flat = 0;
  for (size_t i = 0; i < index.size(); ++i) flat = flat * sizes[i] + index[i];
  return flat;
}

TensorTolerance tolerance_of(const Kernel& kernel, const Problem& p, const TensorError& e,
                             const at::Tensor& actual, const at::Tensor& expected,
                             const std::vector<double>& rtols) {
  TensorTolerance t;
  t.tensor = e.tensor;
  t.elements = e.elements;
  t.max_abs = e.max_abs;
  t.max_rel = e.max_rel;
  t.error_over_bound = e.error_over_bound;
  t.over_bound = e.mismatches;
  t.index = e.index;
  t.actual = e.actual;
  t.expected = e.expected;
  // compare() names the region of failing tensors only; the report names it always.
  t.region = e.region;
  if (t.region.empty() && !t.index.empty())
    t.region = kernel.region(p, e.tensor, flat_index(t.index, expected.sizes()));
  for (double rtol : rtols) t.atol.push_back(smallest_atol(actual, expected, rtol));
  return t;
}

// Inserts the names of one case into the running order, each after its predecessor in
// that case, so that tensors absent from the first cases (db, dh0) still land in the
// kernel's order.
void merge_names(std::vector<std::string>& order, const CaseTolerance& c) {
  std::string previous;
  for (const auto& t : c.tensors) {
    if (std::find(order.begin(), order.end(), t.tensor) == order.end()) {
      auto at =
          previous.empty() ? order.begin() : std::find(order.begin(), order.end(), previous) + 1;
      order.insert(at, t.tensor);
    }
    previous = t.tensor;
  }
}

void add_to_summary(TensorSummary& s, const TensorTolerance& t, const std::string& label) {
  const bool first = s.cases++ == 0;
  if (t.error_over_bound > 1) ++s.cases_over_bound;
  s.max_abs = std::max(s.max_abs, t.max_abs);
  s.max_rel = std::max(s.max_rel, t.max_rel);
  if (s.atol.empty()) s.atol.assign(t.atol.size(), 0.0);
  for (size_t i = 0; i < t.atol.size(); ++i) s.atol[i] = std::max(s.atol[i], t.atol[i]);
  if (first || t.error_over_bound > s.error_over_bound) {
    s.error_over_bound = t.error_over_bound;
    s.worst_case = label;
    s.worst_index = t.index;
    s.worst_region = t.region;
  }
}

void summarize(ToleranceReport& r) {
  std::vector<std::string> order;
  for (const auto& c : r.cases) merge_names(order, c);
  for (const auto& name : order) {
    TensorSummary s;
    s.tensor = name;
    for (const auto& c : r.cases)
      for (const auto& t : c.tensors)
        if (t.tensor == name) add_to_summary(s, t, c.label);
    r.tensors.push_back(std::move(s));
  }
}

// ---- rendering ---------------------------------------------------------------------

std::string where_text(const TensorSummary& s) {
  if (s.error_over_bound == 0) return "exact";
  std::string where =
      fmt::format("{}: {}[{}]", s.worst_case, s.tensor, fmt::join(s.worst_index, ", "));
  return s.worst_region.empty() ? where : fmt::format("{} {}", where, s.worst_region);
}

std::string error_over_bound_text(const TensorSummary& s) {
  if (s.cases_over_bound == 0) return number(s.error_over_bound);
  return fmt::format("**{}** ({} of {} > 1)", number(s.error_over_bound), s.cases_over_bound,
                     count_of(s.cases, "case"));
}

std::string report_markdown(const ToleranceReport& r) {
  std::string md =
      fmt::format("## Tolerance of {} / {} in {}\n\n", r.kernel, r.impl, to_string(r.dtype));
  const int64_t measured = static_cast<int64_t>(r.cases.size()) - r.rejected();
  md += fmt::format(
      "{}: {} measured, {} rejected by the implementation. {}\n\n",
      count_of(static_cast<int64_t>(r.cases.size()), "case"), measured, r.rejected(),
      r.within_bounds() ? "Every error is within its bound." : "Some errors exceed their bound.");
  if (!r.tensors.empty()) {
    md += "| tensor | max abs | max rel |";
    for (double rtol : r.rtols) md += fmt::format(" atol@rtol={} |", rtol_text(rtol));
    md += " max err/bound | worst case/where |\n|---|---:|---:|";
    for (size_t i = 0; i < r.rtols.size(); ++i) md += "---:|";
    md += "---:|---|\n";
    for (const auto& s : r.tensors) {
      md += fmt::format("| {} | {} | {} |", s.tensor, number(s.max_abs), number(s.max_rel));
      for (double atol : s.atol) md += fmt::format(" {} |", number(atol));
      md += fmt::format(" {} | {} |\n", error_over_bound_text(s), where_text(s));
    }
  }
  // The worst cases, spelled out so that they can be re-run.
  std::vector<std::string> worst;
  for (const auto& s : r.tensors)
    if (s.error_over_bound > 0 &&
        std::find(worst.begin(), worst.end(), s.worst_case) == worst.end())
      worst.push_back(s.worst_case);
  if (!worst.empty()) {
    md += "\nWorst cases:\n";
    for (const auto& label : worst)
      for (const auto& c : r.cases)
        if (c.label == label) md += fmt::format("- {}: `{}`\n", label, summary(find_kernel(c.c.kernel).schema(), c.c));
  }
  // Refusals, one line per reason.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& c : r.cases)
    if (c.rejected) by_reason[c.rejection].push_back(c.label);
  if (!by_reason.empty()) {
    md += "\nRejected by the implementation:\n";
    for (const auto& [reason, labels] : by_reason)
      md += fmt::format("- {} ({}): {}\n", count_of(static_cast<int64_t>(labels.size()), "case"),
                        fmt::join(labels, ", "), reason);
  }
  return md;
}

const char* kReadingGuide =
    "How to read these tables: *max abs* and *max rel* are the largest differences from "
    "the float64 reference over all elements and cases (rel over elements whose expected "
    "value is not 0); *atol@rtol=r* is the smallest atol for which "
    "`|actual - expected| <= atol + r * |expected|` holds for every element of every case, "
    "i.e. what `torch.allclose(actual, expected, rtol=r, atol=...)` would need. *max "
    "err/bound* is the largest error as a multiple of that element's derived "
    "rounding-error bound (docs/design.md §5): err/bound <= 1: within the rounding error the "
    "computation allows, so the atol beside it is the price of the dtype; > 1: a bug or an "
    "under-derived bound, so look at the worst case and region before raising any "
    "tolerance.\n";

nlohmann::json atol_json(const std::vector<double>& rtols, const std::vector<double>& atols) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < rtols.size() && i < atols.size(); ++i)
    out.push_back({{"rtol", rtols[i]}, {"atol", number_json(atols[i])}});
  return out;
}

nlohmann::json case_json(const CaseTolerance& c, const std::vector<double>& rtols) {
  nlohmann::json j = {{"case", c.label}, {"summary", summary(find_kernel(c.c.kernel).schema(), c.c)}, {"impl", c.c.impl}};
  if (c.rejected) {
    j["rejected"] = c.rejection;
    return j;
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : c.tensors)
    tensors.push_back({{"tensor", t.tensor},
                       {"elements", t.elements},
                       {"max_abs", number_json(t.max_abs)},
                       {"max_rel", number_json(t.max_rel)},
                       {"atol", atol_json(rtols, t.atol)},
                       {"error_over_bound", number_json(t.error_over_bound)},
                       {"over_bound", t.over_bound},
                       {"index", t.index},
                       {"region", t.region},
                       {"actual", number_json(t.actual)},
                       {"expected", number_json(t.expected)}});
  j["tensors"] = tensors;
  return j;
}

nlohmann::json report_json(const ToleranceReport& r) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& s : r.tensors)
    tensors.push_back(
        {{"tensor", s.tensor},
         {"cases", s.cases},
         {"cases_over_bound", s.cases_over_bound},
         {"max_abs", number_json(s.max_abs)},
         {"max_rel", number_json(s.max_rel)},
         {"atol", atol_json(r.rtols, s.atol)},
         {"max_error_over_bound", number_json(s.error_over_bound)},
         {"worst",
          {{"case", s.worst_case}, {"index", s.worst_index}, {"region", s.worst_region}}}});
  nlohmann::json rejected = nlohmann::json::array(), cases = nlohmann::json::array();
  for (const auto& c : r.cases) {
    if (c.rejected) rejected.push_back({{"case", c.label}, {"reason", c.rejection}});
    cases.push_back(case_json(c, r.rtols));
  }
  return {{"kernel", r.kernel},
          {"impl", r.impl},
          {"dtype", to_string(r.dtype)},
          {"rtols", r.rtols},
          {"cases", r.cases.size()},
          {"rejected", rejected},
          {"within_bounds", r.within_bounds()},
          {"tensors", tensors},
          {"per_case", cases}};
}

}  // namespace

double smallest_atol(const at::Tensor& actual, const at::Tensor& expected, double rtol) {
  if (!actual.defined() || actual.sizes() != expected.sizes()) return kInf;
  const auto a = actual.to(at::kDouble).contiguous(), e = expected.to(at::kDouble).contiguous();
  const double *pa = a.data_ptr<double>(), *pe = e.data_ptr<double>();
  double atol = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    const bool same = pa[i] == pe[i] || (std::isnan(pa[i]) && std::isnan(pe[i]));
    if (same) continue;
    const double diff = pa[i] - pe[i];
    // No finite atol covers an infinite or NaN difference (nor does rtol * inf, which
    // would make inf - inf).
    if (!std::isfinite(diff)) return kInf;
    atol = std::max(atol, std::abs(diff) - rtol * std::abs(pe[i]));
  }
  return atol;
}

CaseTolerance measure_tolerance(const Case& c, const std::vector<double>& rtols,
                                const std::string& label) {
  CaseTolerance out;
  out.label = label.empty() ? summary(find_kernel(c.kernel).schema(), c) : label;
  out.c = c;
  const auto problems = validate(find_kernel(c.kernel).schema(), c);
  if (!problems.empty())
    throw CaseError(fmt::format("{}: impossible case: {}", out.label, fmt::join(problems, "; ")));
  const Kernel& kernel = find_kernel(c.kernel);
  const Implementation impl = resolve_implementation(c.kernel, c.impl);

  // As vs_reference: the same cotangents, reference and bounds. Calls folds what the
  // memory checker saw into a verdict; this report is about values, so it stays unread.
  Verdict verdict = open_verdict(kernel, c);
  Calls calls(kernel, impl, verdict);
  const Problem p = kernel.materialize(c);
  NamedTensors actual, cot;
  try {
    const auto outputs = calls.forward(p);
    cot = random_cotangents(kernel, p, outputs);
    actual = merged(outputs, calls.backward(p, cot));
  } catch (const ImplementationRefused& e) {
    out.rejected = true;
    out.rejection = e.what();
    return out;
  }
  const auto reference = calls.reference(p, cot);
  const auto bounds = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0});
  for (const TensorError& e : compare(kernel, p, actual, reference, bounds))
    out.tensors.push_back(
        tolerance_of(kernel, p, e, actual.get(e.tensor), reference.get(e.tensor), rtols));
  return out;
}

std::vector<LabelledCase> draw_cases(const std::string& kernel, const CaseSpace& space,
                                     int64_t count, uint64_t seed) {
  const Kernel& k = find_kernel(kernel);
  std::vector<LabelledCase> cases;
  for (int64_t i = 0; i < count; ++i) {
    // The size schedule of search(): small cases first.
    CaseSpace sized = space;
    sized.size = static_cast<int>(std::min<int64_t>(100, 10 + i));
    RandomChoices choices(case_seed(seed, i));
    cases.push_back({fmt::format("case {}", i + 1), draw_case(k.schema(), choices, sized)});
  }
  return cases;
}

int64_t ToleranceReport::rejected() const {
  return std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.rejected; });
}

bool CaseTolerance::within_bounds() const {
  // Written so that a NaN ratio counts as out of bounds.
  return std::none_of(tensors.begin(), tensors.end(),
                      [](const TensorTolerance& t) { return !(t.error_over_bound <= 1); });
}

bool ToleranceReport::within_bounds() const {
  return std::all_of(cases.begin(), cases.end(),
                     [](const CaseTolerance& c) { return c.within_bounds(); });
}

std::vector<ToleranceReport> tolerance_reports(const std::vector<CaseTolerance>& cases,
                                               const std::vector<double>& rtols) {
  std::map<std::tuple<std::string, std::string, DType>, ToleranceReport> groups;
  for (const auto& c : cases) {
    ToleranceReport& r = groups[{c.c.kernel, c.c.impl, c.c.dtype}];
    r.kernel = c.c.kernel;
    r.impl = c.c.impl;
    r.dtype = c.c.dtype;
    r.rtols = rtols;
    r.cases.push_back(c);
  }
  std::vector<ToleranceReport> reports;
  for (auto& [key, r] : groups) {
    summarize(r);
    reports.push_back(std::move(r));
  }
  return reports;
}

std::vector<ToleranceReport> tolerance_reports(const std::vector<LabelledCase>& cases,
                                               const std::vector<double>& rtols) {
  std::vector<CaseTolerance> measured;
  for (const auto& c : cases) measured.push_back(measure_tolerance(c.c, rtols, c.label));
  return tolerance_reports(measured, rtols);
}

bool within_bounds(const std::vector<ToleranceReport>& reports) {
  return std::all_of(reports.begin(), reports.end(),
                     [](const ToleranceReport& r) { return r.within_bounds(); });
}

std::string tolerance_markdown(const std::vector<ToleranceReport>& reports) {
  std::string md;
  for (const auto& r : reports) md += report_markdown(r) + "\n";
  if (reports.empty()) md += "No cases.\n\n";
  return md + kReadingGuide;
}

nlohmann::json tolerance_json(const std::vector<ToleranceReport>& reports) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : reports) all.push_back(report_json(r));
  return {{"report", "tolerance"}, {"within_bounds", within_bounds(reports)}, {"reports", all}};
}

}  // namespace kprop
