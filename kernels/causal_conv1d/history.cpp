// The historical states of VeOmni's Ascend causal_conv1d backward
// (_ascend/triton/convolution.py: causal_conv1d_bwd_kernel, causal_conv1d_bwd_impl), each
// the code path of its version, with the same tiles, grid, loads, masks and host sums:
//
//   original  as vendored.
//   clamped   + BT = max(BT, next_pow2(W)) and a refusal of W > 8.
//   fixed     + `o_t < T_len` in mask_head_rows and in the dh0 row loads.
//
// Nothing here is corrected: where a state is wrong, kprop's properties must say so.
#include "kernels/causal_conv1d/ascend_backward.h"
#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {

namespace {

template <typename Acc>
class HistoricalBackward : public AscendBackward<Acc> {
  using Base = AscendBackward<Acc>;
  using Base::channel;
  using Base::o_t;
  using Base::p_;

 public:
  HistoricalBackward(Revision revision, const Args& args, const at::Tensor& dy,
                     const at::Tensor& dht)
      : Base(args, dy, dht, /*clamp_to_window=*/revision != Revision::original),
        mask_rows_by_length_(revision == Revision::fixed) {
    if (p_.has_initial_state) {
      // initial_state.new_zeros(min(eff_NT, cdiv(W, BT)), *initial_state.shape); eff_NT
      // counts the chunks of all sequences (packed) or of one sequence (dense).
      const int64_t eff_nt = args.cu_seqlens.defined()
                                 ? static_cast<int64_t>(p_.chunks.size())
                                 : cdiv(p_.T, p_.tiles.BT);
      p_.allocate_dh0_slots(std::min(eff_nt, cdiv(p_.W, p_.tiles.BT)),
                            args.initial_state.scalar_type());
    }
  }

 private:
  // Rows admitted by mask_head_rows = o_t < i_w (and o_t < T_len once fixed); dy of an
  // admitted row is loaded with no other row mask.
  Acc head_rows_dw(const Chunk& c, int64_t i_w, int64_t d) const override {
    Acc sum = 0;
    for (int64_t r = 0; r < p_.tiles.BT; ++r) {
      const int64_t t = o_t(c, r);
      if (!(t < i_w && (!mask_rows_by_length_ || t < c.length))) continue;
      const Acc g = p_.grad_pre(c.bos + t, d, "dw head-row load");
      const int64_t column = p_.W - i_w + t;
      if (column >= 1 && column < p_.W) sum += g * this->h0(c, d, column, "dw head-row h0 load");
    }
    return sum;
  }

  // dh0[i_w] = sum_{t2 < i_w} dy[i_t*BT + t2] * w[i_w-1-t2], counted from the chunk's
  // first row whatever the chunk, stored as slot i_t * B + i_n (B = 1 when packed).
  void store_dh0(const Chunk& c, int64_t i_d, int64_t task) override {
    for (int64_t i_w = 1; i_w < p_.W; ++i_w)
      for (int64_t j = 0; j < p_.tiles.BD; ++j) {
        const int64_t d = channel(i_d, j);
        Acc s = 0;
        for (int64_t t2 = 0; t2 < p_.W - 1 && t2 < i_w; ++t2) {
          const int64_t row = c.i_t * p_.tiles.BT + t2;
          if (mask_rows_by_length_ && row >= c.length) continue;
          s += p_.grad_pre(c.bos + row, d, "dh0 row load") * p_.tap(i_w - 1 - t2, d);
        }
        p_.dh0_slots.store(this->dh0_offset(c.i_t * p_.B + c.n, d, i_w), s, task,
                           "dh0 slot store");
      }
  }

  bool mask_rows_by_length_;
};

}  // namespace

BackwardResult historical_backward(Revision revision, const Args& args, const at::Tensor& dy,
                                   const at::Tensor& dht) {
  if (revision != Revision::original)
    TORCH_CHECK(args.weight.size(1) <= 8, "causal_conv1d_bwd: W > 8 is not supported (W = ",
                args.weight.size(1), ")");
  if (args.x.scalar_type() == at::kDouble)
    return HistoricalBackward<double>(revision, args, dy, dht).run(args);
  return HistoricalBackward<float>(revision, args, dy, dht).run(args);
}

}  // namespace kprop::causal_conv1d
