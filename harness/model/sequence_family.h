// The sequence family: what a kernel over packed sequences with a carried state (a
// convolution window, a recurrent state) adds to its Kernel, so that the metamorphic
// properties `chunked` (a call split in two, the state handed on) and `packed` (packed
// sequences vs one call each) apply to it. Kernels without sequences have none, and
// those properties skip their cases.
#pragma once

#include <optional>
#include <vector>

#include "harness/model/kernel.h"

namespace kprop {

// A call split in two: `second` continues where `first` stops; its state input is filled
// from `first`'s outputs by SequenceFamily::hand_on.
struct ChunkedProblem {
  Problem whole, first, second;
};

class SequenceFamily {
 public:
  virtual ~SequenceFamily() = default;

  // ---- whole vs chunked; std::nullopt where nothing continues past its split point.
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

  // ---- packed vs separate; std::nullopt for a single sequence.
  virtual std::optional<std::vector<Problem>> separate(const Problem& packed) const = 0;
  virtual NamedTensors join_separate_outputs(const Problem& packed,
                                             const std::vector<NamedTensors>& parts) const = 0;
  virtual NamedTensors join_separate_grads(const Problem& packed,
                                           const std::vector<NamedTensors>& parts) const = 0;
  // The cotangents of part i of a separated problem.
  virtual NamedTensors separate_cotangents(const Problem& packed, size_t part,
                                           const NamedTensors& cotangents) const = 0;
};

}  // namespace kprop
