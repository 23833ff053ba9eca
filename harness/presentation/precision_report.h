// The precision report: for every tensor of a precision model's chain
// (harness/model/precision_model.h), how the implementation's low-precision chain differs from
// the framework's (what a module's bf16 test compares) and how each differs from float64,
// in the numbers a reviewer asks for — max |diff|, the magnitude there, that diff in ulps,
// the smallest atol a `torch.testing`-style check would need — beside the derived bound,
// and a verdict with its reason in one sentence.
//
// Verdicts, per tensor, in this order, each judged against the float64 chain and, for the
// kernel's own outputs, also against the kernel in float64 on the chain's own inputs:
//   bound_broken    the framework's own chain is outside the derived bound: the machine's
//                   arithmetic is not what the bound models; nothing can be concluded
//   bit_exact       the implementation's chain equals the framework's, bit for bit
//   outside_bound   the implementation is farther from float64 than the bound allows
//   farther         within the bound, but more than 2x as far from float64 as the
//                   framework's own chain (docs/design.md §5), in error/bound
//   rounding        differs from the framework, both within the bound, and no more than
//                   2x as far from float64: rounding, not a bug
#pragma once

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/precision_model.h"

namespace kprop {

// The spacing of `dtype`'s values at magnitude m: 2^(floor(log2 m) - mantissa bits),
// the subnormal spacing below the smallest normal.
double ulp_at(double magnitude, at::ScalarType dtype);

// How `actual` differs from `expected` (same shape), and how that compares with a bound.
struct Comparison {
  int64_t elements = 0;
  int64_t differing = 0;       // elements that are not equal (NaN equals NaN)
  double max_abs = 0;          // max |actual - expected|
  std::vector<int64_t> index;  // where (the first such element)
  double magnitude = 0;        // |expected| there
  // That difference in ulps of the low dtype at the smaller of the two magnitudes: two
  // neighbouring low-precision values are 1 ulp apart even across a power of two.
  double ulps = 0;
  // The largest difference in ulps over the elements whose values are normal and not
  // within 2^24 of fp32's underflow, where it is, and |expected| there.
  double max_ulps = 0;
  std::vector<int64_t> max_ulps_index;
  double max_ulps_magnitude = 0;
  // atol[i]: the smallest atol with |actual - expected| <= atol + rtols[i] |expected|
  // for every element (harness/presentation/tolerance_report.h's smallest_atol).
  std::vector<double> atol;
  double bound_there = 0, typical_there = 0;  // the bounds at `index`
  // max over elements of |actual - expected| / bound (worst case) and / typical.
  double error_over_bound = 0, error_over_typical = 0;
  std::vector<int64_t> worst_index;  // of error/bound
};

// Compares element by element. `bound` and `typical` are float64 tensors of the same
// shape (a NaN or infinite difference has an infinite error/bound).
Comparison compare_precision(const at::Tensor& actual, const at::Tensor& expected,
                             const at::Tensor& bound, const at::Tensor& typical,
                             const std::vector<double>& rtols, at::ScalarType low);

enum class PrecisionVerdict { bound_broken, bit_exact, outside_bound, farther, rounding };
std::string to_string(PrecisionVerdict v);

// One tensor of the chain.
struct TensorPrecision {
  std::string name, about;
  bool kernel_output = false;
  int64_t reduction = 0;
  int64_t elements = 0;
  double max_exact = 0;  // max |float64 value|
  std::map<std::string, double> growth;
  std::string rounding_point;  // ChainTensor::rounding_point
  // impl vs framework is judged against the sum of the two chains' bounds (each is
  // within its own bound of float64).
  Comparison vs_framework, impl_vs_exact, framework_vs_exact;
  // The kernel's own outputs only: each chain vs the kernel in float64 on the chain's own
  // inputs, judged by the bound of the kernel's own roundings (ChainTensor::local_exact).
  bool has_local = false;
  Comparison impl_vs_local, framework_vs_local;
  PrecisionVerdict verdict = PrecisionVerdict::rounding;
  std::string reason;  // one sentence
};

// The rule of docs/design.md §5: no more than this many times as far from float64 as the
// framework's own low-precision chain (measured in error/bound).
constexpr double kFartherThanFramework = 2.0;

PrecisionVerdict judge(const TensorPrecision& t);
// The verdict's sentence; `check_command` is what finds the minimal case.
std::string verdict_reason(const TensorPrecision& t, DType low,
                           const std::string& check_command);

struct PrecisionReport {
  std::string model, about, kernel, impl, framework, reference;
  std::vector<ModelParam> params;  // the model's, with their defaults
  std::map<std::string, int64_t> values;  // this run's
  WeightScale scale = WeightScale::unscaled;
  DType dtype = DType::bfloat16;
  uint64_t seed = 0;
  std::string device;
  // How the framework's low-dtype matmuls accumulate there, when not in fp32 (probed):
  // " (its bfloat16 matmuls accumulate in bfloat16, ...)"; empty otherwise.
  std::string device_note;
  int threads = 0;
  std::vector<double> rtols;
  std::string bound_model;
  std::vector<TensorPrecision> tensors;  // in the chain's order
  std::vector<std::pair<std::string, double>> seconds;  // phases of the model, then "report"
  double total_seconds = 0;  // wall
  double cpu_seconds = 0;    // of the process, all threads

  // Every verdict is bit_exact or rounding.
  bool passed() const;
  // The first tensor of the chain where the implementation differs from the framework.
  const TensorPrecision* first_deviation() const;
  // Product over the parameters of (default / this run's)^exponent: how much larger the
  // tensor's values are expected to be at the model's default shape.
  double growth_to_default(const TensorPrecision& t) const;
};

// Judges a model's run. Fills every field but the ones describing the setup.
void judge_run(PrecisionReport& report, const ModelRun& run);

// Runs the model and judges it.
PrecisionReport precision_report(const PrecisionModel& model, const PrecisionSetup& setup,
                                 const std::vector<double>& rtols, int threads);

std::string precision_markdown(const PrecisionReport& r);
nlohmann::json precision_json(const PrecisionReport& r);

}  // namespace kprop
