#include "harness/spec/token_sequences.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kprop {

namespace {

using T = at::Tensor;

// A tensor of the spec: its name and where the batch and time dimensions are (-1: none).
struct Laid {
  std::string name;
  int64_t batch = -1, time = -1;
};

std::vector<Laid> laid_out(const std::vector<TensorSpec>& tensors, const TokenSequences& s) {
  std::vector<Laid> out;
  for (const auto& t : tensors) {
    const auto at = [&](const std::string& dim) -> int64_t {
      const auto it = std::find(t.dims.begin(), t.dims.end(), dim);
      return it == t.dims.end() ? -1 : it - t.dims.begin();
    };
    out.push_back({t.name, at(s.batch), at(s.time)});
  }
  return out;
}

T narrowed(const T& t, int64_t dim, int64_t start, int64_t length) {
  return t.defined() && dim >= 0 ? t.narrow(dim, start, length).contiguous() : t;
}

class Declared final : public SequenceFamily {
 public:
  Declared(const KernelSpec& spec, TokenSequences s)
      : s_(std::move(s)), inputs_(laid_out(spec.inputs, s_)), outputs_(laid_out(spec.outputs, s_)) {}

  // ---- whole vs chunked ------------------------------------------------------------
  std::optional<ChunkedProblem> split(const Problem& whole) const override {
    const int64_t seq = whole.c.integer(s_.time);
    if (seq < 2) return std::nullopt;
    const int64_t cut = std::clamp<int64_t>(whole.c.integer(s_.split), 1, seq - 1);
    Problem first{whole.c, {}}, second{whole.c, {}};
    first.c.set(s_.time, cut);
    first.c.set(s_.final_flag, true);  // its final state is handed on
    second.c.set(s_.time, seq - cut);
    second.c.set(s_.initial_flag, true);
    for (const auto& in : inputs_) {
      const T t = whole.inputs.get(in.name);
      if (!t.defined()) continue;
      first.inputs.set(in.name, narrowed(t, in.time, 0, cut));
      if (!is_initial(in.name)) second.inputs.set(in.name, narrowed(t, in.time, cut, seq - cut));
    }
    return ChunkedProblem{whole, std::move(first), std::move(second)};
  }

  void hand_on(ChunkedProblem& ch, const NamedTensors& first_outputs) const override {
    for (const auto& [initial, final] : s_.states)
      if (first_outputs.has(final)) ch.second.inputs.set(initial, first_outputs.get(final));
  }

  NamedTensors later_part_only(const ChunkedProblem& ch, const NamedTensors& cot) const override {
    NamedTensors out;
    for (const auto& o : outputs_) {
      T t = cot.get("d" + o.name);
      if (t.defined() && o.time >= 0) {
        t = t.clone();
        t.narrow(o.time, 0, cut_of(ch)).zero_();
      }
      if (t.defined()) out.set("d" + o.name, t);
    }
    return out;
  }

  NamedTensors second_cotangents(const ChunkedProblem& ch, const NamedTensors& cot) const override {
    NamedTensors out = cut_cotangents(cot, cut_of(ch), seq_of(ch) - cut_of(ch));
    // The whole call's final state is the second's.
    for (const auto& [initial, final] : s_.states) {
      const T d = cot.get("d" + final);
      if (d.defined()) out.set("d" + final, d);
    }
    return out;
  }

  NamedTensors first_cotangents(const ChunkedProblem& ch, const NamedTensors& cot,
                                const NamedTensors& second_grads) const override {
    NamedTensors out = cut_cotangents(cot, 0, cut_of(ch));
    for (const auto& [initial, final] : s_.states)
      if (second_grads.has("d" + initial)) out.set("d" + final, second_grads.get("d" + initial));
    return out;
  }

  NamedTensors join_outputs(const ChunkedProblem& ch, const NamedTensors& first,
                            const NamedTensors& second) const override {
    NamedTensors out;
    for (const auto& o : outputs_) {
      if (is_final(o.name)) {
        if (ch.whole.c.flag(s_.final_flag) && second.has(o.name)) out.set(o.name, second.get(o.name));
      } else if (o.time >= 0 && first.has(o.name)) {
        out.set(o.name, at::cat({first.get(o.name), second.get(o.name)}, o.time));
      }
    }
    return out;
  }

