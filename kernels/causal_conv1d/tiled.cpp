// kprop's own backward on the Ascend grid and tiles (the unclamped BT of the vendored
// kernel, so chunks narrower than W occur), correct for every BT, W and packing:
//  - head rows are admitted only inside the sequence (o_t < i_w and o_t < T_len);
//  - each head chunk contributes dh0 terms for its own rows only, so slots add up;
//  - slots are indexed per sequence (i_t * N + i_n), so packed sequences never collide;
//  - partial sums stay in the accumulation type until the host's final cast;
//  - for a sequence shorter than W, dht of the final-state columns that still hold h0
//    passes through to dh0.
#include "kernels/causal_conv1d/ascend_backward.h"
#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {

namespace {

template <typename Acc>
class TiledBackward : public AscendBackward<Acc> {
  using Base = AscendBackward<Acc>;
  using Base::channel;
  using Base::o_t;
  using Base::p_;

 public:
  TiledBackward(const Args& args, const at::Tensor& dy, const at::Tensor& dht)
      : Base(args, dy, dht, /*clamp_to_window=*/false) {
    if (p_.has_initial_state)
      p_.allocate_dh0_slots(cdiv(p_.W, p_.tiles.BT),
                            std::is_same<Acc, double>::value ? at::kDouble : at::kFloat);
  }

 private:
  Acc head_rows_dw(const Chunk& c, int64_t i_w, int64_t d) const override {
    Acc sum = 0;
    for (int64_t r = 0; r < p_.tiles.BT; ++r) {
      const int64_t t = o_t(c, r);
      if (t >= i_w || t >= c.length) continue;
      // Row t with tap W-1-i_w reads position t - i_w < 0: h0 column W - i_w + t.
      sum += p_.grad_pre(c.bos + t, d, "dw head-row load") *
             this->h0(c, d, p_.W - i_w + t, "dw head-row h0 load");
    }
    return sum;
  }

  // dh0[col] = sum over this chunk's rows t < min(col, T_len) of g[t] * w[col-1-t].
  void store_dh0(const Chunk& c, int64_t i_d, int64_t task) override {
    const int64_t first = o_t(c, 0), last = std::min(o_t(c, p_.tiles.BT), c.length);
    for (int64_t col = 1; col < p_.W; ++col)
      for (int64_t j = 0; j < p_.tiles.BD; ++j) {
        const int64_t d = channel(i_d, j);
        Acc s = 0;
        for (int64_t t = first; t < std::min(col, last); ++t)
          s += p_.grad_pre(c.bos + t, d, "dh0 row load") * p_.tap(col - 1 - t, d);
        if (c.i_t == 0 && p_.has_dht && c.length < p_.W && col >= c.length)
          s += p_.dht.load(this->dh0_offset(c.n, d, col - c.length), "dht pass-through load");
        p_.dh0_slots.store(this->dh0_offset(c.i_t * p_.num_sequences + c.n, d, col), s, task,
                           "dh0 slot store");
      }
  }
};

}  // namespace

BackwardResult tiled_backward(const Args& args, const at::Tensor& dy, const at::Tensor& dht) {
  if (args.x.scalar_type() == at::kDouble)
    return TiledBackward<double>(args, dy, dht).run(args);
  return TiledBackward<float>(args, dy, dht).run(args);
}

}  // namespace kprop::causal_conv1d
