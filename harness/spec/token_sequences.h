// A sequence family (harness/model/sequence_family.h) declared instead of written: the kernel's
// per-token tensors are laid out [batch, seq, ...] (each batch row one sequence of `seq`
// tokens), its carried state is an optional input and an output with one entry per
// sequence, and a case parameter says where `chunked` cuts the call. The state may be
// several tensors (a state and a running sum), each an (initial, final) pair. From that,
// every tensor of the spec is cut, handed on and joined by its named dimensions:
//   chunked  tokens [0, split) in the first call, [split, seq) in the second, whose
//            initial state is the first's final state (packed: below);
//   packed   each sequence in a call of its own: each batch row of a dense case, or each
//            sequence of a packed one (below).
// Inputs without the time dimension (weights) go to both calls whole and their gradients
// add; the state's gradient flows back through the handed-on state.
//
// A kernel that also takes varlen batches (FlashAttention's cu_seqlens) declares the
// packed layout (packed_layout): a case is then either dense (`batch` rows of `seq`
// tokens) or packed: one row of sequences of `lengths` tokens each, told apart by their
// offsets [N + 1], an input computed from the lengths; its states have one entry per
// sequence (dimension `sequences`). The kernel's reference and emulations can be written
// for one sequence and run on each (one_sequence_at_a_time), as can the magnitudes of its
// bounds.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/sequence_family.h"
#include "harness/spec/kernel_spec.h"

namespace kprop {

struct TokenSequences {
  std::string batch = "batch", time = "seq";  // extents: the tensors' dimensions of that name
  // The carried state: pairs of an input and an output of the spec, (h0, ht).
  std::vector<std::pair<std::string, std::string>> states;
  std::string initial_flag, final_flag;       // the flag parameters that make them present
  std::string split;                          // integer parameter: the first call's tokens
  // The packed layout, where declared (packed_layout): the choice parameter `layout`
  // (dense or packed), the integer list of the packed sequences' lengths, the input of
  // their offsets and the dimension of per-sequence tensors. Empty `lengths`: none.
  std::string layout, lengths, offsets, sequences;
};

// The family of `spec`'s inputs and outputs as declared (their names and dimensions are
// copied). `chunked` cuts a packed case's one row at token `split` as context parallelism
// splits it across ranks: the sequences before the cut go to the first call, those after
// to the second, and a sequence the cut falls inside hands its state on from the one to
// the other.
std::unique_ptr<SequenceFamily> token_sequences(const KernelSpec& spec, TokenSequences s);

// Declares the packed layout on `spec` for `s` (whose batch, time and split parameters
// are among spec.params): the parameters `layout` (dense 70%, packed 30%) and `lengths`
// (1 to the limit max_sequences entries, each drawn by `length_draws`), before the batch;
// the batch and time extents bounded by the layout (packed: one row of the lengths' sum);
// the dimensions `sequences` and `offsets`; and the input `cu_seqlens` (int64 offsets,
// present in packed cases, last, so that the inputs before keep their streams of the
// seed). Fills s.layout, s.lengths, s.offsets, s.sequences.
void packed_layout(KernelSpec& spec, TokenSequences& s, std::vector<IntOption> length_draws);

// `single`, written for calls of dense sequences, run on each sequence of a packed call
// (the offsets input set) and its results joined: per-token results along the time,
// per-sequence ones along `sequences`. A dense call goes to `single` as it is.
OpFunction one_sequence_at_a_time(const KernelSpec& spec, const TokenSequences& s, OpFunction single);
// The same for the magnitudes of a bound (or the framework's distances): each sequence's
// from its own tensors, as a case of that one sequence.
SharedMagnitudes one_sequence_at_a_time(const KernelSpec& spec, const TokenSequences& s,
                                        SharedMagnitudes single);

}  // namespace kprop