  NamedTensors join_grads(const ChunkedProblem& ch, const NamedTensors& first,
                          const NamedTensors& second) const override {
    NamedTensors out;
    for (const auto& in : inputs_) {
      const std::string g = "d" + in.name;
      if (is_initial(in.name)) {
        if (ch.whole.c.flag(s_.initial_flag) && first.has(g)) out.set(g, first.get(g));
      } else if (first.has(g) && second.has(g)) {
        out.set(g, in.time >= 0 ? at::cat({first.get(g), second.get(g)}, in.time)
                                : first.get(g) + second.get(g));
      }
    }
    return out;
  }

  // ---- packed vs separate: each batch row on its own -------------------------------
  std::optional<std::vector<Problem>> separate(const Problem& packed) const override {
    const int64_t batch = packed.c.integer(s_.batch);
    if (batch < 2) return std::nullopt;
    std::vector<Problem> parts;
    for (int64_t b = 0; b < batch; ++b) {
      Problem p{packed.c, {}};
      p.c.set(s_.batch, int64_t{1});
      for (const auto& in : inputs_) {
        const T t = packed.inputs.get(in.name);
        if (t.defined()) p.inputs.set(in.name, narrowed(t, in.batch, b, 1));
      }
      parts.push_back(std::move(p));
    }
    return parts;
  }

  NamedTensors join_separate_outputs(const Problem&, const std::vector<NamedTensors>& parts) const override {
    return joined(outputs_, "", parts);
  }

  NamedTensors join_separate_grads(const Problem&, const std::vector<NamedTensors>& parts) const override {
    return joined(inputs_, "d", parts);
  }

  NamedTensors separate_cotangents(const Problem&, size_t part,
                                   const NamedTensors& cot) const override {
    NamedTensors out;
    for (const auto& o : outputs_) {
      const T t = cot.get("d" + o.name);
      if (t.defined()) out.set("d" + o.name, narrowed(t, o.batch, static_cast<int64_t>(part), 1));
    }
    return out;
  }

 private:
  bool is_initial(const std::string& name) const {
    return std::any_of(s_.states.begin(), s_.states.end(), [&](const auto& p) { return p.first == name; });
  }
  bool is_final(const std::string& name) const {
    return std::any_of(s_.states.begin(), s_.states.end(), [&](const auto& p) { return p.second == name; });
  }
  int64_t seq_of(const ChunkedProblem& ch) const { return ch.whole.c.integer(s_.time); }
  int64_t cut_of(const ChunkedProblem& ch) const { return ch.first.c.integer(s_.time); }

  NamedTensors cut_cotangents(const NamedTensors& cot, int64_t start, int64_t length) const {
    NamedTensors out;
    for (const auto& o : outputs_) {
      const T t = cot.get("d" + o.name);
      if (t.defined() && o.time >= 0) out.set("d" + o.name, narrowed(t, o.time, start, length));
    }
    return out;
  }

  // The parts' tensors side by side along the batch; one without a batch dimension summed.
  static NamedTensors joined(const std::vector<Laid>& tensors, const std::string& prefix,
                             const std::vector<NamedTensors>& parts) {
    NamedTensors out;
    for (const auto& t : tensors) {
      const std::string name = prefix + t.name;
      std::vector<T> each;
      for (const auto& p : parts)
        if (p.has(name)) each.push_back(p.get(name));
      if (each.size() != parts.size()) continue;
      if (t.batch >= 0) {
        out.set(name, at::cat(each, t.batch));
      } else {
        T sum = each.front();
        for (size_t i = 1; i < each.size(); ++i) sum = sum + each[i];
        out.set(name, sum);
      }
    }
    return out;
  }

  TokenSequences s_;
  std::vector<Laid> inputs_, outputs_;
};

}  // namespace

std::unique_ptr<SequenceFamily> token_sequences(const KernelSpec& spec, TokenSequences s) {
  return std::make_unique<Declared>(spec, std::move(s));
}

}  // namespace kprop
