// SplitMix64 with Box-Muller: the generator behind every tensor kprop draws
// (harness/model/random_tensor.h), written out so that replay depends on no library's
// random number generator.
//
// SplitMix64 is counter-based: its k-th word (k = 1, 2, ...) is mix(state + k * gamma).
// That is what lets a device compute a whole stream at once, and lets the host compute
// one element anywhere in it (at()).
#pragma once

#include <cmath>
#include <cstdint>

namespace kprop {

class SplitMix64 {
 public:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  static constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ULL;
  static constexpr uint64_t kMix2 = 0x94D049BB133111EBULL;

  explicit SplitMix64(uint64_t state) : state_(state) {}
  // The generator of `state` after `words` words were taken (and no normal is pending).
  static SplitMix64 at(uint64_t state, uint64_t words) { return SplitMix64(state + words * kGamma); }

  uint64_t next() {
    uint64_t z = (state_ += kGamma);
    z = (z ^ (z >> 30)) * kMix1;
    z = (z ^ (z >> 27)) * kMix2;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Box-Muller gives two independent normals per draw (two words): r cos first, then the
  // r sin kept for the next call.
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

// The stream of input `stream` of a case's seed.
inline uint64_t stream_state(uint64_t seed, uint64_t stream) {
  return seed ^ (0xD1B54A32D192ED03ULL * (stream + 1));
}

}  // namespace kprop
