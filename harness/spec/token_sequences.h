// A sequence family (harness/sequence_family.h) declared instead of written: the kernel's
// per-token tensors are laid out [batch, seq, ...] (each batch row one sequence of `seq`
// tokens), its carried state is an optional input and an output with a batch dimension,
// and a case parameter says where `chunked` cuts the call. The state may be several
// tensors (a state and a running sum), each an (initial, final) pair. From that, every tensor of the
// spec is cut, handed on and joined by its named dimensions:
//   chunked  tokens [0, split) in the first call, [split, seq) in the second, whose
//            initial state is the first's final state;
//   packed   each batch row in a call of its own.
// Inputs without the time dimension (weights) go to both calls whole and their gradients
// add; the state's gradient flows back through the handed-on state.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/sequence_family.h"
#include "harness/spec/kernel_spec.h"

namespace kprop {

struct TokenSequences {
  std::string batch = "batch", time = "seq";  // extents: the tensors' dimensions of that name
  // The carried state: pairs of an input and an output of the spec, (h0, ht).
  std::vector<std::pair<std::string, std::string>> states;
  std::string initial_flag, final_flag;       // the flag parameters that make them present
  std::string split;                          // integer parameter: the first call's tokens
};

// The family of `spec`'s inputs and outputs as declared (their names and dimensions are
// copied). `packed` here runs each batch row alone; sequences packed by cu_seqlens are not
// declared yet.
std::unique_ptr<SequenceFamily> token_sequences(const KernelSpec& spec, TokenSequences s);

}  // namespace kprop
