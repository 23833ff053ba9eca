// What every property does around its comparisons: call the implementation under test
// and the reference, draw cotangents, merge and scale tensor sets.
#pragma once

#include <optional>
#include <vector>

#include "harness/engine/property.h"

namespace kprop {

// Calls one implementation (and the reference) of a kernel, folding into the verdict what
// the device memory checker reports for the implementation under test and every tensor it
// handed back changed (harness/engine/properties/handed_tensors.h).
class Calls {
 public:
  Calls(const Kernel& kernel, const Implementation& impl, Verdict& verdict);

  // Hands every tensor as it is: no copy of a tensor it declares it writes over, none of a
  // tensor already on its device, no watch. `composition` lets a graph see what the
  // implementation did to the buffers the graph shares with it.
  void hand_as_given() { as_given_ = true; }

  // c's problem on the oracle's device (harness/execution/device.h: the kernel's oracle
  // there, or the CPU), drawn there (Kernel::materialize_on); from then on the results
  // of forward and backward come back there, not to the CPU.
  Problem materialized_on_oracle_device(const Case& c);

  NamedTensors forward(const Problem& p) const;
  NamedTensors backward(const Problem& p, const NamedTensors& cotangents) const;
  // The float64 reference's outputs and gradients: the problem and the cotangents are
  // converted to float64 first. Computed once per problem and cotangents (see below).
  NamedTensors reference(const Problem& p, const NamedTensors& cotangents) const;
  // The derived bound between two computations of p's results with `cotangents` (each
  // within its own bound of the float64 reference): what two calls that may sum in another
  // order may differ by. Computed once per problem and cotangents.
  NamedTensors bounds_between_two(const Problem& p, const NamedTensors& cotangents) const;

 private:
  // A problem and cotangents asked about, with what was computed for them. A property asks
  // again for the same pair (layout: the bound once per layout variant it tries), and the
  // reference and its bounds are the costliest part of a case: computed once, kept while
  // the tensors are the same ones, unchanged (the same values, for a cotangent).
  struct Remembered {
    Problem problem;
    NamedTensors cotangents;
    NamedTensors reference;
    std::optional<NamedTensors> bounds_between_two;
    std::vector<int64_t> versions;  // of every tensor above, when remembered
  };
  Remembered& remembered(const Problem& p, const NamedTensors& cotangents) const;
  void collect_memory_findings() const;
  // Calls `call` with `p` and `cotangents` as handed, and records each of them it changed.
  template <typename F>
  NamedTensors watching(const std::string& side, const Problem& p, const NamedTensors& cotangents,
                        F call) const;
  const Kernel& kernel_;
  const Implementation& impl_;
  Verdict& verdict_;
  std::vector<std::string> overwrites_;  // what it declares it writes over
  bool as_given_ = false;
  c10::Device home_ = c10::Device(c10::kCPU);  // where results come back (materialized_on_oracle_device)
  mutable std::vector<Remembered> remembered_;
};

// The implementation (Takes::nondeterministic) or its kernel's spec declares that it may
// round otherwise on each call (atomics): checks that compare two calls hold it to the bound.
bool declared_nondeterministic(const Kernel& kernel, const Implementation& impl);

// The cotangents of the outputs that take one, named grad_name(output), in the problem's
// dtype and on its inputs' device, as the case's choice makes them (Case::cotangents: random normal values from the
// case's seed, ones, zero for the first output, a mean's 1/N, per-row weights).
NamedTensors random_cotangents(const Kernel& kernel, const Problem& p,
                               const NamedTensors& outputs);

NamedTensors merged(const NamedTensors& a, const NamedTensors& b);

// The device of p's first defined input (the CPU when it has none).
c10::Device device_of_inputs(const Problem& p);
NamedTensors to_float64(const NamedTensors& t);

}  // namespace kprop
