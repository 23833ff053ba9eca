// The sequence family of causal_conv1d (harness/model/sequence_family.h): how a call splits
// in two with the final state handed on as the next initial state, and how packed
// sequences run one call each.
#include "kernels/causal_conv1d/sequences.h"

#include <algorithm>

#include "kernels/causal_conv1d/problem.h"

namespace kprop::causal_conv1d {

namespace {

class CausalConv1dSequences final : public SequenceFamily {
 public:
  // ---- whole vs chunked ----------------------------------------------------------
  // Sequence n is split at s_n: rows [0, s_n) go to `first`, rows [s_n, L_n) to `second`,
  // whose initial state is first's final state. A sequence with s_n = L_n ends in `first`.
  // Dense layouts split every sequence at the smallest split point.

  static std::vector<int64_t> split_points(const Shape& c) {
    auto s = c.effective_splits();
    if (c.layout == Layout::dense) s.assign(s.size(), *std::min_element(s.begin(), s.end()));
    return s;
  }
  static std::vector<int64_t> continued(const Shape& c) {
    std::vector<int64_t> idx;
    const auto s = split_points(c);
    for (int64_t n = 0; n < c.num_sequences(); ++n)
      if (s[n] < c.lengths[n]) idx.push_back(n);
    return idx;
  }
  static at::Tensor index_tensor(const std::vector<int64_t>& idx) {
    return at::tensor(idx, at::kLong);
  }

  std::optional<ChunkedProblem> split(const Problem& whole) const override {
    const Shape c = conv_shape(whole.c);
    const auto s = split_points(c);
    const auto cont = continued(c);
    if (cont.empty()) return std::nullopt;
    Shape first = c, second = c;
    first.lengths = s;
    first.splits.clear();
    first.has_final_state_grad = true;  // receives the gradient of the handed-on state
    second.lengths.clear();
    second.splits.clear();
    second.has_initial_state = true;
    if (c.layout == Layout::dense && cont.size() != c.lengths.size()) return std::nullopt;
    const auto x = whole.inputs.get("x");
    const auto sp = spans(c);
    std::vector<at::Tensor> x1, x2;
    for (int64_t n = 0; n < c.num_sequences(); ++n) x1.push_back(rows(x, sp[n], 0, s[n]));
    for (int64_t n : cont) {
      second.lengths.push_back(c.lengths[n] - s[n]);
      x2.push_back(rows(x, sp[n], s[n], c.lengths[n]));
    }
    const auto w = whole.inputs.get("w"), b = whole.inputs.get("b");
    ChunkedProblem chunked{whole,
                           make_problem(with_shape(whole.c, first), assemble(first, x1), w, b, whole.inputs.get("h0")),
                           make_problem(with_shape(whole.c, second), assemble(second, x2), w, b, at::Tensor())};
    return chunked;
  }

  void hand_on(ChunkedProblem& ch, const NamedTensors& first_outputs) const override {
    ch.second.inputs.set("h0",
                         first_outputs.get("ht").index_select(0, index_tensor(continued(conv_shape(ch.whole.c)))));
  }

  NamedTensors later_part_only(const ChunkedProblem& ch,
                               const NamedTensors& cot) const override {
    const Shape c = conv_shape(ch.whole.c);
    const auto s = split_points(c);
    const auto sp = spans(c);
    auto dy = cot.get("dy").clone();
    for (int64_t n = 0; n < c.num_sequences(); ++n) rows(dy, sp[n], 0, s[n]).zero_();
    NamedTensors out;
    out.set("dy", dy);
    if (cot.has("dht")) {
      auto dht = cot.get("dht").clone();
      for (int64_t n = 0; n < c.num_sequences(); ++n)
        if (s[n] == c.lengths[n]) dht[n].zero_();
      out.set("dht", dht);
    }
    return out;
  }

  NamedTensors second_cotangents(const ChunkedProblem& ch,
                                 const NamedTensors& cot) const override {
    const Shape c = conv_shape(ch.whole.c);
    const auto s = split_points(c);
    const auto sp = spans(c);
    const auto cont = continued(c);
    std::vector<at::Tensor> blocks;
    for (int64_t n : cont) blocks.push_back(rows(cot.get("dy"), sp[n], s[n], c.lengths[n]));
    NamedTensors out;
    out.set("dy", assemble(conv_shape(ch.second.c), blocks));
    if (cot.has("dht")) out.set("dht", cot.get("dht").index_select(0, index_tensor(cont)));
    return out;
  }

  NamedTensors first_cotangents(const ChunkedProblem& ch, const NamedTensors& cot,
                                const NamedTensors& second_grads) const override {
    const Shape c = conv_shape(ch.whole.c);
    const auto s = split_points(c);
    const auto sp = spans(c);
    std::vector<at::Tensor> blocks;
    for (int64_t n = 0; n < c.num_sequences(); ++n)
      blocks.push_back(rows(cot.get("dy"), sp[n], 0, s[n]));
    const auto ht = ch.first.inputs.get("x");
    auto dht = cot.has("dht") ? cot.get("dht").clone()
                              : at::zeros({c.num_sequences(), c.D, c.W}, ht.options());
    dht.index_copy_(0, index_tensor(continued(c)), second_grads.get("dh0").to(dht.dtype()));
    NamedTensors out;
    out.set("dy", assemble(conv_shape(ch.first.c), blocks));
    out.set("dht", dht);
    return out;
  }

