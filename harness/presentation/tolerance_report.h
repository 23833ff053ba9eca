// The tolerance report: how far an implementation is from the float64 reference, per
// output and gradient tensor, in the terms kernel engineers set tolerances in.
//
// For each tensor it gives the smallest atol that an `allclose(rtol, atol)` test would
// need at each of a few rtols — the table otherwise computed by hand — next to the
// error as a multiple of its derived rounding-error bound (docs/design.md §5), which says
// whether that atol is rounding (err/bound <= 1) or a bug (> 1), and where the worst
// element lies. Cases are measured as vs_reference checks them (same cotangents, same
// bounds); a batch is aggregated per kernel, implementation and dtype.
#pragma once

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/schema.h"

namespace kprop {

// Smallest atol for which |actual - expected| <= atol + rtol * |expected| holds for every
// element: max over elements of max(0, |actual - expected| - rtol * |expected|).
// Differences follow compare(): equal values (and NaN against NaN) differ by 0, a
// non-finite difference is infinite.
double smallest_atol(const at::Tensor& actual, const at::Tensor& expected, double rtol);

// One tensor of one case.
struct TensorTolerance {
  std::string tensor;
  int64_t elements = 0;
  double max_abs = 0;               // max |a - e|
  double max_rel = 0;               // max |a - e| / |e| over elements with e != 0
  std::vector<double> atol;         // atol[i]: smallest_atol at rtols[i]
  double error_over_bound = 0;      // max |a - e| / bound
  int64_t over_bound = 0;           // elements with |a - e| > bound
  std::vector<int64_t> index;       // the element of the largest error/bound
  std::string region;               // the kernel's name for where it lies
  double actual = 0, expected = 0;  // its values
};

// One case: measured, or refused by the implementation.
struct CaseTolerance {
  std::string label;  // the case file, or "case 17" of a generated batch
  Case c;
  bool rejected = false;
  std::string rejection;  // the implementation's message
  std::vector<TensorTolerance> tensors;

  // Every error/bound <= 1 (true for a rejected case: nothing was measured).
  bool within_bounds() const;
};

// Runs `c` (implementation c.impl, forward and backward with random cotangents, the
// float64 reference, the kernel's error bounds) and measures every output and gradient.
// An impossible case throws CaseError; an implementation that refuses gives rejected.
CaseTolerance measure_tolerance(const Case& c, const std::vector<double>& rtols,
                                const std::string& label = "");

// A labelled case to measure.
struct LabelledCase {
  std::string label;
  Case c;
};

// `count` cases of `space` from `seed`: case i is the one `kprop check --property
// vs_reference --seed S` draws as its i-th, so that a row of the report can be re-run.
std::vector<LabelledCase> draw_cases(const std::string& kernel, const CaseSpace& space,
                                     int64_t count, uint64_t seed);

// One tensor over the cases of a report: the max over cases of each statistic.
struct TensorSummary {
  std::string tensor;
  int64_t cases = 0;             // cases that have this tensor
  int64_t cases_over_bound = 0;  // cases whose error/bound > 1
  double max_abs = 0, max_rel = 0;
  std::vector<double> atol;  // per rtol
  double error_over_bound = 0;
  // The case with the largest error/bound, and its worst element.
  std::string worst_case;
  std::vector<int64_t> worst_index;
  std::string worst_region;
};

// The cases of one kernel, implementation and dtype.
struct ToleranceReport {
  std::string kernel, impl;
  DType dtype = DType::float32;
  std::vector<double> rtols;
  std::vector<CaseTolerance> cases;  // measured and rejected, in the order given
  std::vector<TensorSummary> tensors;

  int64_t rejected() const;
  // Every error/bound <= 1: within the rounding error the computation allows.
  bool within_bounds() const;
};

// Groups measured cases by kernel, implementation and dtype (in that order) and
// aggregates each group.
std::vector<ToleranceReport> tolerance_reports(const std::vector<CaseTolerance>& cases,
                                               const std::vector<double>& rtols);

// Measures every case and groups them.
std::vector<ToleranceReport> tolerance_reports(const std::vector<LabelledCase>& cases,
                                               const std::vector<double>& rtols);

bool within_bounds(const std::vector<ToleranceReport>& reports);

// A table per report and a reading guide.
std::string tolerance_markdown(const std::vector<ToleranceReport>& reports);
// The same numbers; non-finite ones as the strings "inf" / "nan", as verdict_to_json does.
nlohmann::json tolerance_json(const std::vector<ToleranceReport>& reports);

}  // namespace kprop
