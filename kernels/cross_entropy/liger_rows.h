// Liger-Kernel's cross entropy row kernel (ops/cross_entropy.py: liger_cross_entropy_kernel)
// emulated over every row of a logits tensor at once, shared by cross_entropy and
// fused_linear_cross_entropy (which runs the same kernel on chunks of h W^T + b). The
// rounding points are Liger's: every row in the accumulation type (fp32; float64 for
// float64 inputs), an online softmax over blocks of min(2^15, next_pow2(V)) classes with
// exp2, the loss and z-loss stored in their buffers' dtype, the gradient written over the
// logits in their dtype, and the true class's gradient recomputed once after the loop
// (be1cdc17, #1329) or, as e44a5fe8 (#1268) had it, added to the value the loop stored.
// Also the float64 reference, and the magnitudes the derived bounds are proportional to.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "harness/spec/kernel_spec.h"

namespace kprop::cross_entropy {

// Liger's MAX_FUSED_SIZE on CUDA (65536 // 2): a row wider than this is walked in blocks.
constexpr int64_t kMaxFused = int64_t{1} << 15;

// The options of one call, as LigerCrossEntropyFunction takes them (case parameters by the
// same names; label_smoothing, softcap and lse_square_scale are choices spelled as numbers,
// softcap "none" for None).
struct Options {
  std::string reduction = "mean";  // "mean", "sum" or "none"
  int64_t ignore_index = -100;
  double label_smoothing = 0, softcap = 0, lse_square_scale = 0;  // softcap 0: None
  bool return_z_loss = false;
  bool reduced() const { return reduction != "none"; }
  bool mean() const { return reduction == "mean"; }
};
Options options_of(const OpArgs& a);
Options options_of(const Case& c);

// The case parameters of those options, and of the rows whose target is ignored
// (`ignored`: none, some, all), for every kernel that declares Liger's loss; the operator
// arguments among them.
std::vector<ParamSpec> option_params();
std::vector<std::string> option_arguments();
// The target's share of ignore_index in percent, from `ignored`.
int ignored_percent(const Case& c);
bool reduces(const Case& c);

// How the true class's gradient is written after the loop over blocks.
enum class TrueClass {
  once_in_fp32,       // be1cdc17 (#1329): softmax(x_y) - (1 - ls) folded in fp32, one store
  read_modify_write,  // e44a5fe8 (#1268): X[y] = X[y] (as stored, rounded) - (1 - ls)
};

// What the masked lanes past V in the last block hold in the online softmax.
enum class Padding {
  masked,      // -inf: they add nothing
  softcapped,  // Liger at ead96b61: -inf loaded, then softcapped whole to -softcap, counted
};

struct Rows {
  at::Tensor loss_1d, z_loss_1d;  // [rows], in loss_dtype and the logits' dtype
  at::Tensor grad;                // [rows, V] as written over the logits, before grad_output
  int64_t non_ignored = 0;        // n_non_ignore
};

// The kernel over every row of `logits` [rows, V] with `target` [rows] (int64); `grad` only
// when `gradients` (HAS_GRADIENTS: the logits require grad).
Rows liger_rows(const at::Tensor& logits, const at::Tensor& target, const Options& o,
                at::ScalarType loss_dtype, TrueClass true_class, bool gradients,
                Padding padding = Padding::masked);

// What LigerCrossEntropyFunction returns from loss_1d: the rows ('none') or their sum in
// the loss's dtype (torch.sum: accumulated in fp32, rounded once).
at::Tensor reduced(const at::Tensor& loss_1d, const Options& o);

// The float64 loss and z-loss of float64 logits, the reference both kernels derive: rows
// whose target is ignore_index count for nothing, a mean is over the rows that are not
// (0 when every row is ignored, as Liger returns: n_non_ignore = 0 never divides).
NamedTensors reference_losses(const at::Tensor& logits, const at::Tensor& target, const Options& o);

// Per row of float64 logits, what the derived bounds are proportional to (docs/design.md §5).
struct Magnitudes {
  at::Tensor loss_row;   // [rows]: |terms| of one row's loss, times its 1/n ('mean'), 0 if ignored
  at::Tensor z_loss_row; // [rows]: the same for z_loss
  at::Tensor z_loss_slope;  // [rows]: |d z_loss / d lse| bounded: 2 lss (|lse| + 1 + max |x|), over n
  at::Tensor dlogits;    // [rows, V]: |terms| of the gradient over the logits, per unit cotangent
  at::Tensor softmax;    // [rows, V]: the exact softmax of the (softcapped) logits
};
Magnitudes magnitudes(const at::Tensor& logits, const at::Tensor& target, const Options& o);

// The bound's K for a row: its V terms summed (d, the smoothing sum) and the roundings
// around them (exp2, log, the products and the divide).
inline int64_t row_terms(int64_t V) { return V + 16; }

}  // namespace kprop::cross_entropy
