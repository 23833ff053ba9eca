#include "harness/spec/token_sequences.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kprop {

namespace {

using T = at::Tensor;

// A tensor of the spec: its name and where its batch, time and sequence dimensions are
// (-1: none).
struct Laid {
  std::string name;
  int64_t batch = -1, time = -1, sequence = -1;
};

std::vector<Laid> laid_out(const std::vector<TensorSpec>& tensors, const TokenSequences& s) {
  std::vector<Laid> out;
  for (const auto& t : tensors) {
    const auto at = [&](const std::string& dim) -> int64_t {
      if (dim.empty()) return -1;
      const auto it = std::find(t.dims.begin(), t.dims.end(), dim);
      return it == t.dims.end() ? -1 : it - t.dims.begin();
    };
    out.push_back({t.name, at(s.batch), at(s.time), at(s.sequences)});
  }
  return out;
}

T narrowed(const T& t, int64_t dim, int64_t start, int64_t length) {
  return t.defined() && dim >= 0 ? t.narrow(dim, start, length).contiguous() : t;
}

// The offsets [N + 1] of packed sequences of these lengths (cu_seqlens), int64.
T offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> offsets{0};
  for (const int64_t length : lengths) offsets.push_back(offsets.back() + length);
  return at::tensor(offsets, at::kLong);
}

// `rows` entries of zeros along `dim`, each shaped like one entry of `like`.
T zero_rows(const T& like, int64_t dim, int64_t rows) {
  return at::zeros_like(like.narrow(dim, 0, 1)).repeat_interleave(rows, dim);
}

bool is_packed(const Case& c, const TokenSequences& s) {
  return !s.lengths.empty() && c.has(s.lengths) && !c.integers(s.lengths).empty();
}

// One sequence of a call: row `index` of a dense call, or tokens [bos, bos + length) of
// a packed call's one row, its states at `index`.
struct Part {
  bool packed = false;
  int64_t index = 0, bos = 0, length = 0;
};

std::vector<Part> parts_of(const Case& c, const TokenSequences& s) {
  std::vector<Part> parts;
  if (is_packed(c, s)) {
    int64_t bos = 0, n = 0;
    for (const int64_t length : c.integers(s.lengths)) {
      parts.push_back({true, n++, bos, length});
      bos += length;
    }
  } else {
    for (int64_t b = 0; b < c.integer(s.batch); ++b) parts.push_back({false, b, 0, c.integer(s.time)});
  }
  return parts;
}

// The parts of a packed call from its offsets [N + 1] (cu_seqlens).
std::vector<Part> parts_of(const T& offsets) {
  const T o = offsets.to(at::kCPU).to(at::kLong).contiguous();
  const int64_t* p = o.data_ptr<int64_t>();
  std::vector<Part> parts;
  for (int64_t n = 0; n + 1 < o.numel(); ++n) parts.push_back({true, n, p[n], p[n + 1] - p[n]});
  return parts;
}

T part_of(const T& t, const Laid& l, const Part& p) {
  if (!t.defined()) return t;
  if (p.packed && l.time >= 0) return narrowed(t, l.time, p.bos, p.length);
  if (!p.packed && l.batch >= 0) return narrowed(t, l.batch, p.index, 1);
  return l.sequence >= 0 ? narrowed(t, l.sequence, p.index, 1) : t;
}

// The case of one part: one dense row of its tokens.
Case case_of(const Case& c, const TokenSequences& s, const Part& p) {
  Case one = c;
  one.set(s.batch, int64_t{1});
  if (p.packed) {
    one.set(s.layout, std::string("dense"));
    one.set(s.lengths, std::vector<int64_t>{});
    one.set(s.time, p.length);
  }
  return one;
}

// The parts' tensors of one name joined: a packed call's per-token ones along the time, a
// dense call's along the batch, per-sequence ones along `sequences`; the rest summed.
T joined(const Laid& l, bool packed, const std::vector<T>& each) {
  const int64_t dim = packed ? (l.time >= 0 ? l.time : l.sequence) : (l.batch >= 0 ? l.batch : l.sequence);
  if (dim >= 0) return at::cat(each, dim);
  T sum = each.front();
  for (size_t i = 1; i < each.size(); ++i) sum = sum + each[i];
  return sum;
}

