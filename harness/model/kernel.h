// Kernel: everything kprop knows about one kernel, in one place (as PyTorch's OpInfo).
//
// Properties are generic: they ask the Kernel for its schema (which generates, validates
// and shrinks cases), to materialize a case's tensors, to call an implementation's forward
// and backward, and for the derived error bound of each output. A Kernel is compiled from
// a declaration (harness/spec/kernel_spec.h): its facts are data, resolved once, and what
// it does per case are the functions the compiler derived. What only some kernels have is
// an optional family: a kernel with packed sequences and a state handed from call to call
// has a SequenceFamily (harness/model/sequence_family.h); one without it (an element-wise
// kernel) simply skips the properties that need it. Kernels register themselves at load
// time (register_kernel), as properties do.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generators/case.h"
#include "generators/schema.h"
#include "harness/model/named_tensors.h"

namespace kprop {

class SequenceFamily;

// Naming: inputs and outputs have short names ("x", "w", "h0"; "y", "ht"); a gradient or
// cotangent is "d" + the name it belongs to ("dx", "dh0"; "dy", "dht").
inline std::string grad_name(const std::string& name) { return "d" + name; }

// One materialized call: the case and its input tensors, in the case's dtype.
struct Problem {
  Case c;
  NamedTensors inputs;
};

// An implementation by name: an operator pair `<op_namespace>::<kernel>_fwd/_bwd`.
struct Implementation {
  std::string name;          // as the user writes it
  std::string op_namespace;  // where its operators live
  std::string about;
};

// A defect kprop knows, as a predicate on a minimal failure: which implementations have
// it, which property hunts it, the symptom it shows and the shape of its minimal case.
// Detection tests, the benchmark, `kprop hunt` and the corpus share this one list.
struct KnownDefect {
  std::string name;                // e.g. "dh0 over-count"
  std::string summary;             // what goes wrong and why, in one sentence
  std::vector<std::string> impls;  // implementations that have it
  std::string property;            // the property that hunts it
  std::map<std::string, int64_t> limits;  // a tighter space where that isolates it
  bool reported_upstream = true;   // false: first found by kprop
  std::string symptom;             // e.g. "dh0 [sequence shorter than W]" (harness/model/identity.h)
  // Does a minimal case that shows `symptom` have this defect's shape?
  std::function<bool(const Case& minimal)> shape;
  // The shape as parameter values, "rows=1 cols=7 bias=false": a kernel spec checks them
  // against its schema and compiles them into `shape` (the minimal case has exactly these).
  std::string shape_values;

