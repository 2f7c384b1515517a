// Binding one process's part of a checkpoint when a card runs across
// processes (`mpirun -np N linnet ... --bind Shards=N`).
//
// At `Shards = N` a card declares each process's part of a split weight:
// `q_proj` is `[Heads / Shards * HeadDim, H]` while the checkpoint holds
// `[Heads * HeadDim, H]`. A parameter binds
//   - the whole stored tensor when its declared shape is the stored one
//     (norms, the embedding table): every process holds it;
//   - else part r of N equal parts along the one axis whose stored extent
//     is N times the declared one, on the process of rank r;
// and anything else is an E6003 diagnostic before any tensor is read. A
// part along axis 0 is contiguous in the file and is borrowed from the
// mapping (no copy); a part along a later axis (`o_proj`, `down_proj`) is
// copied out once, alone, and the mapped pages it came from are released.
// No process reads or holds the whole of a split tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "linnet/eval/parameters.hpp"
#include "linnet/nest/bindings.hpp"
#include "linnet/nest/checkpoint.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::nest {

// The axis along which `stored` is `shards` parts of `declared`: the only
// axis where they differ, the stored extent being `shards` times the
// declared one. Nothing when the shapes are equal (the whole tensor binds)
// or differ otherwise.
std::optional<size_t> split_axis(const tensor::Shape& declared, const std::vector<int64_t>& stored, int64_t shards);

// check_parameters for a process that holds 1/`shards` of every split
// tensor: the same problems (missing tensors, dtypes), with each split
// tensor's stored shape accepted, and one E6003 diagnostic for a stored
// shape that is neither the declared one nor `shards` parts of it.
std::vector<syntax::Diagnostic> check_sharded_parameters(const std::vector<eval::ParameterInfo>& manifest,
                                                         const Checkpoint& checkpoint, const Bindings& bindings,
                                                         int64_t shards, bool cast_weights = false);

// The checkpoint source of the process of rank `rank` among `shards`.
class ShardedParameterSource : public CheckpointParameterSource {
 public:
  ShardedParameterSource(const Checkpoint& checkpoint, const Bindings& bindings, int64_t rank, int64_t shards,
                         bool cast_weights = false, WeightPlacement placement = WeightPlacement::Packed);
  std::optional<tensor::Tensor> fetch(const eval::ParameterRequest& request) override;

 private:
  int64_t rank_;
  int64_t shards_;
};

// The bound `Shards` generic, or nothing when it is not bound.
std::optional<int64_t> bound_shards(const eval::GenericBindings& generics);

// Whether `root` at these generics can run as `processes` processes:
// several need a root block with a `Shards` generic bound to their
// number, and a bound `Shards` above 1 needs that many processes. Reports
// E2111 and returns false otherwise.
bool check_process_count(const RootBlock& root, const eval::GenericBindings& generics, int processes,
                         syntax::Diagnostics& diagnostics);

}  // namespace linnet::nest