NamedTensors joined(const std::vector<Laid>& tensors, const std::string& prefix, bool packed,
                    const std::vector<NamedTensors>& parts) {
  NamedTensors out;
  for (const auto& t : tensors) {
    const std::string name = prefix + t.name;
    std::vector<T> each;
    for (const auto& p : parts)
      if (p.has(name) && p.get(name).defined()) each.push_back(p.get(name));
    if (!each.empty() && each.size() == parts.size()) out.set(name, joined(t, packed, each));
  }
  return out;
}

// The tensors of a spec as laid out: inputs, outputs, and by their names also the
// gradients ("d" + input) and the cotangents ("d" + output).
class Layouts {
 public:
  Layouts(const KernelSpec& spec, const TokenSequences& s)
      : inputs(laid_out(spec.inputs, s)), outputs(laid_out(spec.outputs, s)) {}

  const Laid* find(const std::string& name) const {
    for (const auto* list : {&inputs, &outputs})
      for (const auto& t : *list)
        if (t.name == name || "d" + t.name == name) return &t;
    return nullptr;
  }
  // Every tensor of `all` (any of the names above) joined from the parts.
  NamedTensors joined_by_name(bool packed, const std::vector<NamedTensors>& parts) const {
    NamedTensors out;
    if (parts.empty()) return out;
    for (const auto& [name, first] : parts.front()) {
      const Laid* l = find(name);
      std::vector<T> each;
      for (const auto& p : parts)
        if (p.has(name) && p.get(name).defined()) each.push_back(p.get(name));
      if (!l || each.size() != parts.size()) continue;
      out.set(name, joined(*l, packed, each));
    }
    return out;
  }

  std::vector<Laid> inputs, outputs;
};

