#include "kernels/causal_conv1d/ascend_grid.h"

namespace kprop::causal_conv1d {

std::vector<Chunk> chunk_grid(const Args& args, int64_t BT) {
  std::vector<Chunk> chunks;
  const int64_t T = args.x.size(1);
  int64_t i_tg = 0;
  int64_t n = 0;
  for (const Sequence& s : sequences(args)) {
    const int64_t bos = s.batch * T + s.bos;
    for (int64_t i_t = 0; i_t < cdiv(s.length, BT); ++i_t)
      chunks.push_back({n, i_t, bos, s.length, i_tg++});
    ++n;
  }
  return chunks;
}

template <typename Acc>
BackwardProblem<Acc>::BackwardProblem(const Args& args, const at::Tensor& dy_,
                                      const at::Tensor& dht_, bool clamp_to_window) {
  check_args(args);
  B = args.x.size(0);
  T = args.x.size(1);
  D = args.x.size(2);
  W = args.weight.size(1);
  silu = args.activation != "none";
  has_bias = args.bias.defined();
  has_initial_state = args.initial_state.defined();
  has_dht = dht_.defined();
  num_sequences = static_cast<int64_t>(sequences(args).size());
  TORCH_CHECK(dy_.sizes() == args.x.sizes(), "causal_conv1d_bwd: dy must have x's shape");
  TORCH_CHECK(!has_dht || (dht_.dim() == 3 && dht_.size(0) == num_sequences &&
                           dht_.size(1) == D && dht_.size(2) == W),
              "causal_conv1d_bwd: dht must be [N, D, W]");

  tiles = backward_tiles(B * T, W, has_initial_state, args.num_cores, clamp_to_window);
  TORCH_CHECK(D % tiles.BD == 0, "D must be divisible by BD (D = ", D, ", BD = ", tiles.BD,
              ")");
  num_d_blocks = D / tiles.BD;
  chunks = chunk_grid(args, tiles.BT);

  x = DeviceTensor<Acc>("x", args.x);
  weight = DeviceTensor<Acc>("weight", args.weight);
  if (has_initial_state) initial_state = DeviceTensor<Acc>("initial_state", args.initial_state);
  // With an activation the impl recomputes the pre-activation output, stored in x's dtype.
  if (silu) y = DeviceTensor<Acc>("y", ascend_forward_output(args, "none"));
  dy = DeviceTensor<Acc>("dy", dy_);
  if (has_dht) dht = DeviceTensor<Acc>("dht", dht_);
  if (silu) {
    silu_grad_.resize(dy.numel());
    for (int64_t i = 0; i < dy.numel(); ++i) silu_grad_[i] = grad_pre_at(i, "dy tile");
  }

  const int64_t slots = static_cast<int64_t>(chunks.size());  // B * NT
  // The partial buffers are fp32 upstream; float64 throughout when the inputs are float64.
  const auto partial = std::is_same<Acc, double>::value ? at::kDouble : at::kFloat;
  dx = DeviceTensor<Acc>::allocate("dx", {B, T, D}, args.x.scalar_type(), false);
  dw_slots = DeviceTensor<Acc>::allocate("dw", {slots, W, D}, partial, false);
  if (has_bias) db_slots = DeviceTensor<Acc>::allocate("db", {slots, D}, partial, false);
}

template <typename Acc>
void BackwardProblem<Acc>::allocate_dh0_slots(int64_t slots, at::ScalarType storage) {
  dh0_slots =
      DeviceTensor<Acc>::allocate("dh0", {slots, num_sequences, D, W}, storage, true);
}

// Sum over the leading slot dimension in the accumulation type.
template <typename Acc>
static std::vector<Acc> sum_slots(const DeviceTensor<Acc>& buffer, int64_t slots) {
  const auto& v = buffer.values();
  const int64_t per_slot = slots == 0 ? 0 : buffer.numel() / slots;
  std::vector<Acc> sum(per_slot, Acc(0));
  for (int64_t s = 0; s < slots; ++s)
    for (int64_t i = 0; i < per_slot; ++i) sum[i] += v[s * per_slot + i];
  return sum;
}

template <typename Acc>
BackwardResult BackwardProblem<Acc>::finish(const Args& args) const {
  BackwardResult r;
  r.dx = dx.to_tensor();
  const int64_t slots = static_cast<int64_t>(chunks.size());
  // dw.sum(0) is [W, D]; the contract's dweight is [D, W].
  const auto dw = sum_slots(dw_slots, slots);
  std::vector<Acc> dweight(dw.size());
  for (int64_t k = 0; k < W; ++k)
    for (int64_t d = 0; d < D; ++d) dweight[d * W + k] = dw[k * D + d];
  r.dweight = tensor_of(dweight.data(), {D, W}, args.weight.scalar_type());
  if (has_bias)
    r.dbias = tensor_of(sum_slots(db_slots, slots).data(), {D}, args.bias.scalar_type());
  if (has_initial_state) {
    const int64_t dh0_count = dh0_slots.numel() / (num_sequences * D * W);
    r.dinitial_state = tensor_of(sum_slots(dh0_slots, dh0_count).data(),
                                 {num_sequences, D, W}, args.initial_state.scalar_type());
  }
  return r;
}

template struct BackwardProblem<float>;
template struct BackwardProblem<double>;

}  // namespace kprop::causal_conv1d