  // Named fields for declarations: defect("bias added twice").in({"toy@bias"})...
  KnownDefect& because(std::string s) { summary = std::move(s); return *this; }
  KnownDefect& in(std::vector<std::string> i) { impls = std::move(i); return *this; }
  KnownDefect& hunted_by(std::string p) { property = std::move(p); return *this; }
  KnownDefect& within(std::map<std::string, int64_t> l) { limits = std::move(l); return *this; }
  KnownDefect& first_found_by_kprop() { reported_upstream = false; return *this; }
  KnownDefect& shows(std::string s) { symptom = std::move(s); return *this; }
  KnownDefect& when(std::function<bool(const Case&)> f) { shape = std::move(f); return *this; }
  KnownDefect& when(std::string values) { shape_values = std::move(values); return *this; }
};
inline KnownDefect defect(std::string name) {
  KnownDefect d;
  d.name = std::move(name);
  return d;
}

// A case that must give bit-identical results to another: the same inputs on other
// hardware or in another memory layout. `varies` names what differs, in words that hold no
// number of the case (it is part of a symptom): "num_cores", "layout".
struct EquivalentCase {
  std::string varies;
  Case c;
};

// A layout a tensor of the kernel is stored in by real callers, beyond those `layout` tries
// for every tensor (harness/execution/layout_variants.h): x [B, T, D] kept time-major, as a model
// that runs [T, B, D] hands it ("time-major", order {1, 0, 2}, outermost first).
struct StorageOrder {
  std::string tensor;
  std::string name;
  std::vector<int64_t> order;
};

// An optional input that the flag parameter `flag` leaves out, and the value that leaving it
// out equals: `neutral` compares the two calls.
struct NeutralInput {
  std::string tensor;  // "b"
  std::string flag;    // "bias"
  double value;        // 0
};

struct KernelSpec;  // harness/spec/kernel_spec.h: the declaration a Kernel is compiled from

// What a kernel is, as data: resolved once when its declaration is compiled.
struct KernelFacts {
  std::string name;
  // The schema strings of its operators `<ns>::<kernel>_fwd` and `_bwd`, for a library that
  // registers an implementation of its own (the one place they are written).
  std::pair<std::string, std::string> operator_schemas;
  std::vector<DType> dtypes;
  std::vector<std::string> properties;
  // Built-in implementations, the float64 reference first; the default one to test.
  std::vector<Implementation> implementations;
  std::string default_implementation;
  // The parameters of its cases and how to draw and shrink them.
  const Schema* schema = nullptr;
  // Every tensor an implementation can be handed, by kprop's name: the inputs, then the
  // cotangents ("dy"), for declarations to be checked against; empty: not checked.
  std::vector<std::string> handed_tensor_names;
  // Storage orders its callers use (`layout` hands its tensors in each).
  std::vector<StorageOrder> storage_orders;
  // The results ("db") that are sums whose order may follow the strides of what they sum
  // (ATen's reductions do) or the tiling a code path takes: `layout` and `neutral` hold
  // them to the derived bound instead of bit-identity. An implementation may say so of all
  // its results alone (Takes).
  std::vector<std::string> reordered_by_layout;
  // The integer inputs that hold indices (token ids, offsets): `layout` hands them in
  // other strides too, and `guard` surrounds them with an index no tensor has.
  std::vector<std::string> index_inputs;
  // True when every implementation may return another rounding on every call (atomics):
  // `determinism` then holds repeated calls to the derived bound instead of bit-identity.
  // An implementation may say so alone (Takes::nondeterministic).
  bool nondeterministic = false;
  // True when the float64 oracle (reference forward and backward, error_bounds, region)
  // is ATen operations alone and so runs on any device: `--oracle-device` may then put
  // it beside the implementation (harness/execution/device.h). False keeps it on the CPU.
  bool oracle_runs_on_any_device = false;
  // Optional inputs whose absence means a value (`neutral`): no bias is a zero bias.
  std::vector<NeutralInput> neutral_inputs;
  // Packed sequences and state handed on; nullptr for kernels without them.
  const SequenceFamily* sequences = nullptr;
  std::vector<KnownDefect> known_defects;
  // The built-in implementation whose rounding points are the framework's numerics policy
  // (e.g. "torch_policy"): `policy` holds every implementation to it bit for bit.
  // std::nullopt: the kernel declares none, and `policy` skips it.
  std::optional<std::string> policy_implementation;
};

// What a kernel does with a case, as the functions its declaration compiled into. The
// optional ones may be empty: the Kernel then answers as the comment of its accessor says.
struct KernelOperations {
  // The tensors of a case, from its seed, on `device`: drawn there where the kernel can
  // (harness/model/random_tensor.h), else drawn on the CPU and copied, each in its layout.
  std::function<Problem(const Case&, const c10::Device&)> materialize;
  // Calls through the dispatcher. `op_namespace` names the implementation. Gradients are
  // named grad_name(input): "dx", "dw", ...
  std::function<NamedTensors(const std::string& op_namespace, const Problem&)> forward;
  std::function<NamedTensors(const std::string& op_namespace, const Problem&,
                             const NamedTensors& cotangents)>
      backward;
  // Inputs with a gradient, and outputs that receive a cotangent in this problem.
  std::function<std::vector<std::string>(const Problem&)> differentiable_inputs;
  std::function<std::vector<std::string>(const Problem&)> outputs_with_cotangent;
  // Per element, a bound on |implementation - exact| for an implementation that computes
  // `p` in its dtype as the kernel's numerics policy says (docs/design.md §5). `reference`
  // holds the float64 reference outputs and gradients for `cotangents`.
  // `joined_partials` has one entry per computation that a check compares: how many
  // partial results it rounded to the output dtype and summed outside the kernel (0 for
  // one call, 1 when a metamorphic relation joins the results of several calls). Each
  // computation is within its own bound of the exact result, so the bounds add up:
  // {0} for implementation vs exact, {0, 0} for two tilings, {0, 1} for whole vs joined.
  std::function<NamedTensors(const Problem&, const NamedTensors& cotangents,
                             const NamedTensors& reference, const std::vector<int>& joined_partials)>
      error_bounds;
  // Where in a tensor an element lies, for signatures ("dh0", "dweight head taps").
  std::function<std::string(const Problem&, const std::string& tensor, int64_t flat_index)> region;
  // The same case on other hardware (another core count): results must not change.
  // Empty, or std::nullopt: a kernel without tiling hints.
  std::function<std::optional<Case>(const Case&)> retiled;
  // Where tensor `tensor` of an implementation (`actual`) rounds differently from the
  // policy implementation (`policy`) on problem p: the name of the rounding point that
  // explains every element that differs ("product from the fp32 gelu"), or "" when the
  // kernel knows none. Names hold no number of the case: they are part of the symptom.
  std::function<std::string(const Problem&, const NamedTensors& cotangents,
                            const std::string& tensor, const at::Tensor& actual,
                            const at::Tensor& policy)>
      rounding_point;
  // Cases on which an implementation must give exactly the results it gives on `c` (an
  // element-wise kernel owes bit-exactness across tilings and layouts): `invariance`
  // compares them bit for bit. Empty: the kernel declares none, and `invariance` skips it.
  std::function<std::vector<EquivalentCase>(const Case&)> equivalent_cases;
  // Why built-in implementation `impl` may refuse case `c`, as the text its error holds
  // ("D must be divisible by BD"), as PyTorch's OpInfo declares error_inputs. An error of
  // a built-in implementation whose message does not hold the declared text is a failure
  // (harness/engine/property.h); std::nullopt: the case is supported, every error is a failure.
  std::function<std::optional<std::string>(const Case&, const std::string& impl)> refusal;
};

// One kernel: its facts and operations, and the declaration they were compiled from.
class Kernel {
 public:
  Kernel(KernelFacts facts, KernelOperations operations,
         std::shared_ptr<const KernelSpec> declaration)
      : facts_(std::move(facts)),
        operations_(std::move(operations)),
        declaration_(std::move(declaration)) {}

