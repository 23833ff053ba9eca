// Choice sources: where a generator's decisions come from (docs/design.md §6).
//
// A kernel's generator is written once (generators/draw.h walks its schema); every
// decision it makes is one call to a ChoiceSource, as in Hypothesis and google/fuzztest:
//   RandomChoices   a deterministic stream from a seed: the searches
//   ByteChoices     a fuzzer's bytes: fixed-width reads, exhausted input reads as 0
//   ChoiceRecorder  writes the bytes that make ByteChoices decode a given case
// Option 0 is always the simplest, so all-zero bytes decode to the simplest case and
// a zero byte in a list's "one more?" flag ends the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kprop {

class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;
  // One of weights.size() options; 0 is the simplest. Random draws follow the weights;
  // `wanted` is what a recorder must produce (ignored when drawing).
  virtual size_t pick(const std::vector<uint32_t>& weights, size_t wanted) = 0;
  // An integer in [0, n), n >= 1; 0 is the simplest.
  virtual uint64_t below(uint64_t n, uint64_t wanted) = 0;
  // The data seed: 64 bits from a fixed place (bytes 0..7), so that a mutation of the
  // structure keeps the tensor contents.
  virtual uint64_t data_seed(uint64_t wanted) = 0;
  // True when the source records a known case: the generator must then pass `wanted`.
  virtual bool recording() const { return false; }
};

// SplitMix64: small, fast, and the same on every platform.
class RandomChoices final : public ChoiceSource {
 public:
  explicit RandomChoices(uint64_t seed) : state_(seed) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  uint64_t next();

 private:
  uint64_t state_;
};

class ByteChoices final : public ChoiceSource {
 public:
  ByteChoices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  size_t consumed() const { return cursor_; }

 private:
  uint64_t read(int width);  // big-endian; bytes past the end read as 0
  const uint8_t* data_;
  size_t size_;
  size_t cursor_ = 8;  // bytes 0..7 hold the data seed
};

class ChoiceRecorder final : public ChoiceSource {
 public:
  ChoiceRecorder() : bytes_(8, 0) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  bool recording() const override { return true; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void write(uint64_t value, int width);
  std::vector<uint8_t> bytes_;
};

}  // namespace kprop
