#include "harness/model/random_tensor.h"

#include <cmath>

#include "core/splitmix64.h"
#include "harness/model/host_values.h"

namespace kprop {

namespace {

// One element of `distribution`, from the words rng gives.
double draw(SplitMix64& rng, Distribution distribution) {
  switch (distribution) {
    case Distribution::normal: return rng.normal();
    case Distribution::uniform: return 2.0 * rng.uniform() - 1.0;
    case Distribution::heavy_tailed: {
      const double z = rng.normal();
      double chi2 = 0;
      for (int i = 0; i < 3; ++i) {
        const double n = rng.normal();
        chi2 += n * n;
      }
      return z / std::sqrt(chi2 / 3.0 + 1e-300);
    }
    case Distribution::small_integers: return static_cast<double>(rng.next() % 7) - 3.0;
  }
  return 0;
}

// Element i of the host's stream, computed where it starts: every element of a
// distribution takes the same number of words (a normal half a Box-Muller pair).
double host_element(uint64_t state, Distribution distribution, int64_t i) {
  const auto n = static_cast<uint64_t>(i);
  switch (distribution) {
    case Distribution::normal: {  // the pair of i, then its first or second value
      SplitMix64 rng = SplitMix64::at(state, 2 * (n / 2));
      const double first = rng.normal();
      return n % 2 == 0 ? first : rng.normal();
    }
    case Distribution::heavy_tailed: {  // four normals: two whole pairs
      SplitMix64 rng = SplitMix64::at(state, 4 * n);
      return draw(rng, distribution);
    }
    case Distribution::uniform:
    case Distribution::small_integers: {
      SplitMix64 rng = SplitMix64::at(state, n);
      return draw(rng, distribution);
    }
  }
  return 0;
}

// ---- the stream as ATen operations ------------------------------------------------------
// An int64 tensor holds the uint64 words' bits: ATen's int64 addition and multiplication
// wrap as uint64's do, and a logical shift is an arithmetic one masked.

at::Tensor shifted_right(const at::Tensor& z, int bits) {
  return z.__rshift__(bits).bitwise_and(static_cast<int64_t>(~0ULL >> bits));
}

// Words 1 .. n of the stream that starts at `state`.
at::Tensor words(uint64_t state, int64_t n, const c10::Device& device) {
  auto z = at::arange(1, n + 1, at::TensorOptions().dtype(at::kLong).device(device));
  z = z.mul(static_cast<int64_t>(SplitMix64::kGamma)).add(static_cast<int64_t>(state));
  z = z.bitwise_xor(shifted_right(z, 30)).mul(static_cast<int64_t>(SplitMix64::kMix1));
  z = z.bitwise_xor(shifted_right(z, 27)).mul(static_cast<int64_t>(SplitMix64::kMix2));
  return z.bitwise_xor(shifted_right(z, 31));
}

at::Tensor uniform_of(const at::Tensor& w) {
  return shifted_right(w, 11).to(at::kDouble).mul(0x1.0p-53);
}

// w mod m as uint64 would compute it (m > 0, below 2^62): (2q + b) mod m from q = w >> 1.
at::Tensor remainder_of(const at::Tensor& w, int64_t m) {
  return shifted_right(w, 1).remainder(m).mul(2).add(w.bitwise_and(1)).remainder(m);
}

// n normal values, each Box-Muller pair as the host computes it.
at::Tensor normals(uint64_t state, int64_t n, const c10::Device& device) {
  const int64_t pairs = (n + 1) / 2;
  const auto w = words(state, 2 * pairs, device).view({pairs, 2});
  const auto u1 = 1.0 - uniform_of(w.select(1, 0));
  const auto angle = uniform_of(w.select(1, 1)).mul(2.0 * M_PI);
  const auto r = u1.log().mul(-2.0).sqrt();
  return at::stack({r * angle.cos(), r * angle.sin()}, 1).view({-1}).narrow(0, 0, n);
}

// The float64 values of n elements, as ATen operations on `device`.
at::Tensor values_on(uint64_t state, Distribution distribution, int64_t n, const c10::Device& device) {
  switch (distribution) {
    case Distribution::normal: return normals(state, n, device);
    case Distribution::uniform: return uniform_of(words(state, n, device)).mul(2.0).sub(1.0);
    case Distribution::heavy_tailed: {
      const auto four = normals(state, 4 * n, device).view({n, 4});
      const auto sq = [&](int k) { return four.select(1, k) * four.select(1, k); };
      const auto chi2 = sq(1) + sq(2) + sq(3);
      return four.select(1, 0) / chi2.div(3.0).add(1e-300).sqrt();
    }
    case Distribution::small_integers:
      return remainder_of(words(state, n, device), 7).to(at::kDouble).sub(3.0);
  }
  return at::Tensor();
}

// On a device, or on the CPU while a test asks for the ATen forms (host_values.h).
bool as_aten_ops(const c10::Device& device) { return !device.is_cpu() || evaluate_as_on_a_device(); }

bool exact_everywhere(Distribution d) {  // no log, sin or cos on the way
  return d == Distribution::uniform || d == Distribution::small_integers;
}

at::Tensor drawn_on_the_host(const std::vector<int64_t>& sizes, Distribution distribution,
                             double scale, uint64_t state, DType dtype) {
  std::vector<double> values(c10::multiply_integers(sizes));
  SplitMix64 rng(state);
  for (double& v : values) v = draw(rng, distribution) * scale;
  return tensor_of(values.data(), sizes, scalar_type(dtype));
}

}  // namespace

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::float64: return at::kDouble;
    case DType::float32: return at::kFloat;
    case DType::bfloat16: return at::kBFloat16;
    case DType::float16: return at::kHalf;
  }
  return at::kFloat;
}

