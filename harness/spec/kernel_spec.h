// A kernel in one declaration (docs/design.md §8): what kprop must know about a kernel, said
// once, and compiled into the Kernel that every property reads (register_spec).
//
// From the declaration kprop derives what each kernel used to write by hand:
// - the boxed calls and the TORCH_LIBRARY registrations, from the operator schema strings
//   (arguments and returns are matched to inputs, cotangents, gradients and case
//   parameters by name);
// - the implementations' namespaces, from their names (`tiled@clamped` ->
//   `kprop_tiled_clamped`; the reference joins `kprop_reference`);
// - materializing a case (each present input drawn from its own stream of the seed, in
//   declaration order), the inputs with a gradient and the outputs with a cotangent;
// - the backward of the float64 reference, and of an implementation that gives none, by
//   libtorch autograd of its forward;
// - error bounds from declared structure (element-wise with k roundings, or a sum of K
//   terms over a named dimension), for every dtype and every joined partial;
// - the region of a failing element, by named dimension.
// What does not fit a structure stays a function of the spec (a hand-written bound, a
// region rule, a materializer): it replaces only its own part of the derivation.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generators/schema.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"

namespace kprop {

// The arguments of one operator call by name, as an implementation receives them: tensors
// under kprop's names ("x", "w", "h0"; cotangents "dy"), other arguments under the
// schema's names ("num_cores", "activation"). An absent optional tensor is undefined.
// The names are the operator signature's, resolved once: a call holds only its values (an
// implementation is called hundreds of times per case by `gradient`).
class OpArgs {
 public:
  OpArgs() = default;
  OpArgs(const std::vector<std::string>* names, std::vector<c10::IValue> values)
      : names_(names), values_(std::move(values)) {}

  at::Tensor operator[](const std::string& name) const;  // undefined when absent or None
  const c10::IValue& scalar(const std::string& name) const;  // std::out_of_range if unknown
  int64_t integer(const std::string& name) const { return scalar(name).toInt(); }
  double real(const std::string& name) const { return scalar(name).toDouble(); }
  bool flag(const std::string& name) const { return scalar(name).toBool(); }
  std::string text(const std::string& name) const { return scalar(name).toStringRef(); }
  // Sets (or replaces) the argument `name`.
  void set(const std::string& name, c10::IValue value);

 private:
  const c10::IValue* find(const std::string& name) const;

  const std::vector<std::string>* names_ = nullptr;  // the signature's, one per value
  std::vector<c10::IValue> values_;
  std::vector<std::pair<std::string, c10::IValue>> added_;  // set() beyond the signature
};

// One side of an implementation: its forward (inputs -> outputs) or its backward (inputs
// and cotangents -> gradients "d" + input), kprop's names in and out.
using OpFunction = std::function<NamedTensors(const OpArgs&)>;

// A dimension by name, its size from the case: "rows" is the parameter rows.
struct Dim {
  std::string name;
  std::function<int64_t(const Case&)> size;
};
// A dimension whose size is the integer parameter of the same name.
Dim param_dim(const std::string& name);

// An input of integer indices (TensorSpec::indices): int64 values in [0, the size of the
// dimension `below`), each one instead `special(case).value` with probability
// `special(case).percent` / 100 (a target's ignore_index; 100: every element).
struct SpecialIndex {
  int64_t value = 0;
  int percent = 0;
};
struct IndexDraw {
  std::string below;
  std::function<SpecialIndex(const Case&)> special;  // none when not given
};

// An input or an output of the kernel.
struct TensorSpec {
  std::string name;               // kprop's short name
  std::vector<std::string> dims;  // named dimensions, outermost first
  std::string argument;           // its name in the operator schemas; default: `name`
  // Present in a case (an optional input); default: always.
  std::function<bool(const Case&)> present;
  std::string flag;  // the flag parameter that makes it present (when_flag), if one does
  // What leaving it out means (`neutral`): a zero bias, a zero initial state.
  std::optional<double> neutral_value;
  bool differentiable = true;     // inputs: has a gradient; outputs: takes a cotangent
  // Inputs: int64 indices drawn by this rule instead of floating values from the case's
  // distribution; never converted to another dtype, no gradient (indices()).
  std::optional<IndexDraw> index_draw;
  // Inputs: computed from the case instead of drawn (the offsets of packed sequences from
  // their lengths); kept in its own dtype, no gradient, no stream of the seed.
  std::function<at::Tensor(const Case&)> compute;
  // Outputs: a 0-d tensor, not one of `dims`, in the cases where it holds (a loss reduced
  // by 'mean' or 'sum'); default: never.
  std::function<bool(const Case&)> scalar;
  // Outputs: takes a cotangent in this case (a final state only when its gradient is
  // asked for); default: whenever present and differentiable.
  std::function<bool(const Case&)> cotangent;

