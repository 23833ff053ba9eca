#include "harness/model/random_tensor.h"

#include <cmath>

#include "harness/model/host_values.h"

namespace kprop {

namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Box-Muller gives two independent normals per draw; the second is kept for the next.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * M_PI * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * M_PI * u2);
  }

 private:
  uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

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

at::Tensor random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                         uint64_t seed, uint64_t stream, DType dtype) {
  std::vector<double> values(c10::multiply_integers(sizes));
  SplitMix64 rng(seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
  for (double& v : values) v = draw(rng, distribution);
  return tensor_of(values.data(), sizes, scalar_type(dtype));
}

at::Tensor random_indices(const std::vector<int64_t>& sizes, int64_t below, int64_t special,
                          int special_percent, uint64_t seed, uint64_t stream) {
  TORCH_CHECK(below >= 1, "random_indices: no index below ", below);
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(at::kLong));
  int64_t* v = out.data_ptr<int64_t>();
  SplitMix64 rng(seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
  const auto n = static_cast<uint64_t>(below);
  for (int64_t i = 0; i < out.numel(); ++i) {
    // Two draws per element whatever the share, so that the indices that are not special
    // stay where they were when the share changes.
    const bool is_special = static_cast<int>(rng.next() % 100) < special_percent;
    const auto index = static_cast<int64_t>(rng.next() % n);
    v[i] = is_special ? special : index;
  }
  return out;
}

}  // namespace kprop
