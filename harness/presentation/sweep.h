// A sweep: one metric over a grid of two case parameters, e.g. how far a gradient's norm is
// from the reference's for each window size and sequence length — the table kernel
// engineers otherwise build by hand. Every cell is the base case with the x and y values
// set.
//
// Axes are written NAME=VALUES, where NAME is a case parameter or a derived name (see
// settable_names in generators/schema.h) and VALUES is a comma list of items, each a value
// (`2`, `bfloat16`), a linear range `a..b` or `a..b:step`, or a geometric range
// `a..b*factor` (16..384*2 = 16,32,...,256; b is included only when it is hit).
//
// Metrics:
//   verdict                 the property's verdict: pass / fail / rejected / skipped
//   error_over_bound:T      the largest error/bound of tensor T in the verdict's rows
//   ratio:T                 |T| of the implementation over |T| of the float64 reference
//                           (Frobenius norms, same inputs and cotangents)
//   chunked_ratio:T         |T| of the chunked run (state handed on, loss on the later
//                           part, as the `chunked` property) over |T| of the whole run
// The ratio metrics run the case in its own dtype and do not evaluate the property.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "generators/case.h"
#include "generators/schema.h"
#include "harness/presentation/svg_heatmap.h"

namespace kprop {

struct Axis {
  std::string name;                 // a case parameter or a derived name
  std::vector<std::string> values;  // each as set_param reads it
};

// Parses "NAME=VALUES"; throws UsageError naming the axis.
Axis parse_axis(const std::string& kernel, const std::string& spec);

struct Metric {
  enum class Kind { verdict, error_over_bound, ratio, chunked_ratio };
  Kind kind = Kind::verdict;
  std::string tensor;  // empty for verdict
  std::string name() const;  // as written: "ratio:TENSOR"
};

// Parses "verdict", "ratio:TENSOR", ...; throws UsageError listing the metrics.
Metric parse_metric(const std::string& spec);

// One cell of the grid: a number, or a status with the reason in `detail`.
struct SweepCell {
  enum class Kind { number, pass, fail, rejected, skipped, not_applicable, invalid };
  Kind kind = Kind::not_applicable;
  double value = NAN;  // for Kind::number
  // fail: the signature; rejected: the refusal; skipped / not_applicable / invalid: why.
  std::string detail;
  std::string label() const;  // "2.5", "pass", "fail", "rejected", "n/a", ...
};

std::string to_string(SweepCell::Kind kind);

struct SweepSpec {
  std::string kernel;  // empty: the registry's default
  std::string impl;    // empty: the kernel's default implementation
  std::string property = "vs_reference";
  Axis x, y;
  std::vector<std::string> set;  // NAME=VALUE, applied to the base case in order
  Metric metric;
  uint64_t seed = 0;             // the base case's data seed
};

struct SweepResult {
  SweepSpec spec;
  // Parameters that are the same in every cell, as fixed_parameters() shows them.
  std::vector<std::pair<std::string, std::string>> fixed;
  std::vector<std::vector<SweepCell>> cells;  // [y index][x index]
  double seconds = 0;

  const SweepCell& at(size_t x_index, size_t y_index) const { return cells[y_index][x_index]; }
};

// The case every cell starts from: kernel, impl, property and seed from the spec, then
// the `set` overrides. Throws UsageError / CaseError on a bad override.
Case base_case(const SweepSpec& spec);

// What the sweep of `spec` from `base` shows as fixed, in settable_names() order: every
// name with a value except impl and property (the title says them), the axes, the derived
// names (the parameters they set say it all), and the parameters an axis varies: those it
// sets, itself or through a derived name, and the lists with one entry per entry of a
// varied list (ListRule::same_count_as; fit() resizes and clamps them along). A list of
// several entries that derived axes set some entries of is shown with those entries
// named by their axis, in the order the schema declares the derived names: the base case
// 1,7 swept along `tail` (ListEntries::last) is "1,tail".
std::vector<std::pair<std::string, std::string>> fixed_parameters(const Schema& schema,
                                                                  const SweepSpec& spec,
                                                                  const Case& base);

// The case of cell (x value, y value): x is set first, then y.
Case cell_case(const Case& base, const Axis& x, size_t x_index, const Axis& y, size_t y_index);

// Measures one case. An impossible case is an `invalid` cell, a refusal a `rejected` one.
SweepCell measure(const Case& c, const Metric& metric);

// Runs the grid row by row; `on_cell(done, total, cell)` after every cell. Checks the
// kernel, implementation, property and every axis value before the first cell runs.
SweepResult run_sweep_grid(
    const SweepSpec& spec,
    const std::function<void(size_t done, size_t total, const SweepCell& cell)>& on_cell = {});

// Renderings: a Markdown table (rows = y values, columns = x values) with its title and
// notes for failures and refusals; JSON; and a heatmap for render_svg.
std::string to_markdown(const SweepResult& result);
nlohmann::json to_json(const SweepResult& result);
Heatmap to_heatmap(const SweepResult& result);

}  // namespace kprop