  // Storage orders its callers use, by name (Kernel::storage_orders): an output's
  // apply to its cotangent.
  std::vector<std::pair<std::string, std::vector<int64_t>>> storage_orders;

  TensorSpec(std::string name, std::vector<std::string> dims = {})
      : name(std::move(name)), dims(std::move(dims)) {}
  TensorSpec& as(std::string schema_name) { argument = std::move(schema_name); return *this; }
  TensorSpec& when(std::function<bool(const Case&)> f) { present = std::move(f); return *this; }
  TensorSpec& when_flag(const std::string& flag);
  TensorSpec& no_gradient() { differentiable = false; return *this; }
  // int64 indices in [0, the size of dimension `below`), a share of them `special`'s value
  // (harness/model/random_tensor.h: random_indices): a target of class indices, position ids.
  // They have no gradient and keep their dtype whatever the case's (float64 reference,
  // bf16); `layout` hands them strided, `guard` between margins of an index no tensor has.
  TensorSpec& indices(std::string below, std::function<SpecialIndex(const Case&)> special = {}) {
    index_draw = IndexDraw{std::move(below), std::move(special)};
    differentiable = false;
    return *this;
  }
  TensorSpec& computed(std::function<at::Tensor(const Case&)> f) {
    compute = std::move(f);
    differentiable = false;
    return *this;
  }
  // An output that is 0-d where `f` holds: `loss` [rows] for reduction='none', [] else.
  TensorSpec& scalar_when(std::function<bool(const Case&)> f) { scalar = std::move(f); return *this; }
  // Leaving it out equals passing it filled with `value` (an optional input, when_flag).
  TensorSpec& neutral(double value) { neutral_value = value; return *this; }
  // Also stored in dimension order `order`, outermost first: .stored_as("time-major", {1, 0, 2}).
  TensorSpec& stored_as(std::string layout, std::vector<int64_t> order) {
    storage_orders.emplace_back(std::move(layout), std::move(order));
    return *this;
  }
  TensorSpec& cotangent_when(std::function<bool(const Case&)> f) {
    cotangent = std::move(f);
    return *this;
  }
};

// The float64 tensors a bound is computed from: inputs and cotangents, the reference's
// outputs and gradients, by kprop's names; and the case.
struct Exact {
  const Case& c;
  NamedTensors tensors;
  at::Tensor operator[](const std::string& name) const { return tensors.get(name); }
  // An optional input the case leaves out as a float64 zero, so that a bound reads
  // |t s| + |b| whether or not there is a b.
  at::Tensor or_zero(const std::string& name) const {
    const at::Tensor t = tensors.get(name);
    return t.defined() ? t : at::zeros({}, at::kDouble);
  }
};
// Per element, the size of what a result is computed from (float64, the result's shape):
// what its rounding errors are proportional to. Default: |the exact result|.
using Magnitude = std::function<at::Tensor(const Exact&)>;
// Every result's at once, where one computation gives them all (a recurrence and its
// gradients): shared by the results' bounds, computed once per case.
using SharedMagnitudes = std::shared_ptr<const std::function<NamedTensors(const Exact&)>>;

// How a result is computed, for its derived bound (docs/design.md §5). Each computation a
// check compares is within its own bound; `rounded_partials` counts partial results stored
// in the output dtype on the way inside one call.
struct Bound {
  enum class Kind { elementwise, sum, framework } kind = Kind::elementwise;
  int roundings = 1;       // elementwise: roundings in the accumulation type
  std::string over;        // sum: the dimension summed over (K = its size) ...
  std::function<int64_t(const Case&)> terms;  // ... or K from the case
  int rounded_partials = 0;
  // rounded_partials as the case has them, where set (a loss summed over rows only when
  // reduced): replaces rounded_partials.
  std::function<int(const Case&)> partials;
  // Partial results rounded to the output dtype that the rest of the computation only
  // scales (a gradient stored, then multiplied by the cotangent): each adds u_out |value|,
  // not u_out |magnitude|, so that a result that cancels keeps a tight bound.
  int rounded_factors = 0;
  Magnitude magnitude;
  SharedMagnitudes shared;   // or the magnitude is result `of` of these
  std::string of;
  SharedMagnitudes local;    // framework: the last step's magnitudes (result `of`)

