// The portable kernel path: plain C++ for any CPU, one sequential f32 sum
// per output (tiles of 2 x 2 outputs for some instruction-level overlap).
// bf16 operands are widened as they are read, which is exact.
#include <bit>

#include "gemm_tiles.hpp"

namespace linnet::tensor::gemm::detail {
namespace {

struct ScalarLanes {
  using Acc = float;
  using Vec = float;
  static constexpr int64_t kStep = 1;
  static constexpr int kRows = 2;
  // Blocks of x rows by w rows, and the part of the inner dimension they
  // share at a time (gemm_tiles.hpp).
  static constexpr int64_t kBlockRows = 64;
  static constexpr int64_t kBlockOutputs = 64;
  static constexpr int64_t kPart = (int64_t{1} << 40);
  static constexpr int kCols = 2;
  static Acc zero() { return 0.0f; }
  static Vec load(const float* p) { return *p; }
  static Vec load(const uint16_t* p) { return std::bit_cast<float>(static_cast<uint32_t>(*p) << 16); }
  // With one lane a step never runs past the end; the tile never calls these.
  static Vec load_part(const float* p, int) { return load(p); }
  static Vec load_part(const uint16_t* p, int) { return load(p); }
  // Separate multiply and add (the build does not contract them into FMA).
  static Acc madd(Acc acc, Vec a, Vec b) { return acc + a * b; }
  static float sum(Acc acc) { return acc; }
};

}  // namespace

void block_scalar(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                 void* scratch) {
  run_block_any<ScalarLanes>(p, row_begin, row_end, out_begin, out_end, scratch);
}

}  // namespace linnet::tensor::gemm::detail
