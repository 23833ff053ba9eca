// What an implementation is handed must come back as it went in. Every tensor handed to a
// call (its inputs in a forward; its inputs and the cotangents it receives in a backward)
// is kept as a copy and compared bit for bit after the call. A kernel that writes over a
// buffer to save memory (da over a, dx over the dy it receives) is right in the model it
// was written for and wrong wherever the buffer is still needed elsewhere in the graph:
// such a write is a finding that names the tensor and the call. An implementation that
// writes over a tensor by design declares it (Takes::overwrites) and is handed a copy.
// All of a tensor's storage is watched, not only the elements it holds: a write into the
// memory around it (a margin `guard` put there, the padding between the rows of a slice)
// is a stray store past its end, before its start or between its elements.
#pragma once

#include <string>
#include <vector>

#include "harness/model/named_tensors.h"

namespace kprop {

// `tensors` with a copy in place of each one named in `names`.
NamedTensors with_copies_of(const NamedTensors& tensors, const std::vector<std::string>& names);

// Bit for bit, NaNs included: a NaN handed in must come back as the same NaN.
bool same_bits(const at::Tensor& a, const at::Tensor& b);

class HandedTensors {
 public:
  // Keeps a copy of every defined tensor of `inputs` and `cotangents` not named in
  // `exempt`.
  HandedTensors(const NamedTensors& inputs, const NamedTensors& cotangents,
                const std::vector<std::string>& exempt);

  // Elements of a tensor's storage outside it that the call changed, on one side of it.
  struct Stray {
    std::string tensor;
    std::string side;   // "past its end", "before its start", "between its elements"
    int64_t offset;     // the first changed element, from the tensor's first element
    int64_t count;      // changed elements on that side
  };
  struct Changes {
    NamedTensors now, before;  // the tensors that changed: as the call left them, as handed
    std::vector<Stray> strays;
    bool empty() const { return now.size() == 0 && strays.empty(); }
  };
  // What changed since the copies were kept.
  Changes changes() const;
  // Writes the kept copies back, storage and all, so that the caller's later calls see what
  // it handed (after the caller has copied any result that may share a changed tensor's
  // memory).
  void restore() const;

 private:
  // A CPU tensor's storage is kept as its bytes (a property calls an implementation hundreds
  // of times per case, on tensors of a few elements: ATen's per-op cost would dominate);
  // any other as a clone.
  struct Kept {
    std::string name;
    at::Tensor handed;   // as handed
    at::Tensor storage;  // all of its storage, flat (harness/model/tensor_layouts.h)
    at::Tensor copy;     // the storage's copy, or
    std::string bytes;   // its bytes, on the CPU
    bool unchanged() const;
    at::Tensor storage_before() const;  // the kept copy, on the CPU
  };
  void keep(const NamedTensors& tensors, const std::vector<std::string>& exempt);
  std::vector<Kept> kept_;
};

}  // namespace kprop