  // k roundings in the accumulation type, then one to the output dtype, with j partial
  // results rounded to the output dtype on the way (products of a kernel that computes
  // in bf16): (gamma_k (1 + u_out) + j u_out) |m| + u_out |value| + the output's smallest
  // normal.
  static Bound elementwise(int k, Magnitude m = {}, int rounded_partials = 0);
  // A sum of the dimension's size terms: sum_error_bound (harness/model/tolerance.h).
  static Bound sum_over(std::string dim, Magnitude m);
  static Bound sum_of(std::function<int64_t(const Case&)> k, Magnitude m, int rounded_partials = 0);
  // The framework-reference rule, where no model of the rounding bounds the error carried
  // through a long computation (docs/design.md §5): `distances` says how far the
  // framework's own computation in the case's dtype lies from float64, per element of each
  // result; an implementation may carry twice that, plus the rounding of the last step that
  // forms the result: a sum of `terms` terms whose |terms| are `local`'s (the step on exact
  // values), with the partials it declares (partials_when) rounded to the dtype on the way.
  static Bound framework_distance(SharedMagnitudes distances, std::string result,
                                  SharedMagnitudes local, std::function<int64_t(const Case&)> terms);
  Bound& partials_when(std::function<int(const Case&)> f) { partials = std::move(f); return *this; }
  Bound& scaled_after_rounding(int factors = 1) { rounded_factors = factors; return *this; }
  // The magnitude is `result` of `all`, computed once per case for every bound that reads it.
  Bound& magnitude_from(SharedMagnitudes all, std::string result) {
    shared = std::move(all);
    of = std::move(result);
    return *this;
  }
};

// Names the region of a failing element by its index along a named dimension, for every
// tensor that has that dimension (a gradient has its input's, a cotangent its output's).
struct RegionRule {
  std::string dim;
  std::function<std::string(const Case&, int64_t index)> name;

  // A dimension walked in blocks of `width`: "8-wide blocks" for the whole blocks, then
  // "last <element>" for its last index and "remainder" for the rest of a partial block.
  static RegionRule blocks(std::string dim, int64_t width, std::string element);
};

struct ImplementationSpec {
  std::string name;   // as the user writes it; the namespace is derived from it
  std::string about;
  // The backward, when left out: libtorch autograd of the forward (autograd_backward.h),
  // or of `differentiated` where the backward kernel computes another forward's gradient
  // (a forward variant that shares the backward kernel of the right one).
  OpFunction forward, backward, differentiated;
  std::optional<Takes> takes;  // what it takes (harness/execution/takes.h); default: every case

  ImplementationSpec(std::string name, std::string about, OpFunction forward,
                     OpFunction backward = {}, std::optional<Takes> takes = std::nullopt)
      : name(std::move(name)), about(std::move(about)), forward(std::move(forward)),
        backward(std::move(backward)), takes(std::move(takes)) {}
  ImplementationSpec& backward_by_autograd_of(OpFunction f) {
    differentiated = std::move(f);
    return *this;
  }
};

struct KernelSpec {
  explicit KernelSpec(std::string name = "") : name(std::move(name)) {}