  const std::string& name() const { return facts_.name; }
  const std::pair<std::string, std::string>& operator_schemas() const {
    return facts_.operator_schemas;
  }
  const std::vector<DType>& dtypes() const { return facts_.dtypes; }
  const std::vector<std::string>& properties() const { return facts_.properties; }
  const std::vector<Implementation>& implementations() const { return facts_.implementations; }
  const std::string& default_implementation() const { return facts_.default_implementation; }
  const Schema& schema() const { return *facts_.schema; }
  const std::vector<std::string>& handed_tensor_names() const { return facts_.handed_tensor_names; }
  const std::vector<StorageOrder>& storage_orders() const { return facts_.storage_orders; }
  const std::vector<std::string>& reordered_by_layout() const { return facts_.reordered_by_layout; }
  const std::vector<std::string>& index_inputs() const { return facts_.index_inputs; }
  bool nondeterministic() const { return facts_.nondeterministic; }
  bool oracle_runs_on_any_device() const { return facts_.oracle_runs_on_any_device; }
  const std::vector<NeutralInput>& neutral_inputs() const { return facts_.neutral_inputs; }
  const SequenceFamily* sequences() const { return facts_.sequences; }
  const std::vector<KnownDefect>& known_defects() const { return facts_.known_defects; }
  const std::optional<std::string>& policy_implementation() const {
    return facts_.policy_implementation;
  }
  // The declaration it was compiled from (harness/spec/kernel_spec.h).
  const KernelSpec& declaration() const { return *declaration_; }

  Problem materialize(const Case& c) const { return operations_.materialize(c, c10::kCPU); }
  Problem materialize_on(const Case& c, const c10::Device& device) const {
    return operations_.materialize(c, device);
  }
  // The same call in another dtype (inputs converted; integer inputs kept).
  static Problem in_dtype(const Problem& p, DType dtype);

  NamedTensors forward(const std::string& op_namespace, const Problem& p) const {
    return operations_.forward(op_namespace, p);
  }
  NamedTensors backward(const std::string& op_namespace, const Problem& p,
                        const NamedTensors& cotangents) const {
    return operations_.backward(op_namespace, p, cotangents);
  }
  std::vector<std::string> differentiable_inputs(const Problem& p) const {
    return operations_.differentiable_inputs(p);
  }
  std::vector<std::string> outputs_with_cotangent(const Problem& p) const {
    return operations_.outputs_with_cotangent(p);
  }
  NamedTensors error_bounds(const Problem& p, const NamedTensors& cotangents,
                            const NamedTensors& reference,
                            const std::vector<int>& joined_partials) const {
    return operations_.error_bounds(p, cotangents, reference, joined_partials);
  }
  std::string region(const Problem& p, const std::string& tensor, int64_t flat_index) const {
    return operations_.region(p, tensor, flat_index);
  }
  std::optional<Case> retiled(const Case& c) const {
    return operations_.retiled ? operations_.retiled(c) : std::nullopt;
  }
  std::string rounding_point(const Problem& p, const NamedTensors& cotangents,
                             const std::string& tensor, const at::Tensor& actual,
                             const at::Tensor& policy) const {
    return operations_.rounding_point
               ? operations_.rounding_point(p, cotangents, tensor, actual, policy)
               : "";
  }
  std::vector<EquivalentCase> equivalent_cases(const Case& c) const {
    return operations_.equivalent_cases ? operations_.equivalent_cases(c)
                                        : std::vector<EquivalentCase>{};
  }
  std::optional<std::string> refusal(const Case& c, const std::string& impl) const {
    return operations_.refusal ? operations_.refusal(c, impl) : std::nullopt;
  }

 private:
  KernelFacts facts_;
  KernelOperations operations_;
  std::shared_ptr<const KernelSpec> declaration_;
};

// Registry of kernels by name; each kernel registers itself at load time.
bool register_kernel(std::unique_ptr<Kernel> kernel);
const Kernel& find_kernel(const std::string& name);  // throws UsageError listing known ones
std::vector<std::string> kernel_names();                 // sorted
std::string default_kernel();                            // the first of kernel_names()

}  // namespace kprop