  // Rows of the whole layout from the two parts' x-shaped tensors.
  at::Tensor join_rows(const ChunkedProblem& ch, const at::Tensor& first,
                       const at::Tensor& second) const {
    const Shape c = conv_shape(ch.whole.c);
    const auto s = split_points(c);
    const auto sp = spans(c), sp1 = spans(conv_shape(ch.first.c)), sp2 = spans(conv_shape(ch.second.c));
    std::vector<at::Tensor> blocks;
    size_t k = 0;
    for (int64_t n = 0; n < c.num_sequences(); ++n) {
      auto head = rows(first, sp1[n], 0, s[n]);
      if (s[n] == c.lengths[n]) {
        blocks.push_back(head);
      } else {
        blocks.push_back(at::cat({head, rows(second, sp2[k], 0, sp2[k].length)}, 0));
        ++k;
      }
    }
    return assemble(c, blocks);
  }

  NamedTensors join_outputs(const ChunkedProblem& ch, const NamedTensors& first,
                            const NamedTensors& second) const override {
    NamedTensors out;
    out.set("y", join_rows(ch, first.get("y"), second.get("y")));
    auto ht = first.get("ht").clone();
    ht.index_copy_(0, index_tensor(continued(conv_shape(ch.whole.c))), second.get("ht"));
    out.set("ht", ht);
    return out;
  }

  NamedTensors join_grads(const ChunkedProblem& ch, const NamedTensors& first,
                          const NamedTensors& second) const override {
    NamedTensors g;
    g.set("dx", join_rows(ch, first.get("dx"), second.get("dx")));
    g.set("dw", first.get("dw").to(at::kDouble) + second.get("dw").to(at::kDouble));
    if (ch.whole.c.flag("bias"))
      g.set("db", first.get("db").to(at::kDouble) + second.get("db").to(at::kDouble));
    if (ch.whole.c.flag("initial_state")) g.set("dh0", first.get("dh0"));
    return g;
  }

  // ---- packed vs separate ---------------------------------------------------------

  std::optional<std::vector<Problem>> separate(const Problem& packed) const override {
    const Shape c = conv_shape(packed.c);
    if (c.num_sequences() < 2) return std::nullopt;
    const auto sp = spans(c);
    const auto x = packed.inputs.get("x"), h0 = packed.inputs.get("h0");
    std::vector<Problem> parts;
    for (int64_t n = 0; n < c.num_sequences(); ++n) {
      Shape one = c;
      one.layout = Layout::packed;
      one.lengths = {c.lengths[n]};
      one.splits.clear();
      parts.push_back(make_problem(with_shape(packed.c, one), rows(x, sp[n], 0, sp[n].length).unsqueeze(0),
                                   packed.inputs.get("w"), packed.inputs.get("b"),
                                   h0.defined() ? h0.narrow(0, n, 1) : h0));
    }
    return parts;
  }

  NamedTensors separate_cotangents(const Problem& packed, size_t part,
                                   const NamedTensors& cot) const override {
    const auto sp = spans(conv_shape(packed.c))[part];
    NamedTensors out;
    out.set("dy", rows(cot.get("dy"), sp, 0, sp.length).unsqueeze(0));
    if (cot.has("dht")) out.set("dht", cot.get("dht").narrow(0, part, 1));
    return out;
  }

  at::Tensor join_separate_rows(const Problem& packed, const std::vector<NamedTensors>& parts,
                                const char* name) const {
    std::vector<at::Tensor> blocks;
    for (const auto& part : parts) blocks.push_back(part.get(name)[0]);
    return assemble(conv_shape(packed.c), blocks);
  }

  at::Tensor sum_parts(const std::vector<NamedTensors>& parts, const char* name) const {
    at::Tensor sum = parts[0].get(name).to(at::kDouble);
    for (size_t i = 1; i < parts.size(); ++i) sum = sum + parts[i].get(name).to(at::kDouble);
    return sum;
  }

  at::Tensor cat_parts(const std::vector<NamedTensors>& parts, const char* name) const {
    std::vector<at::Tensor> all;
    for (const auto& part : parts) all.push_back(part.get(name));
    return at::cat(all, 0);
  }

  NamedTensors join_separate_outputs(const Problem& packed,
                                     const std::vector<NamedTensors>& parts) const override {
    NamedTensors out;
    out.set("y", join_separate_rows(packed, parts, "y"));
    out.set("ht", cat_parts(parts, "ht"));
    return out;
  }

  NamedTensors join_separate_grads(const Problem& packed,
                                   const std::vector<NamedTensors>& parts) const override {
    NamedTensors g;
    g.set("dx", join_separate_rows(packed, parts, "dx"));
    g.set("dw", sum_parts(parts, "dw"));
    if (packed.c.flag("bias")) g.set("db", sum_parts(parts, "db"));
    if (packed.c.flag("initial_state")) g.set("dh0", cat_parts(parts, "dh0"));
    return g;
  }
};

}  // namespace

const SequenceFamily& sequence_family() {
  static const CausalConv1dSequences family;
  return family;
}

}  // namespace kprop::causal_conv1d
