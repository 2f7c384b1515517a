// The collectives of std.nn.parallel across processes, and the dispatcher
// that puts them in place of the ops' bodies.
//
// In one process `all_reduce(x)` is `x` and `all_gather` lays `Shards`
// copies of its argument side by side (stdlib/nn/parallel.linnet). When a
// card runs as N > 1 processes, each holding its part of the split
// weights, they communicate instead (docs/semantics.md, "Collectives"):
//
//   all_reduce   every process's partial, gathered, added in rank order
//                (0 + 1 + ... + N-1): each process gets the same bits.
//                f32 and f64 add in their own dtype. bf16 and f16 add in
//                f32 and round once under `equivalent` and `fast`; under
//                `exact`, each sum is rounded to the dtype as a bf16 `+`
//                is.
//   all_gather   `[R, N]` parts side by side along the last axis, rank r's
//                at columns r*N .. (r+1)*N: `[R, Shards * N]`, exactly.
//   shared       the identity (its body).
//
// They run under every numerics policy: they are communication, not an
// optional kernel. The dispatcher offers them ahead of the op table, and
// runs the body of any other op with a `Shards` generic above 1 (such as
// std.nn.loss::split_cross_entropy), so that the collectives inside it
// communicate rather than a kernel seeing only this process's part.
#pragma once

#include <memory>
#include <optional>

#include "linnet/dist/communicator.hpp"
#include "linnet/eval/dispatch.hpp"
#include "linnet/tensor/tensor.hpp"

namespace linnet::dist {

inline constexpr const char* kAllReduce = "std.nn.parallel::all_reduce";
inline constexpr const char* kAllGather = "std.nn.parallel::all_gather";

// The sum over the group of every process's `partial` (same dtype and
// shape on every process), as described above. Throws eval::EvalError
// (E6006) for a dtype that is not a float.
tensor::Tensor all_reduce(const tensor::Tensor& partial, Communicator& group, eval::NumericsPolicy policy);

// Every process's `[R, N]` `part` side by side: `[R, size * N]`. Throws
// eval::EvalError (E6006) when `part` is not of rank 2.
tensor::Tensor all_gather(const tensor::Tensor& part, Communicator& group);

// Offers the collectives (and declines `Shards`-sized ops, see above)
// before passing a call to `inner` (may be null: bodies for the rest).
class CollectiveDispatcher : public eval::OpDispatcher {
 public:
  CollectiveDispatcher(std::shared_ptr<eval::OpDispatcher> inner, std::shared_ptr<Communicator> group);
  std::optional<eval::Value> try_native(const eval::NativeCall& call) override;

 private:
  std::shared_ptr<eval::OpDispatcher> inner_;
  std::shared_ptr<Communicator> group_;
};

}  // namespace linnet::dist
