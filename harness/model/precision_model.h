// Precision models: a small network around one kernel, computed three ways, so that a
// low-precision test failure can be told apart from rounding (docs/design.md §5).
//
// A kernel-level bound says how far one call may be from float64. A test of a whole
// module (projections through ATen matmuls around the kernel) compares the module's
// outputs and gradients, where the matmuls turn a one-ulp difference inside the kernel
// into a difference of thousands at the module's magnitudes. A model computes, for every
// tensor of its chain:
//   - the chain in the low dtype through the implementation under test,
//   - the same chain through the framework's policy implementation (what the module's
//     bf16 reference test compares against),
//   - the chain in float64 through the kernel's float64 reference,
//   - per element, a derived bound on |low-precision chain - float64 chain|: worst case
//     (gamma_K) and typical (lambda sqrt(K) u), propagated through the whole chain.
// harness/presentation/precision_report.h turns these into tables and verdicts. Models
// register themselves at load time, as kernels do; nothing under harness/ names one.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generators/case.h"
#include "harness/model/kernel.h"

namespace kprop {

// A named integer parameter of a model (a shape, a tiling hint).
struct ModelParam {
  std::string name;
  int64_t value = 0;  // default: the shape the model reproduces
  int64_t min = 1, max = 1;
  std::string meaning;
};

// How weights are drawn: plain randn (as many tests do), or scaled by 1/sqrt(fan_in) (as
// layers are initialized, so activations stay of order 1).
enum class WeightScale { unscaled, fan_in };
std::string to_string(WeightScale s);
std::optional<WeightScale> parse_weight_scale(const std::string& text);

// What one run computes with. The report resolves the implementations by name.
struct PrecisionSetup {
  Implementation impl;       // under test
  Implementation framework;  // the framework's rounding policy
  Implementation reference;  // float64
  std::map<std::string, int64_t> params;  // every parameter of the model
  WeightScale scale = WeightScale::unscaled;
  DType dtype = DType::bfloat16;
  uint64_t seed = 0;
  at::Device device = at::kCPU;  // where the framework's ops (matmuls) run
};

// One tensor of a chain, computed three ways, with its derived bounds.
struct ChainTensor {
  std::string name;   // "y", "dx", "c"
  std::string about;  // "output", "GEGLU forward output"
  // Produced by the kernel under test itself (where its own rounding shows first), not by
  // a framework op.
  bool kernel_output = false;
  int64_t reduction = 0;  // K of the matmul that produces it; 0 for element-wise ops
  at::Tensor impl, framework;  // the low dtype, on the CPU
  at::Tensor exact;            // the float64 chain
  // Per element, float64: |low-precision chain - float64 chain| <= bound (worst case,
  // gamma_K); `typical` is the size such an error usually has (lambda sqrt(K) u, lambda 1).
  at::Tensor bound, typical;
  // How its magnitude grows with the parameters: value ~ prod param^exponent. Lets a run
  // on a small shape say what the default shape will show.
  std::map<std::string, double> growth;
  // For a kernel output where the implementation differs from the framework: the rounding
  // point that explains every difference, as the kernel names it (Kernel::
  // rounding_point), or "" when it names none.
  std::string rounding_point;
  // For the kernel's own outputs: the kernel in float64 on the low-precision chain's own
  // inputs (the implementation and the framework get the same ones), and the bound of the
  // kernel's own roundings there. A defect of the kernel shows here even where the errors
  // its inputs carry from the matmuls dwarf it. Undefined for other tensors.
  at::Tensor local_exact, local_bound, local_typical;
};

struct ModelRun {
  std::vector<ChainTensor> tensors;  // in the order the chain computes them
  std::vector<std::pair<std::string, double>> seconds;  // wall time of each phase
};

class PrecisionModel {
 public:
  virtual ~PrecisionModel() = default;
  virtual std::string name() const = 0;
  virtual std::string about() const = 0;  // one line
  virtual std::string kernel() const = 0;  // whose implementations it runs
  virtual std::string framework_implementation() const = 0;
  virtual std::string reference_implementation() const { return "reference"; }
  virtual std::vector<ModelParam> params() const = 0;
  virtual std::vector<DType> dtypes() const = 0;  // the low dtypes it models
  // How the bound is derived, in a few sentences for the report.
  virtual std::string bound_model() const = 0;
  virtual ModelRun run(const PrecisionSetup& setup) const = 0;
};

bool register_precision_model(std::unique_ptr<PrecisionModel> model);
// Throws UsageError listing the known models.
const PrecisionModel& find_precision_model(const std::string& name);
std::vector<std::string> precision_model_names();  // sorted

// The model's defaults with `settings` ("name=value" or "a=1,b=2") applied. Throws
// UsageError naming the parameter: unknown, not an integer, or outside its range.
std::map<std::string, int64_t> model_params(const PrecisionModel& model,
                                            const std::vector<std::string>& settings);

// Throws UsageError naming the tensor when `elements` is more than one tensor may hold
// (generators/schema.h's max_elements(): 2^24, the default shape's largest, or
// KPROP_MAX_ELEMENTS).
void refuse_too_many_elements(const std::string& tensor, int64_t elements);

}  // namespace kprop
