// KernelInfo: everything kprop knows about one kernel, in one place (as PyTorch's OpInfo).
//
// Properties are generic: they ask the KernelInfo to draw and materialize cases, to call
// an implementation's forward and backward, for the derived error bound of each output,
// and — for the metamorphic properties — how to split a call in two with the state
// handed on, or how to run packed sequences one by one. A kernel that cannot do one of
// these says so (`std::nullopt`), and the property does not apply.
#pragma once

#include <rapidcheck/Shrinkable.h>

#include <optional>
#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/causal_conv1d.h"
#include "harness/named_tensors.h"

namespace kprop {

// Naming: inputs and outputs have short names ("x", "w", "h0"; "y", "ht"); a gradient or
// cotangent is "d" + the name it belongs to ("dx", "dh0"; "dy", "dht").
inline std::string grad_name(const std::string& name) { return "d" + name; }

// One materialized call: the case and its input tensors, in the case's dtype.
struct Problem {
  Case c;
  NamedTensors inputs;
};

// A call split in two: `second` continues where `first` stops; its state input is filled
// from `first`'s outputs by KernelInfo::hand_on.
struct ChunkedProblem {
  Problem whole, first, second;
};

class KernelInfo {
 public:
  virtual ~KernelInfo() = default;

  virtual std::string name() const = 0;
  virtual std::vector<DType> dtypes() const = 0;
  virtual std::vector<std::string> properties() const = 0;

  // Generation: a deterministic shrinkable draw, and the tensors of a case (from its seed).
  virtual rc::Shrinkable<Case> draw(const CaseSpace& space, uint64_t seed, int size) const = 0;
  virtual Problem materialize(const Case& c) const = 0;
  // The same call in another dtype (inputs converted; integer inputs kept).
  Problem in_dtype(const Problem& p, DType dtype) const;

  // Calls through the dispatcher. `op_namespace` names the implementation.
  virtual NamedTensors forward(const std::string& op_namespace, const Problem& p) const = 0;
  // Gradients are named grad_name(input): "dx", "dw", ...
  virtual NamedTensors backward(const std::string& op_namespace, const Problem& p,
                                const NamedTensors& cotangents) const = 0;

  // Inputs with a gradient, and outputs that receive a cotangent in this problem.
  virtual std::vector<std::string> differentiable_inputs(const Problem& p) const = 0;
  virtual std::vector<std::string> outputs_with_cotangent(const Problem& p) const = 0;

  // Per element, a bound on |implementation - exact| for an implementation that computes
  // `p` in its dtype as the kernel's numerics policy says (DESIGN.md §5). `reference`
  // holds the float64 reference outputs and gradients for `cotangents`.
  // `joined_partials` has one entry per computation that a check compares: how many
  // partial results it rounded to the output dtype and summed outside the kernel (0 for
  // one call, 1 when a metamorphic relation joins the results of several calls). Each
  // computation is within its own bound of the exact result, so the bounds add up:
  // {0} for implementation vs exact, {0, 0} for two tilings, {0, 1} for whole vs joined.
  virtual NamedTensors error_bounds(const Problem& p, const NamedTensors& cotangents,
                                    const NamedTensors& reference,
                                    const std::vector<int>& joined_partials) const = 0;

  // Where in a tensor an element lies, for signatures ("dh0", "dweight head taps").
  virtual std::string region(const Problem& p, const std::string& tensor,
                             int64_t flat_index) const = 0;

  // Metamorphic structure; std::nullopt where it does not apply to this problem.
  virtual std::optional<ChunkedProblem> split(const Problem& whole) const = 0;
  // Hands first's final state on as second's initial state.
  virtual void hand_on(ChunkedProblem& chunked, const NamedTensors& first_outputs) const = 0;
  // Cotangents of the whole call that touch only what `second` computes.
  virtual NamedTensors later_part_only(const ChunkedProblem& chunked,
                                       const NamedTensors& whole_cotangents) const = 0;
  // Cotangents of `second` from the whole's; of `first` from the whole's and second's grads.
  virtual NamedTensors second_cotangents(const ChunkedProblem& chunked,
                                         const NamedTensors& whole_cotangents) const = 0;
  virtual NamedTensors first_cotangents(const ChunkedProblem& chunked,
                                        const NamedTensors& whole_cotangents,
                                        const NamedTensors& second_grads) const = 0;
  // Outputs (or gradients) of the two parts in the whole call's layout.
  virtual NamedTensors join_outputs(const ChunkedProblem& chunked, const NamedTensors& first,
                                    const NamedTensors& second) const = 0;
  virtual NamedTensors join_grads(const ChunkedProblem& chunked, const NamedTensors& first,
                                  const NamedTensors& second) const = 0;

  // Packed sequences as separate calls, and the way back to the packed layout.
  virtual std::optional<std::vector<Problem>> separate(const Problem& packed) const = 0;
  virtual NamedTensors join_separate_outputs(const Problem& packed,
                                             const std::vector<NamedTensors>& parts) const = 0;
  virtual NamedTensors join_separate_grads(const Problem& packed,
                                           const std::vector<NamedTensors>& parts) const = 0;
  // The cotangents of part i of a separated problem.
  virtual NamedTensors separate_cotangents(const Problem& packed, size_t part,
                                           const NamedTensors& cotangents) const = 0;
};

// Registry of kernels by name.
const KernelInfo& find_kernel(const std::string& name);  // throws UsageError listing known ones
std::vector<std::string> kernel_names();

}  // namespace kprop
