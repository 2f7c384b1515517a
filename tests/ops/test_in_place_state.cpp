// In-place state: `cache = write_*(cache, ...)` stores the written rows into
// the state's own storage when nothing else holds it (the interpreter lets
// go of the state's reference for the call, eval's DeadAfterCall), copies
// when something does (the old value stays as it was), and a cache of the
// cards' 32768 positions takes no memory until its rows are written.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>

#include "eval/eval_test_util.hpp"
#include "linnet/ops/op_table.hpp"

using namespace eval_test;
using linnet::eval::MapParameterSource;

namespace {

const char* kCacheBlock = R"(
module cached
use std.nn.cache::{write_at, write_span, write_tokens}

pub block Cache<S: Dim, T: Float = f32> {
    state cache: Tensor[1, 2, S, 16; T]

    // A decode step's write: nothing else sees the old cache.
    pub entry step(value: Tensor[1, 2, 1, 16; T], pos: i32) -> Tensor[1, 2, 1, 16; T] {
        cache = write_at(cache, value, pos)
        return value
    }

    // A prompt's write, then its tokens again through write_tokens.
    pub entry span<N: Dim>(value: Tensor[1, 2, N, 16; T], pos: i32) -> Tensor[1, 2, N, 16; T]
    where N > 0 {
        cache = write_span(cache, value, pos)
        let rows = fill<i32>([N], 0)
        let positions = iota<i32>(N) + pos
        cache = write_tokens(cache, value, rows, positions)
        return value
    }

    // The old cache is still held by `before` when it is written.
    pub entry keep_old(value: Tensor[1, 2, 1, 16; T], pos: i32) -> Tensor[1, 2, S, 16; T] {
        let before = cache
        cache = write_at(cache, value, pos)
        return before
    }

    pub entry read() -> Tensor[1, 2, S, 16; T] {
        return cache
    }
}
)";

linnet::eval::Options native_options() {
  linnet::eval::Options options;
  options.numerics = linnet::eval::NumericsPolicy::Equivalent;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  return options;
}

Value run_entry(TestProgram& program, linnet::eval::BlockInstance& instance, const std::string& entry,
                std::vector<Value> inputs, GenericBindings generics = {}) {
  EntryInputs call;
  call.positional = std::move(inputs);
  call.generics = std::move(generics);
  return program->call(instance, entry, call);
}

const void* state_storage(const linnet::eval::BlockInstance& instance) {
  const Tensor* state = instance.find_state("cache");
  REQUIRE(state != nullptr);
  return state->storage().get();
}

// Pages of [data, data + bytes) the process has in memory.
size_t resident_pages(const void* data, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(data) / page * page;
  const size_t length = reinterpret_cast<uintptr_t>(data) + bytes - start;
  std::vector<unsigned char> flags((length + page - 1) / page);
  REQUIRE(::mincore(reinterpret_cast<void*>(start), length, flags.data()) == 0);
  size_t resident = 0;
  for (unsigned char flag : flags) resident += flag & 1;
  return resident;
}

}  // namespace

TEST_CASE("a cache written by its only holder keeps its storage", "[in-place]") {
  for (DType type : {DType::F32, DType::BF16}) {
    auto program = load_source(kCacheBlock, native_options());
    MapParameterSource none;
    auto block = program->instantiate("Cache", {{"S", dim(6)}, {"T", dtype(type)}}, none);
    const void* storage = state_storage(*block);
    std::mt19937 rng(7);
    const Tensor first = random_tensor(rng, {1, 2, 1, 16}, type);
    const Tensor second = random_tensor(rng, {1, 2, 1, 16}, type);
    run_entry(program, *block, "step", {v(first), scalar_i32(2)});
    run_entry(program, *block, "step", {v(second), scalar_i32(5)});
    run_entry(program, *block, "step", {v(second), scalar_i32(9)});  // outside the cache: nothing written
    CHECK(state_storage(*block) == storage);
    const Tensor prompt = random_tensor(rng, {1, 2, 3, 16}, type);
    run_entry(program, *block, "span", {v(prompt), scalar_i32(0)}, {{"N", dim(3)}});
    CHECK(state_storage(*block) == storage);
    CHECK(program->stats().at("std.nn.cache::write_at").native == 3);
    CHECK(program->stats().at("std.nn.cache::write_tokens").native == 1);

    // The same steps on the body (exact) give the same cache.
    auto reference = load_source(kCacheBlock);
    auto body_block = reference->instantiate("Cache", {{"S", dim(6)}, {"T", dtype(type)}}, none);
    run_entry(reference, *body_block, "step", {v(first), scalar_i32(2)});
    run_entry(reference, *body_block, "step", {v(second), scalar_i32(5)});
    run_entry(reference, *body_block, "step", {v(second), scalar_i32(9)});
    run_entry(reference, *body_block, "span", {v(prompt), scalar_i32(0)}, {{"N", dim(3)}});
    CHECK(values(*block->find_state("cache")) == values(*body_block->find_state("cache")));
  }
}

