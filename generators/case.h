// The Case: the plain parameters of one test, and nothing else.
//
// A Case is what generators draw, what shrinking edits, what the libFuzzer decoder
// produces and what a corpus file stores. Tensor contents are never part of it: the
// harness materializes them deterministically from `seed` and `distribution`, so a
// Case alone replays a failure bit for bit (DESIGN.md §1, §6).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kprop {

enum class DType { float64, float32, bfloat16, float16 };
enum class Activation { none, silu };
enum class Distribution { normal, uniform, heavy_tailed, small_integers };
// packed: B = 1 and cu_seqlens (varlen); dense: B = number of sequences, all equally long.
enum class Layout { packed, dense };

struct Case {
  std::string kernel = "causal_conv1d";
  std::string impl = "tiled";          // an implementation name (see kernels/registry.h)
  std::string property = "vs_reference";

  Layout layout = Layout::packed;
  std::vector<int64_t> lengths{16};    // one entry per sequence, each >= 1
  int64_t D = 32;                      // channels
  int64_t W = 4;                       // convolution window
  int64_t num_cores = 48;              // vector cores of the emulated device
  DType dtype = DType::float32;
  Activation activation = Activation::none;
  bool has_bias = true;
  bool has_initial_state = true;       // h0
  bool has_final_state_grad = false;   // dht: a cotangent for final_state
  // Split point per sequence for whole-vs-chunked: 1 <= split <= length; a sequence whose
  // split equals its length ends in the first part. Empty: split every sequence in half.
  std::vector<int64_t> splits;

  uint64_t seed = 0;                   // data seed: tensor contents come from it
  Distribution distribution = Distribution::normal;

  int64_t total_length() const;
  int64_t num_sequences() const { return static_cast<int64_t>(lengths.size()); }
  // The split points with the default (half, at least 1) filled in.
  std::vector<int64_t> effective_splits() const;

  bool operator==(const Case& other) const;
  bool operator!=(const Case& other) const { return !(*this == other); }
};

// Each problem names the field at fault, e.g. "lengths[2]: zero-length segment".
std::vector<std::string> validate(const Case& c);

// A compact one-line description for progress lines and tables.
std::string summary(const Case& c);
std::ostream& operator<<(std::ostream& os, const Case& c);

std::string to_string(DType d);
std::string to_string(Activation a);
std::string to_string(Distribution d);
std::string to_string(Layout l);
std::optional<DType> parse_dtype(const std::string& s);
std::optional<Activation> parse_activation(const std::string& s);  // "swish" = silu
std::optional<Distribution> parse_distribution(const std::string& s);
std::optional<Layout> parse_layout(const std::string& s);

}  // namespace kprop
