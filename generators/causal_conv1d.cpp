#include "generators/causal_conv1d.h"

#include <rapidcheck.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace kprop {
namespace {

using rc::Gen;
using rc::Seq;
namespace gen = rc::gen;
using Lengths = std::vector<int64_t>;

// Row tiles BT of the Ascend kernels (kernels/causal_conv1d/tiling.h): BT is a power of
// two, at most 8 (backward with state), 16 (forward with state) or 32 (without state).
constexpr int64_t kTileRows[] = {1, 2, 4, 8, 16, 32};
// The forward kernel without an initial state uses BD = 256 and refuses other widths.
constexpr int64_t kStatelessBlockChannels = 256;
constexpr int64_t kChannelQuantum = 32;

// The biased draws below pick values from lumpy distributions; shrinking must still walk
// a straight line toward the simplest value, so it is defined on the value, not on the
// choices that produced it.
Gen<int64_t> shrinking_toward(int64_t simplest, Gen<int64_t> draw) {
  return gen::shrink(gen::noShrink(std::move(draw)), [simplest](int64_t x) {
    return rc::shrink::towards<int64_t>(x, simplest);
  });
}

Gen<bool> flag(std::size_t percent_on) {
  return gen::shrink(gen::weightedElement<bool>({{percent_on, true}, {100 - percent_on, false}}),
                     [](bool on) { return rc::shrink::boolean(on); });
}

// Draws one value per generator, each from its own split of the random state, so a
// prefix of the generators draws the same values whatever follows it.
Gen<Lengths> one_from_each(std::vector<Gen<int64_t>> gens) {
  return [gens](const rc::Random& random, int size) {
    rc::Random r(random);
    Lengths values;
    for (const auto& g : gens) values.push_back(g(r.split(), size).value());
    return rc::shrinkable::just(std::move(values));
  };
}

Seq<int64_t> toward_one(int64_t x) { return rc::shrink::towards<int64_t>(x, 1); }

// ---- window --------------------------------------------------------------------------

// 4 is the shipped width; 2..4 is where most models live; 8 is the widest `clamped` takes.
Gen<int64_t> window() {
  return shrinking_toward(
      2, gen::weightedElement<int64_t>(
             {{40, 4}, {15, 2}, {15, 3}, {8, 5}, {6, 6}, {6, 7}, {10, 8}}));
}

// ---- segment lengths -----------------------------------------------------------------

Lengths tile_edges(int64_t longest) {
  Lengths edges;
  for (int64_t bt : kTileRows)
    for (int64_t L : {bt - 1, bt, bt + 1})
      if (L >= 1 && L <= longest) edges.push_back(L);
  return edges;
}

Lengths power_of_two_edges(int64_t largest_power) {
  Lengths edges;
  for (int64_t p = 1; p <= largest_power; p *= 2)
    for (int64_t L : {p - 1, p, p + 1})
      if (L >= 1) edges.push_back(L);
  return edges;
}

// A segment length in 1..4*max_length, mostly at the window and tile boundaries where
// chunks of a packed batch meet the edges of their sequences.
Gen<int64_t> segment_length(int64_t W, int64_t max_length) {
  const int64_t typical = std::max<int64_t>(1, max_length);
  const int64_t longest = 4 * typical;
  const auto fit = [longest](int64_t L) { return std::clamp<int64_t>(L, 1, longest); };
  return shrinking_toward(
      1, gen::weightedOneOf<int64_t>({
             {14, gen::just<int64_t>(1)},
             {12, gen::just(fit(W - 1))},
             {12, gen::just(fit(W))},
             {8, gen::just(fit(W + 1))},
             {18, gen::elementOf(tile_edges(longest))},
             {12, gen::elementOf(power_of_two_edges(2 * typical))},
             {20, gen::inRange<int64_t>(1, typical + 1)},
             {4, gen::inRange<int64_t>(1, longest + 1)},
         }));
}

// Few segments most of the time: most packing bugs need only two neighbours.
Gen<int64_t> segment_count(int64_t max_segments) {
  const int64_t most = std::max<int64_t>(1, max_segments);
  const auto upto = [most](int64_t n) { return std::min(n, most); };
  return gen::weightedOneOf<int64_t>({
      {30, gen::just<int64_t>(1)},
      {25, gen::just(upto(2))},
      {20, gen::just(upto(3))},
      {25, gen::inRange<int64_t>(1, most + 1)},
  });
}

// Dense batches are small: the interesting part is B > 1 with equal lengths.
Gen<int64_t> dense_batch(int64_t max_segments) {
  const int64_t most = std::clamp<int64_t>(max_segments, 1, 4);
  return gen::weightedOneOf<int64_t>({
      {35, gen::just<int64_t>(1)},
      {30, gen::just(std::min<int64_t>(2, most))},
      {20, gen::just(std::min<int64_t>(3, most))},
      {15, gen::just(most)},
  });
}

// ---- sequences: layout and lengths, shrunk together ---------------------------------

struct Sequences {
  Layout layout;
  Lengths lengths;
};

Sequences dense(int64_t batch, int64_t length) {
  return {Layout::dense, Lengths(static_cast<std::size_t>(batch), length)};
}

// Fewer segments first (never none), then shorter ones.
Seq<Lengths> shrink_packed_lengths(const Lengths& lengths) {
  return rc::seq::concat(
      rc::seq::filter(rc::shrink::removeChunks(lengths),
                      [](const Lengths& l) { return !l.empty(); }),
      rc::shrink::eachElement(lengths, toward_one));
}

// A dense batch shrinks to fewer or shorter sequences, keeping them equal, and last to the
// packed layout (the default) with the same lengths.
Seq<Sequences> shrink_sequences(const Sequences& s) {
  if (s.layout == Layout::packed)
    return rc::seq::map(shrink_packed_lengths(s.lengths),
                        [](Lengths l) { return Sequences{Layout::packed, std::move(l)}; });
  const auto batch = static_cast<int64_t>(s.lengths.size());
  const int64_t length = s.lengths.front();
  return rc::seq::concat(
      rc::seq::map(rc::shrink::towards<int64_t>(batch, 1),
                   [length](int64_t b) { return dense(b, length); }),
      rc::seq::map(toward_one(length), [batch](int64_t l) { return dense(batch, l); }),
      rc::seq::just(Sequences{Layout::packed, s.lengths}));
}

Gen<Sequences> packed_sequences(int64_t W, const CaseSpace& space) {
  const auto length = segment_length(W, space.max_length);
  return gen::mapcat(segment_count(space.max_segments), [length](int64_t count) {
    return gen::map(gen::container<Lengths>(static_cast<std::size_t>(count), length),
                    [](Lengths l) { return Sequences{Layout::packed, std::move(l)}; });
  });
}

Gen<Sequences> dense_sequences(int64_t W, const CaseSpace& space) {
  return gen::apply(&dense, dense_batch(space.max_segments),
                    segment_length(W, space.max_length));
}

Gen<Sequences> sequences(int64_t W, const CaseSpace& space) {
  Gen<Sequences> draw = packed_sequences(W, space);
  if (space.allow_dense)
    draw = gen::weightedOneOf<Sequences>({{80, draw}, {20, dense_sequences(W, space)}});
  return gen::shrink(gen::noShrink(draw), &shrink_sequences);
}

// ---- split points for whole-vs-chunked -----------------------------------------------

Gen<int64_t> split_point(int64_t W, int64_t length) {
  const auto inside = [length](int64_t s) { return std::clamp<int64_t>(s, 1, length); };
  return gen::weightedOneOf<int64_t>({
      {25, gen::just<int64_t>(1)},
      {15, gen::just(inside(W - 1))},
      {15, gen::just(inside(W))},
      {15, gen::just(inside(length - 1))},
      {15, gen::just(length)},
      {15, gen::inRange<int64_t>(1, length + 1)},
  });
}

// Empty (the default half split) is the simplest; explicit splits shrink toward 1, which
// stays inside 1..length.
Seq<Lengths> shrink_splits(const Lengths& splits) {
  if (splits.empty()) return {};
  return rc::seq::concat(rc::seq::just(Lengths{}), rc::shrink::eachElement(splits, toward_one));
}

Gen<Lengths> splits(int64_t W, const Lengths& lengths) {
  std::vector<Gen<int64_t>> per_sequence;
  for (int64_t L : lengths) per_sequence.push_back(split_point(W, L));
  return gen::shrink(
      gen::weightedOneOf<Lengths>({{70, one_from_each(per_sequence)}, {30, gen::just(Lengths{})}}),
      &shrink_splits);
}

// ---- shape: W, then the sequences it biases, then splits inside them -----------------

struct Shape {
  int64_t W;
  Sequences sequences;
  Lengths splits;
};

// Built with mapcat so that lengths are drawn from W and splits from lengths: when W or a
// length shrinks, what depends on it is redrawn from the same choices, and stays valid.
Gen<Shape> shape(const CaseSpace& space) {
  return gen::mapcat(window(), [space](int64_t W) {
    return gen::mapcat(sequences(W, space), [W](Sequences s) {
      return gen::map(splits(W, s.lengths), [W, s](Lengths split) {
        return Shape{W, s, std::move(split)};
      });
    });
  });
}

// ---- channels and the initial state they depend on -----------------------------------

Gen<int64_t> multiple_of(int64_t quantum, Gen<int64_t> multiplier) {
  return gen::map(shrinking_toward(1, std::move(multiplier)),
                  [quantum](int64_t k) { return quantum * k; });
}

// Without h0 the device forward needs D % 256 == 0; most such cases respect it and shrink
// within it (a legal D never shrinks into the error path), the rest exercise the error.
Gen<int64_t> channels(bool has_initial_state) {
  const auto any_width = multiple_of(
      kChannelQuantum, gen::weightedElement<int64_t>({{55, 1}, {15, 2}, {10, 3}, {12, 4}, {8, 8}}));
  if (has_initial_state) return any_width;
  const auto device_width =
      multiple_of(kStatelessBlockChannels, gen::weightedElement<int64_t>({{85, 1}, {15, 2}}));
  return gen::weightedOneOf<int64_t>({{90, device_width}, {10, any_width}});
}

struct StateAndChannels {
  bool has_initial_state;
  int64_t D;
};

Gen<StateAndChannels> state_and_channels() {
  return gen::mapcat(flag(75), [](bool h0) {
    return gen::map(channels(h0), [h0](int64_t D) { return StateAndChannels{h0, D}; });
  });
}

// ---- the rest ------------------------------------------------------------------------

Gen<int64_t> num_cores() {
  std::vector<int64_t> powers_of_two;
  for (int64_t p = 1; p <= 64; p *= 2) powers_of_two.push_back(p);
  // 40% on the vector-core counts of real Ascend parts, 48 (the 910B2C) the most.
  const auto real_counts =
      gen::weightedElement<int64_t>({{16, 48}, {6, 20}, {6, 24}, {6, 30}, {6, 40}});
  return shrinking_toward(1, gen::weightedOneOf<int64_t>({
                                 {40, real_counts},
                                 {20, gen::inRange<int64_t>(1, 9)},
                                 {15, gen::elementOf(powers_of_two)},
                                 {25, gen::inRange<int64_t>(1, 65)},
                             }));
}

Gen<DType> dtype(std::vector<DType> dtypes) {
  if (dtypes.empty()) dtypes.push_back(DType::float32);
  std::vector<int64_t> indices;
  for (std::size_t i = 0; i < dtypes.size(); ++i) indices.push_back(static_cast<int64_t>(i));
  return gen::map(shrinking_toward(0, gen::elementOf(indices)),
                  [dtypes](int64_t i) { return dtypes[static_cast<std::size_t>(i)]; });
}

Gen<Activation> activation() {
  return gen::map(flag(50), [](bool silu) { return silu ? Activation::silu : Activation::none; });
}

// Uniform over all 64 bits whatever the size; it names tensor contents, so it never shrinks.
Gen<uint64_t> data_seed() {
  return gen::noShrink(Gen<uint64_t>([](const rc::Random& random, int) {
    return rc::shrinkable::just(rc::Random(random).next());
  }));
}

Gen<Distribution> distribution() {
  return gen::shrink(gen::weightedElement<Distribution>({{70, Distribution::normal},
                                                         {10, Distribution::uniform},
                                                         {10, Distribution::heavy_tailed},
                                                         {10, Distribution::small_integers}}),
                     [](Distribution d) {
                       return d == Distribution::normal ? Seq<Distribution>()
                                                        : rc::seq::just(Distribution::normal);
                     });
}

}  // namespace

