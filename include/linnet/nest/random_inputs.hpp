// Random entry inputs (`--input NAME=random`), for running a program
// without writing its inputs out.
//
// A value is made from the parameter's declared dtype and its concrete
// shape (the bound generics must decide every axis):
//   float dtypes   uniform in [-1, 1), rounded to the dtype
//   integer dtypes small non-negative integers, in [0, 8) for a tensor; a
//                  scalar is taken as a position and lies in [0, limit),
//                  where `limit` is the caller's smallest bound dimension
//   bool           true or false with equal odds
// The values depend only on the seed and the parameter's name, so the same
// seed gives the same inputs whatever order the inputs are given in.
#pragma once

#include <cstdint>

#include "linnet/nest/inputs.hpp"
#include "linnet/tensor/tensor.hpp"

namespace linnet::nest {

// Integers of a random integer tensor lie in [0, this).
inline constexpr int64_t random_integer_bound = 8;

// A random value for `slot`; throws InputError when the slot has no
// concrete shape or dtype (slot.shape_problem says why). `position_limit`
// bounds an integer scalar (at least 1).
tensor::Tensor random_input(const InputSlot& slot, uint64_t seed, int64_t position_limit);

}  // namespace linnet::nest