at::Tensor rounded_as_the_host(const at::Tensor& approx, at::ScalarType dtype,
                               const std::function<double(int64_t)>& host_value,
                               double tolerance) {
  TORCH_CHECK(dtype != at::kDouble, "rounded_as_the_host: float64 keeps every bit in doubt");
  const auto flat = approx.reshape({-1});
  const auto slack = flat.abs().mul(tolerance);
  auto rounded = [&](const at::Tensor& t) { return t.to(dtype).to(at::kDouble); };
  // Rounding is monotonic: where both ends of the interval round alike, so does every value
  // in it. A zero is in doubt for its sign.
  const auto in_doubt = rounded(flat - slack).ne(rounded(flat + slack)).logical_or(flat.eq(0));
  auto out = flat.to(dtype);
  const auto at_host = in_doubt.nonzero().view({-1}).cpu();
  if (at_host.numel() > 0) {
    std::vector<double> values(at_host.numel());
    const int64_t* index = at_host.data_ptr<int64_t>();
    for (size_t k = 0; k < values.size(); ++k) values[k] = host_value(index[k]);
    const auto fixed = tensor_of(values.data(), {at_host.numel()}, dtype);
    out.index_put_({at_host.to(out.device())}, fixed.to(out.device()));
  }
  return out.view(approx.sizes());
}

at::Tensor random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                         uint64_t seed, uint64_t stream, DType dtype, const c10::Device& device) {
  return scaled_random_tensor(sizes, distribution, 1.0, seed, stream, dtype, device);
}

at::Tensor scaled_random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                                double scale, uint64_t seed, uint64_t stream, DType dtype,
                                const c10::Device& device) {
  if (device.is_meta())  // the shape alone
    return at::empty(sizes, at::TensorOptions().dtype(scalar_type(dtype)).device(device));
  const uint64_t state = stream_state(seed, stream);
  if (!as_aten_ops(device) || (dtype == DType::float64 && !exact_everywhere(distribution))) {
    const auto t = drawn_on_the_host(sizes, distribution, scale, state, dtype);
    return device.is_cpu() ? t : t.to(device);
  }
  const int64_t n = c10::multiply_integers(sizes);
  // A product of doubles rounds alike everywhere: the exact draws stay exact.
  auto values = values_on(state, distribution, n, device);
  if (scale != 1.0) values = values.mul(scale);
  values = values.view(sizes);
  if (exact_everywhere(distribution) || n == 0) return values.to(scalar_type(dtype));
  // A scale's product rounds once more on each side (half a unit: relative 2^-53 each).
  return rounded_as_the_host(values, scalar_type(dtype), [&](int64_t i) {
    return host_element(state, distribution, i) * scale;
  }, scale == 1.0 ? kDrawTolerance : kDrawTolerance + 0x1.0p-52);
}

at::Tensor random_indices(const std::vector<int64_t>& sizes, int64_t below, int64_t special,
                          int special_percent, uint64_t seed, uint64_t stream,
                          const c10::Device& device) {
  TORCH_CHECK(below >= 1, "random_indices: no index below ", below);
  if (device.is_meta())  // the shape alone
    return at::empty(sizes, at::TensorOptions().dtype(at::kLong).device(device));
  const uint64_t state = stream_state(seed, stream);
  const auto n = static_cast<uint64_t>(below);
  // Two words per element whatever the share, so that the indices that are not special
  // stay where they were when the share changes.
  if (as_aten_ops(device)) {
    const int64_t count = c10::multiply_integers(sizes);
    const auto w = words(state, 2 * count, device).view({count, 2});
    const auto is_special = remainder_of(w.select(1, 0), 100).lt(special_percent);
    const auto index = remainder_of(w.select(1, 1), below);
    return at::where(is_special, at::full_like(index, special), index).view(sizes);
  }
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(at::kLong));
  int64_t* v = out.data_ptr<int64_t>();
  SplitMix64 rng(state);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const bool is_special = static_cast<int>(rng.next() % 100) < special_percent;
    const auto index = static_cast<int64_t>(rng.next() % n);
    v[i] = is_special ? special : index;
  }
  return out;
}

}  // namespace kprop
