// The Ascend forward kernel and final-state kernel on the CPU (VeOmni
// _ascend/triton/convolution.py: causal_conv1d_fwd_kernel, causal_conv1d_states_fwd_kernel).
// The forward is the same in every historical state, so all tiled implementations share it.
#include <algorithm>

#include "kernels/causal_conv1d/ascend_grid.h"
#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {

namespace {

template <typename Acc>
at::Tensor forward_kernel(const Args& args, bool silu) {
  const int64_t B = args.x.size(0), T = args.x.size(1), D = args.x.size(2);
  const int64_t W = args.weight.size(1);
  const bool has_h0 = args.initial_state.defined();
  const Tiles tiles = forward_tiles(B * T, has_h0, args.num_cores);
  TORCH_CHECK(D % tiles.BD == 0, "D must be divisible by BD (D = ", D, ", BD = ", tiles.BD,
              ")");
  const int64_t BT = tiles.BT, BD = tiles.BD;

  DeviceTensor<Acc> x("x", args.x), weight("weight", args.weight), bias, h0;
  if (args.bias.defined()) bias = DeviceTensor<Acc>("bias", args.bias);
  if (has_h0) h0 = DeviceTensor<Acc>("initial_state", args.initial_state);
  auto y = DeviceTensor<Acc>::allocate("y", {B, T, D}, args.x.scalar_type(), false);

  std::vector<Acc> acc(BT * BD);
  int64_t task = 0;
  for (const Chunk& c : chunk_grid(args, BT)) {
    for (int64_t i_d = 0; i_d < D / BD; ++i_d, ++task) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      // Head chunks with a state read positions before the sequence from h0.
      const bool head = has_h0 && c.i_t * BT < W;
      // Rows at or past T_len are never stored and all their loads fall inside x or h0,
      // so leaving them out changes no value and no memory finding, only the run time.
      const int64_t rows = std::min(BT, c.length - c.i_t * BT);
      for (int64_t i_w = -W + 1; i_w <= 0; ++i_w)
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t o_x = c.i_t * BT + r + i_w;
          const bool in_sequence = o_x >= 0 && o_x < c.length;
          const bool in_state = head && o_x + W >= 0 && o_x < 0;
          for (int64_t j = 0; j < BD; ++j) {
            const int64_t d = i_d * BD + j;
            Acc v = in_sequence ? x.load((c.bos + o_x) * D + d, "x tile") : Acc(0);
            if (in_state) v += h0.load((c.n * D + d) * W + o_x + W, "initial_state tile");
            acc[r * BD + j] += v * weight.load(d * W + i_w + W - 1, "weight tile");
          }
        }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < BD; ++j) {
          const int64_t d = i_d * BD + j;
          Acc v = acc[r * BD + j];
          if (bias.defined()) v += bias.load(d, "bias");
          if (silu) v = v * sigmoid(v);
          y.store((c.bos + c.i_t * BT + r) * D + d, v, task, "y store");
        }
    }
  }
  return y.to_tensor();
}

// final_state[n, d, j] = input position L - W + j of sequence n; positions before the
// sequence come from h0 (only read when L < W), or are zero.
template <typename Acc>
at::Tensor final_state_kernel(const Args& args) {
  const int64_t T = args.x.size(1), D = args.x.size(2), W = args.weight.size(1);
  const auto seqs = sequences(args);
  const int64_t N = static_cast<int64_t>(seqs.size());
  DeviceTensor<Acc> x("x", args.x), h0;
  if (args.initial_state.defined()) h0 = DeviceTensor<Acc>("initial_state", args.initial_state);
  auto out = DeviceTensor<Acc>::allocate("final_state", {N, D, W}, args.x.scalar_type(), false);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t L = seqs[n].length, eos = seqs[n].batch * T + seqs[n].bos + L;
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < W; ++j) {
        Acc v = L - W + j >= 0 ? x.load((eos - W + j) * D + d, "final_state x load") : Acc(0);
        if (h0.defined() && L < W && L + j < W)
          v += h0.load((n * D + d) * W + L + j, "final_state h0 load");
        out.store((n * D + d) * W + j, v, n, "final_state store");
      }
  }
  return out.to_tensor();
}

template <typename Acc>
ForwardResult forward(const Args& args) {
  return {forward_kernel<Acc>(args, args.activation != "none"), final_state_kernel<Acc>(args)};
}

}  // namespace

at::Tensor ascend_forward_output(const Args& args, const std::string& activation) {
  check_args(args);
  const bool silu = activation != "none";
  return args.x.scalar_type() == at::kDouble ? forward_kernel<double>(args, silu)
                                             : forward_kernel<float>(args, silu);
}

ForwardResult tiled_forward(const Args& args) {
  check_args(args);
  return args.x.scalar_type() == at::kDouble ? forward<double>(args) : forward<float>(args);
}

}  // namespace kprop::causal_conv1d