class Declared final : public SequenceFamily {
 public:
  Declared(const KernelSpec& spec, TokenSequences s) : s_(std::move(s)), layouts_(spec, s_) {}

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
    const bool packed = is_packed(whole.c, s_);
    const Cut at = packed ? cut_packed(whole.c, cut) : Cut{};
    if (packed) {
      first.c.set(s_.lengths, at.first);
      second.c.set(s_.lengths, at.second);
    }
    for (const auto& in : layouts_.inputs) {
      const T t = whole.inputs.get(in.name);
      if (!t.defined()) continue;
      if (in.name == s_.offsets) {
        first.inputs.set(in.name, offsets_of(at.first));
        second.inputs.set(in.name, offsets_of(at.second));
      } else if (in.time >= 0 || !packed || in.sequence < 0) {
        first.inputs.set(in.name, narrowed(t, in.time, 0, cut));
        if (!is_initial(in.name)) second.inputs.set(in.name, narrowed(t, in.time, cut, seq - cut));
      } else {  // a packed case's per-sequence input: the sequences each part holds
        first.inputs.set(in.name, narrowed(t, in.sequence, 0, at.m()));
        if (!is_initial(in.name))
          second.inputs.set(in.name, narrowed(t, in.sequence, at.second_from(), at.second_count()));
      }
    }
    return ChunkedProblem{whole, std::move(first), std::move(second)};
  }

  // Packed: the cut sequence's final state goes on as the second part's first initial
  // state; the sequences after it start from their own (zero without one).
  void hand_on(ChunkedProblem& ch, const NamedTensors& first_outputs) const override {
    for (const auto& [initial, final] : s_.states) {
      if (!first_outputs.has(final)) continue;
      const T handed = first_outputs.get(final);
      if (!is_packed(ch.whole.c, s_)) {
        ch.second.inputs.set(initial, handed);
        continue;
      }
      const Cut at = cut_of_packed(ch);
      const int64_t dim = laid(initial).sequence, rest = at.second_count() - (at.continued ? 1 : 0);
      std::vector<T> rows;
      if (at.continued) rows.push_back(handed.narrow(dim, at.m() - 1, 1));
      if (rest > 0) {
        const T own = ch.whole.inputs.get(initial);
        rows.push_back(own.defined() ? own.narrow(dim, at.m(), rest).to(handed.scalar_type())
                                     : zero_rows(handed, dim, rest));
      }
      ch.second.inputs.set(initial, at::cat(rows, dim));
    }
  }

  // The first part's tokens take no cotangent (nor, packed, the final states of the
  // sequences it ends), so that what reaches them comes through the handed-on state.
  NamedTensors later_part_only(const ChunkedProblem& ch, const NamedTensors& cot) const override {
    NamedTensors out;
    const bool packed = is_packed(ch.whole.c, s_);
    for (const auto& o : layouts_.outputs) {
      T t = cot.get("d" + o.name);
      if (!t.defined()) continue;
      if (o.time >= 0) {
        t = t.clone();
        t.narrow(o.time, 0, cut_of(ch)).zero_();
      } else if (packed && is_final(o.name) && cut_of_packed(ch).second_from() > 0) {
        t = t.clone();
        t.narrow(o.sequence, 0, cut_of_packed(ch).second_from()).zero_();
      }
      out.set("d" + o.name, t);
    }
    return out;
  }

  NamedTensors second_cotangents(const ChunkedProblem& ch, const NamedTensors& cot) const override {
    NamedTensors out = cut_cotangents(cot, cut_of(ch), seq_of(ch) - cut_of(ch));
    // The whole call's final states are the second's (packed: of the sequences it holds).
    for (const auto& [initial, final] : s_.states) {
      const T d = cot.get("d" + final);
      if (!d.defined()) continue;
      if (!is_packed(ch.whole.c, s_)) {
        out.set("d" + final, d);
      } else {
        const Cut at = cut_of_packed(ch);
        out.set("d" + final, narrowed(d, laid(final).sequence, at.second_from(), at.second_count()));
      }
    }
    return out;
  }

  NamedTensors first_cotangents(const ChunkedProblem& ch, const NamedTensors& cot,
                                const NamedTensors& second_grads) const override {
    NamedTensors out = cut_cotangents(cot, 0, cut_of(ch));
    for (const auto& [initial, final] : s_.states) {
      if (!second_grads.has("d" + initial)) continue;
      const T handed = second_grads.get("d" + initial);
      if (!is_packed(ch.whole.c, s_)) {
        out.set("d" + final, handed);
        continue;
      }
      // The sequences the first part ends take the whole's cotangents (zero: above); the
      // cut one the second part's gradient of its initial state.
      const Cut at = cut_of_packed(ch);
      const int64_t dim = laid(final).sequence;
      std::vector<T> rows;
      if (at.second_from() > 0) {
        const T d = cot.get("d" + final);
        rows.push_back(d.defined() ? narrowed(d, dim, 0, at.second_from()).to(handed.scalar_type())
                                   : zero_rows(handed, dim, at.second_from()));
      }
      if (at.continued) rows.push_back(handed.narrow(dim, 0, 1));
      out.set("d" + final, at::cat(rows, dim));
    }
    return out;
  }

  NamedTensors join_outputs(const ChunkedProblem& ch, const NamedTensors& first,
                            const NamedTensors& second) const override {
    NamedTensors out;
    for (const auto& o : layouts_.outputs) {
      if (is_final(o.name)) {
        if (!ch.whole.c.flag(s_.final_flag) || !second.has(o.name)) continue;
        const int64_t ended = is_packed(ch.whole.c, s_) ? cut_of_packed(ch).second_from() : 0;
        out.set(o.name, ended > 0 ? at::cat({first.get(o.name).narrow(o.sequence, 0, ended), second.get(o.name)}, o.sequence)
                                  : second.get(o.name));
      } else if (o.time >= 0 && first.has(o.name)) {
        out.set(o.name, at::cat({first.get(o.name), second.get(o.name)}, o.time));
      }
    }
    return out;
  }

  NamedTensors join_grads(const ChunkedProblem& ch, const NamedTensors& first,
                          const NamedTensors& second) const override {
    NamedTensors out;
    for (const auto& in : layouts_.inputs) {
      const std::string g = "d" + in.name;
      if (is_initial(in.name)) {
        if (!ch.whole.c.flag(s_.initial_flag) || !first.has(g)) continue;
        // Packed: the sequences after the cut one start in the second part.
        const Cut at = is_packed(ch.whole.c, s_) ? cut_of_packed(ch) : Cut{};
        const int64_t after = at.second_count() - (at.continued ? 1 : 0);
        out.set(g, after > 0 && second.has(g)
                       ? at::cat({first.get(g), second.get(g).narrow(in.sequence, at.continued ? 1 : 0, after)}, in.sequence)
                       : first.get(g));
      } else if (first.has(g) && second.has(g)) {
        out.set(g, in.time >= 0 ? at::cat({first.get(g), second.get(g)}, in.time)
                                : first.get(g) + second.get(g));
      }
    }
    return out;
  }

  // ---- packed vs separate: each sequence (a dense case's batch row) on its own ------
  std::optional<std::vector<Problem>> separate(const Problem& packed) const override {
    const std::vector<Part> parts = parts_of(packed.c, s_);
    // One dense row has nothing to be separated from; one packed sequence still goes
    // through the kernel's varlen path against its dense one.
    if (parts.size() < 2 && !is_packed(packed.c, s_)) return std::nullopt;
    std::vector<Problem> out;
    for (const Part& part : parts) {
      Problem p{case_of(packed.c, s_, part), {}};
      for (const auto& in : layouts_.inputs) {
        const T t = packed.inputs.get(in.name);
        if (t.defined() && in.name != s_.offsets) p.inputs.set(in.name, part_of(t, in, part));
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  NamedTensors join_separate_outputs(const Problem& packed, const std::vector<NamedTensors>& parts) const override {
    return joined(layouts_.outputs, "", is_packed(packed.c, s_), parts);
  }

  NamedTensors join_separate_grads(const Problem& packed, const std::vector<NamedTensors>& parts) const override {
    return joined(layouts_.inputs, "d", is_packed(packed.c, s_), parts);
  }

  NamedTensors separate_cotangents(const Problem& packed, size_t part,
                                   const NamedTensors& cot) const override {
    const Part p = parts_of(packed.c, s_).at(part);
    NamedTensors out;
    for (const auto& o : layouts_.outputs) {
      const T t = cot.get("d" + o.name);
      if (t.defined()) out.set("d" + o.name, part_of(t, o, p));
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
  // Where a cut at token `cut` leaves a packed case's sequences: the lengths of each
  // part, and whether the cut falls inside a sequence (which the second part continues).
  struct Cut {
    std::vector<int64_t> first, second;
    bool continued = false;
    int64_t m() const { return static_cast<int64_t>(first.size()); }  // sequences in the first
    // The whole's index of the second part's first sequence, and how many it holds.
    int64_t second_from() const { return m() - (continued ? 1 : 0); }
    int64_t second_count() const { return static_cast<int64_t>(second.size()); }
  };
  Cut cut_packed(const Case& c, int64_t cut) const {
    Cut at;
    int64_t bos = 0;
    for (const int64_t length : c.integers(s_.lengths)) {
      const int64_t eos = bos + length;
      if (eos <= cut) {
        at.first.push_back(length);
      } else if (bos < cut) {
        at.first.push_back(cut - bos);
        at.second.push_back(eos - cut);
        at.continued = true;
      } else {
        at.second.push_back(length);
      }
      bos = eos;
    }
    return at;
  }
  Cut cut_of_packed(const ChunkedProblem& ch) const { return cut_packed(ch.whole.c, cut_of(ch)); }
  const Laid& laid(const std::string& name) const {
    for (const auto* list : {&layouts_.inputs, &layouts_.outputs})
      for (const auto& t : *list)
        if (t.name == name) return t;
    throw std::logic_error("token_sequences: no tensor " + name);
  }
  int64_t seq_of(const ChunkedProblem& ch) const { return ch.whole.c.integer(s_.time); }
  int64_t cut_of(const ChunkedProblem& ch) const { return ch.first.c.integer(s_.time); }

  NamedTensors cut_cotangents(const NamedTensors& cot, int64_t start, int64_t length) const {
    NamedTensors out;
    for (const auto& o : layouts_.outputs) {
      const T t = cot.get("d" + o.name);
      if (t.defined() && o.time >= 0) out.set("d" + o.name, narrowed(t, o.time, start, length));
    }
    return out;
  }

  TokenSequences s_;
  Layouts layouts_;  // the spec's tensors as laid out
};

ParamSpec& param_named(KernelSpec& spec, const std::string& name) {
  for (auto& p : spec.params)
    if (p.name == name) return p;
  throw std::logic_error("packed_layout: kernel " + spec.name + " has no parameter " + name);
}

// The extent `p` as the layout has it: a packed case's is `packed(c)`.
void bounded_by_layout(ParamSpec& p, const TokenSequences& s,
                       std::function<Bounds(const Case&)> packed) {
  const auto dense = p.bounds;
  const Bounds fixed = p.static_bounds;
  p.depends_on.push_back(s.layout);
  p.depends_on.push_back(s.lengths);
  p.bounds = [s, dense, fixed, packed](const Case& c, size_t index) {
    if (is_packed(c, s)) return packed(c);
    return dense ? dense(c, index) : fixed;
  };
}

}  // namespace

std::unique_ptr<SequenceFamily> token_sequences(const KernelSpec& spec, TokenSequences s) {
  return std::make_unique<Declared>(spec, std::move(s));
}

void packed_layout(KernelSpec& spec, TokenSequences& s, std::vector<IntOption> length_draws) {
  s.layout = "layout";
  s.lengths = "lengths";
  s.offsets = "cu_seqlens";
  s.sequences = "sequences";
  constexpr int64_t kMostSequences = 64;
  ParamSpec layout = choice_param(
      s.layout, "dense: `batch` rows of `seq` tokens; packed: one row of sequences of `lengths` "
                "tokens each, told apart by cu_seqlens",
      {"dense", "packed"}, {70, 30});
  layout.before_it_existed = std::string("dense");
  ParamSpec lengths = param_spec(s.lengths, ParamType::integers,
                                 "tokens of each packed sequence (none in a dense case)",
                                 std::vector<int64_t>{});
  lengths.before_it_existed = std::vector<int64_t>{};
  lengths.depends_on = {s.layout};
  lengths.within(1, 4096).drawn(std::move(length_draws));
  lengths.element_simplest = 1;
  lengths.list.max_count = kMostSequences;
  lengths.list.count = [layout = s.layout](const Case& c) {
    return c.choice(layout) == "packed" ? Bounds{1, kMostSequences, "a packed case has sequences"}
                                        : Bounds{0, 0, "a dense case has none"};
  };
  lengths.list.drawn_max_count = [](const DrawContext& ctx) { return ctx.limit("max_sequences"); };
  lengths.limit = Limit{"max_sequences", 4, 1, kMostSequences, "most packed sequences a case draws"};
  const auto at_batch = std::find_if(spec.params.begin(), spec.params.end(),
                                     [&](const ParamSpec& p) { return p.name == s.batch; });
  spec.params.insert(spec.params.insert(at_batch, std::move(lengths)), std::move(layout));

  bounded_by_layout(param_named(spec, s.batch), s,
                    [](const Case&) { return Bounds{1, 1, "a packed case is one row"}; });
  bounded_by_layout(param_named(spec, s.time), s, [s](const Case& c) {
    const auto& L = c.integers(s.lengths);
    const int64_t sum = std::accumulate(L.begin(), L.end(), int64_t{0});
    return Bounds{sum, sum, "a packed row holds the lengths' sum"};
  });

  spec.dims.push_back(Dim{s.sequences, [s](const Case& c) {
                            return is_packed(c, s) ? static_cast<int64_t>(c.integers(s.lengths).size())
                                                   : c.integer(s.batch);
                          }});
  spec.dims.push_back(Dim{"offsets", [s](const Case& c) {
                            return static_cast<int64_t>(c.integers(s.lengths).size()) + 1;
                          }});
  spec.inputs.push_back(TensorSpec(s.offsets, {"offsets"})
                            .when([s](const Case& c) { return is_packed(c, s); })
                            .computed([s](const Case& c) { return offsets_of(c.integers(s.lengths)); }));
}

OpFunction one_sequence_at_a_time(const KernelSpec& spec, const TokenSequences& s, OpFunction single) {
  return [layouts = Layouts(spec, s), s, single](const OpArgs& a) {
    const T offsets = a[s.offsets];
    if (!offsets.defined()) return single(a);
    std::vector<NamedTensors> results;
    for (const Part& part : parts_of(offsets)) {
      OpArgs one = a;
      for (const auto& in : layouts.inputs) {
        const T t = a[in.name];
        if (t.defined() && in.name != s.offsets) one.set(in.name, part_of(t, in, part));
      }
      one.set(s.offsets, c10::IValue());
      results.push_back(single(one));
    }
    return joined(layouts.outputs, "", true, results);
  };
}

SharedMagnitudes one_sequence_at_a_time(const KernelSpec& spec, const TokenSequences& s,
                                        SharedMagnitudes single) {
  return std::make_shared<const std::function<NamedTensors(const Exact&)>>(
      [layouts = Layouts(spec, s), s, single](const Exact& e) {
        if (!is_packed(e.c, s)) return (*single)(e);
        std::vector<NamedTensors> results;
        for (const Part& part : parts_of(e.c, s)) {
          const Case c = case_of(e.c, s, part);
          Exact one{c, {}};
          for (const auto& [name, t] : e.tensors) {
            if (name == s.offsets) continue;
            const Laid* l = layouts.find(name);
            one.tensors.set(name, l ? part_of(t, *l, part) : t);
          }
          results.push_back((*single)(one));
        }
        return layouts.joined_by_name(true, results);
      });
}

}  // namespace kprop
