// The typed view of a causal_conv1d case: its schema's parameters read once, as fields.
// Kernel code reads `conv_shape(c)` and never looks parameters up by name in its loops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/case.h"

namespace kprop::causal_conv1d {

// packed: B = 1 and cu_seqlens (varlen); dense: B = number of sequences, all equally long.
enum class Layout { packed, dense };
enum class Activation { none, silu };

struct Shape {
  Layout layout = Layout::packed;
  std::vector<int64_t> lengths{1};  // one entry per sequence, each >= 1
  int64_t D = 32;                   // channels
  int64_t W = 2;                    // convolution window
  int64_t num_cores = 1;            // vector cores of the emulated device
  Activation activation = Activation::none;
  bool has_bias = false;
  bool has_initial_state = false;      // h0
  bool has_final_state_grad = false;   // dht: a cotangent for final_state
  // Split point per sequence for whole-vs-chunked: 1 <= split <= length; a sequence whose
  // split equals its length ends in the first part. Empty: split every sequence in half.
  std::vector<int64_t> splits;

  int64_t total_length() const;
  int64_t num_sequences() const { return static_cast<int64_t>(lengths.size()); }
  // The split points with the default (half, at least 1) filled in.
  std::vector<int64_t> effective_splits() const;
};

Shape conv_shape(const Case& c);
// `c` with the parameters of `s` (common fields kept).
Case with_shape(const Case& c, const Shape& s);

std::string to_string(Activation a);
std::string to_string(Layout l);

}  // namespace kprop::causal_conv1d