rc::Gen<Case> causal_conv1d_cases(const CaseSpace& space) {
  // Shrinks are offered in argument order: structure first, then channels and cores.
  return gen::apply(
      [space](Shape shape, StateAndChannels state, int64_t cores, DType dt, Activation act,
              bool bias, bool final_state_grad, uint64_t seed, Distribution dist) {
        Case c;
        c.kernel = "causal_conv1d";
        c.impl = space.impl;
        c.property = space.property;
        c.layout = shape.sequences.layout;
        c.lengths = std::move(shape.sequences.lengths);
        c.W = shape.W;
        c.splits = std::move(shape.splits);
        c.D = state.D;
        c.has_initial_state = state.has_initial_state;
        c.num_cores = cores;
        c.dtype = dt;
        c.activation = act;
        c.has_bias = bias;
        c.has_final_state_grad = final_state_grad;
        c.seed = seed;
        c.distribution = dist;
        return c;
      },
      shape(space), state_and_channels(), num_cores(), dtype(space.dtypes), activation(),
      flag(70), flag(50), data_seed(), distribution());
}

rc::Shrinkable<Case> draw_causal_conv1d_case(const CaseSpace& space, uint64_t seed, int size) {
  return causal_conv1d_cases(space)(rc::Random(seed), size);
}

}  // namespace kprop