  std::string name;
  // "<name>_fwd(...) -> ...", "<name>_bwd(...) -> ...". Left empty, both are derived: the
  // inputs (Tensor, or Tensor? when optional) and `operator_params`, returning the outputs;
  // the backward also takes each differentiable output's cotangent "d" + name and returns
  // each differentiable input's gradient.
  std::string forward_schema, backward_schema;
  std::vector<std::string> operator_params;
  // The parameters of its cases and the generator's limits: a Schema built elsewhere, or
  // declared here (`params`, `limits` with the limits its extents declare) and built by
  // compile_spec.
  const Schema* schema = nullptr;
  std::vector<ParamSpec> params;
  std::vector<Limit> limits;
  std::shared_ptr<const Schema> owned_schema;  // set by compile_spec from params
  std::vector<DType> dtypes{DType::float64, DType::float32, DType::bfloat16, DType::float16};
  std::vector<std::string> properties{"gradient", "vs_reference", "layout", "determinism", "guard",
                                     "neutral", "composition"};
  // Results that are sums whose order may follow the layout of what they sum (Kernel::
  // reordered_by_layout), or the tiling a code path takes: `layout` and `neutral` hold them
  // to the derived bound, the rest bit for bit.
  std::vector<std::string> reordered_by_layout;
  // Every implementation may return another rounding on each call (Kernel::
  // nondeterministic): `determinism` holds repeated calls to the derived bound.
  bool nondeterministic = false;
  // The reference, its bounds' magnitudes and any custom error_bounds are ATen operations
  // alone (no data_ptr, no host loop): the oracle may run on the implementation's device.
  bool oracle_runs_on_any_device = false;
  // Named dimensions; one that a tensor names and nobody declares is the integer parameter
  // of that name (param_dim).
  std::vector<Dim> dims;
  std::vector<TensorSpec> inputs, outputs;
  // Operator arguments that are neither tensors of the spec nor case parameters of the
  // same name, from the materialized problem.
  std::map<std::string, std::function<c10::IValue(const Problem&)>> arguments;

  // The oracle, in float64 (ATen ops on float64 tensors); its backward by autograd of
  // `reference` unless `reference_backward` is given.
  OpFunction reference, reference_backward;
  std::string reference_about = "float64 reference (oracle)";
  // How each output and gradient is computed by an implementation that accumulates in
  // fp32 (float64 for float64 inputs), for its derived bound.
  std::map<std::string, Bound> bounds;
  std::vector<RegionRule> regions;

  std::vector<ImplementationSpec> implementations;  // besides the reference
  std::string default_implementation;  // default: the first implementation (or the reference)
  std::vector<KnownDefect> known_defects;

  // What a kernel's inputs hold beyond independent draws, applied to the drawn inputs (in
  // the case's dtype) before anything sees them: cross_entropy's logits peaked at the
  // target. Shrinking needs nothing more: the inputs stay a function of the case.
  std::function<void(const Case&, NamedTensors& inputs)> relate_inputs;

  // What does not fit the derivations: each replaces its own part when set.
  // `materialize` draws the problem on the device it is given wherever the drawing gives
  // the host's bits there (random_tensor); a tensor it leaves on the CPU is copied over.
  std::function<Problem(const Case&, const c10::Device&)> materialize;
  std::function<NamedTensors(const Problem&, const NamedTensors& cotangents,
                             const NamedTensors& reference, const std::vector<int>& joined)>
      error_bounds;
  std::function<std::string(const Problem&, const std::string& tensor, int64_t flat)> region;
  std::function<std::optional<std::string>(const Case&, const std::string& impl)> refusal;

  // Optional families (harness/model/kernel.h).
  std::function<std::optional<Case>(const Case&)> retiled;
  const SequenceFamily* sequences = nullptr;
  std::optional<std::string> policy_implementation;
  std::function<std::string(const Problem&, const NamedTensors&, const std::string&,
                            const at::Tensor&, const at::Tensor&)>
      rounding_point;
  std::function<std::vector<EquivalentCase>(const Case&)> equivalent_cases;
};

// `kprop_` + the name with every character that is not a letter or digit as '_'; the
// reference is `kprop_reference`.
std::string implementation_namespace(const std::string& implementation);

// Checks the declaration (a bad one is kprop's usage error naming the kernel and the
// field), registers the operators of the reference and of every implementation, and
// registers the kernel. False when a kernel of that name is registered already.
bool register_spec(KernelSpec spec);

// register_spec for a kernel built into a program or a plugin, at load time: a bad
// declaration prints its message and exits with 2.
bool register_builtin_spec(KernelSpec spec);

// The Kernel a spec compiles into, without registering anything (for tests).
std::unique_ptr<Kernel> compile_spec(KernelSpec spec);

}  // namespace kprop