TEST_CASE("a cache still referenced elsewhere is copied, not written", "[in-place]") {
  auto program = load_source(kCacheBlock, native_options());
  MapParameterSource none;
  auto block = program->instantiate("Cache", {{"S", dim(5)}}, none);
  const Tensor ones = f32(std::vector<float>(32, 1.0f), {1, 2, 1, 16});
  run_entry(program, *block, "step", {v(ones), scalar_i32(0)});
  const void* storage = state_storage(*block);
  const std::vector<double> before_step = values(*block->find_state("cache"));

  const Tensor twos = f32(std::vector<float>(32, 2.0f), {1, 2, 1, 16});
  const Value old = run_entry(program, *block, "keep_old", {v(twos), scalar_i32(3)});
  // `before` saw the cache as it was; the state has the new row in new storage.
  CHECK(values(old.tensor()) == before_step);
  CHECK(old.tensor().storage().get() == storage);
  CHECK(state_storage(*block) != storage);
  CHECK(block->find_state("cache")->at<double>({0, 1, 3, 2}) == 2.0);
  CHECK(old.tensor().at<double>({0, 1, 3, 2}) == 0.0);

  // A value the caller still holds (an entry's result) is not written either.
  const Value held = run_entry(program, *block, "read", {});
  run_entry(program, *block, "step", {v(ones), scalar_i32(4)});
  CHECK(held.tensor().at<double>({0, 0, 4, 0}) == 0.0);
  CHECK(block->find_state("cache")->at<double>({0, 0, 4, 0}) == 1.0);
}

// Values share their tensor when copied (`let kept = h`): an activation
// given `h` may write into it only when no other value holds it.
const char* kActivationSource = R"(
module activated
use std.nn.activations::{silu}

pub fn replaced(x: Tensor[40; f32]) -> Tensor[40; f32] {
    var h = x + 1.0
    h = silu(h)
    return h
}

pub fn kept(x: Tensor[40; f32]) -> Tensor[40; f32] {
    var h = x + 1.0
    let before = h
    h = silu(h)
    return before
}
)";

TEST_CASE("an activation writes in place only into a value nothing else holds", "[in-place]") {
  auto program = load_source(kActivationSource, native_options());
  std::vector<float> ramp(40);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = 0.1f * static_cast<float>(i) - 2.0f;
  EntryInputs inputs;
  inputs.positional = {v(f32(ramp, {40}))};
  const Value replaced = program->call_function("replaced", inputs);
  const Value kept = program->call_function("kept", inputs);
  for (int64_t i = 0; i < 40; ++i) {
    const double shifted = static_cast<double>(ramp[static_cast<size_t>(i)]) + 1.0;
    CHECK(kept.tensor().at<double>({i}) == Approx(shifted));
    CHECK(replaced.tensor().at<double>({i}) == Approx(shifted / (1.0 + std::exp(-shifted))).epsilon(1e-5));
  }
  CHECK(program->stats().at("std.nn.activations::silu").native == 2);
}

TEST_CASE("a cache of 32768 positions takes memory only where it is written", "[in-place]") {
  auto program = load_source(kCacheBlock, native_options());
  MapParameterSource none;
  const int64_t positions = 32768;
  auto block = program->instantiate("Cache", {{"S", dim(positions)}, {"T", dtype(DType::BF16)}}, none);
  const Tensor* cache = block->find_state("cache");
  const size_t bytes = static_cast<size_t>(cache->numel()) * cache->element_size();
  REQUIRE(bytes >= linnet::tensor::Storage::kLazyZeroThreshold);
  CHECK(resident_pages(cache->raw_data(), bytes) == 0);
  // A step writes one row per head (two pages at most) and keeps the storage.
  std::mt19937 rng(11);
  run_entry(program, *block, "step", {v(random_tensor(rng, {1, 2, 1, 16}, DType::BF16)), scalar_i32(20000)});
  cache = block->find_state("cache");
  CHECK(resident_pages(cache->raw_data(), bytes) <= 2);
  CHECK(cache->at<double>({0, 0, 19999, 0}) == 0.0);
}
