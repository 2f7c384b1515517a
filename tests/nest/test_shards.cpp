// One process's part of a checkpoint when a card runs across processes:
// which axis splits, what is refused before anything is read, part r on
// rank r (a view of the mapping along axis 0, a copy of the part alone
// along a later axis), and the agreement of `Shards` with the processes.
#include <catch2/catch.hpp>

#include <cstring>

#include "linnet/nest/shards.hpp"
#include "linnet/tensor/half.hpp"
#include "safetensors_builder.hpp"

using namespace linnet;
using linnet::nest::testing::TensorSpec;
using linnet::nest::testing::well_formed;
using tensor::DType;

namespace {

std::vector<std::byte> f32_bytes(const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<std::byte> bf16_bytes(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float value : values) bits.push_back(tensor::float_to_bf16_bits(value));
  std::vector<std::byte> bytes(bits.size() * 2);
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  return bytes;
}

std::vector<float> counting(int count) {
  std::vector<float> values;
  for (int i = 0; i < count; ++i) values.push_back(static_cast<float>(i));
  return values;
}

nest::Checkpoint checkpoint_of(const std::vector<TensorSpec>& tensors) {
  std::vector<nest::SafetensorsFile> files;
  files.push_back(nest::SafetensorsFile::from_bytes(well_formed(tensors), "test.safetensors"));
  return nest::Checkpoint::from_files(std::move(files), "test.safetensors");
}

eval::ParameterInfo param(const std::string& path, tensor::Shape shape, DType dtype = DType::F32) {
  eval::ParameterInfo info;
  info.path = path;
  info.shape = std::move(shape);
  info.dtype = dtype;
  return info;
}

eval::ParameterRequest request(const std::string& path, tensor::Shape shape, DType dtype = DType::F32) {
  eval::ParameterRequest asked;
  asked.path = path;
  asked.shape = std::move(shape);
  asked.dtype = dtype;
  return asked;
}

}  // namespace

TEST_CASE("the split axis is the one whose stored extent is Shards times the declared", "[nest][shards]") {
  using nest::split_axis;
  CHECK(split_axis({4, 8}, {8, 8}, 2) == std::optional<size_t>(0));
  CHECK(split_axis({8, 4}, {8, 8}, 2) == std::optional<size_t>(1));
  CHECK(split_axis({2, 3, 5}, {2, 12, 5}, 4) == std::optional<size_t>(1));
  CHECK_FALSE(split_axis({8, 8}, {8, 8}, 2));     // the whole tensor
  CHECK_FALSE(split_axis({4, 4}, {8, 8}, 2));     // two axes differ
  CHECK_FALSE(split_axis({4, 8}, {12, 8}, 2));    // 3 times, not 2
  CHECK_FALSE(split_axis({4, 8}, {8, 8, 1}, 2));  // another rank
  CHECK_FALSE(split_axis({4, 8}, {8, 8}, 1));     // one process splits nothing
}

TEST_CASE("split tensors are checked at their whole shape; other shapes are refused before loading",
          "[nest][shards]") {
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"q.weight", "F32", {8, 4}, f32_bytes(counting(32))},
      {"o.weight", "F32", {4, 8}, f32_bytes(counting(32))},
      {"norm.weight", "F32", {4}, f32_bytes(counting(4))},
      {"odd.weight", "F32", {7, 4}, f32_bytes(counting(28))},
      {"ints", "I32", {8}, f32_bytes(counting(8))},
  });
  const nest::Bindings same_names;
  const std::vector<eval::ParameterInfo> good = {param("q.weight", {4, 4}), param("o.weight", {4, 4}),
                                                 param("norm.weight", {4})};
  CHECK(nest::check_sharded_parameters(good, checkpoint, same_names, 2).empty());
  // One process's check of the same manifest finds every split shape wrong.
  CHECK(nest::check_parameters(good, checkpoint, same_names).size() == 2);

  const std::vector<eval::ParameterInfo> bad = {param("odd.weight", {4, 4}), param("ints", {4}),
                                                param("missing", {2})};
  const std::vector<syntax::Diagnostic> problems = nest::check_sharded_parameters(bad, checkpoint, same_names, 2);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].code == "E6003");
  CHECK(problems[0].message.find("`odd.weight`") != std::string::npos);
  CHECK(problems[0].message.find("does not split into 2 parts") != std::string::npos);
  bool says_axis = false;
  for (const std::string& note : problems[0].notes) says_axis = says_axis || note.find("axis 0 holds 7") != std::string::npos;
  CHECK(says_axis);
  // The split i32 tensor is refused for its dtype, not its shape.
  CHECK(problems[1].message.find("dtype") != std::string::npos);
  CHECK(problems[2].message.find("no tensor `missing`") != std::string::npos);
}

TEST_CASE("rank r binds part r: a view of the mapping along axis 0, a copy of the part alone later",
          "[nest][shards]") {
  const std::vector<float> values = counting(32);  // [8, 4] and [4, 8], row-major 0..31
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"q.weight", "F32", {8, 4}, f32_bytes(values)},
      {"o.weight", "F32", {4, 8}, f32_bytes(values)},
      {"norm.weight", "F32", {4}, f32_bytes(counting(4))},
      {"wide.weight", "BF16", {4, 8}, bf16_bytes(values)},
  });
  const nest::Bindings same_names;
  for (int64_t rank = 0; rank < 2; ++rank) {
    nest::ShardedParameterSource source(checkpoint, same_names, rank, 2);
    INFO("rank " << rank);

    const tensor::Tensor rows = source.fetch(request("q.weight", {4, 4})).value();
    CHECK(rows.shape() == tensor::Shape{4, 4});
    // Borrowed: it points into the mapped bytes, at this rank's rows.
    CHECK(rows.raw_data() == checkpoint.find("q.weight")->bytes.data() + rank * 16 * sizeof(float));
    CHECK(rows.to_vector<float>().front() == static_cast<float>(rank * 16));

    const tensor::Tensor columns = source.fetch(request("o.weight", {4, 4})).value();
    CHECK(columns.shape() == tensor::Shape{4, 4});
    std::vector<float> expected;
    for (int row = 0; row < 4; ++row)
      for (int column = 0; column < 4; ++column) expected.push_back(static_cast<float>(row * 8 + rank * 4 + column));
    CHECK(columns.to_vector<float>() == expected);

    // A bf16 part widened to the declared f32: the same values.
    CHECK(source.fetch(request("wide.weight", {4, 4})).value().to_vector<float>() == expected);

    // Declared whole: every rank binds all of it.
    CHECK(source.fetch(request("norm.weight", {4})).value().to_vector<float>() == counting(4));
    CHECK_FALSE(source.fetch(request("absent", {4})));

    const nest::LoadCounts& counts = source.counts();
    CHECK(counts.split == 3);
    CHECK(counts.borrowed == 2);  // the rows and the norm
    // The bf16 part stays bf16 and reads as f32 (widened on first access, bindings.hpp).
    CHECK(counts.widen_on_access == 1);
    CHECK(counts.widened == 0);
    CHECK(counts.split_copied_bytes == 16 * sizeof(float) + 16 * 2);
  }
}

TEST_CASE("a split packed tensor is copied out of the mapping once, whichever way it splits", "[nest][shards]") {
  std::vector<std::byte> packed(32);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<std::byte>(i * 7 + 1);
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"rows", "U8", {8, 4}, packed},
      {"columns", "U8", {4, 8}, packed},
  });
  const nest::Bindings same_names;
  for (int64_t rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    nest::ShardedParameterSource source(checkpoint, same_names, rank, 2);  // --load packed, the default
    const std::span<const std::byte> rows_stored = checkpoint.find("rows")->bytes;
    const tensor::Tensor rows = source.fetch(request("rows", {4, 4}, DType::U8)).value();
    const tensor::Tensor columns = source.fetch(request("columns", {4, 4}, DType::U8)).value();
    // Rows: a view of the mapping, which the placement copies. Columns: the
    // part already copied out piece by piece, left as it is.
    const auto* rows_data = static_cast<const std::byte*>(rows.raw_data());
    CHECK((rows_data < rows_stored.data() || rows_data >= rows_stored.data() + rows_stored.size()));
    CHECK(std::memcmp(rows_data, rows_stored.data() + rank * 16, 16) == 0);
    const std::vector<uint8_t> column_values = columns.to_vector<uint8_t>();
    for (int row = 0; row < 4; ++row) {
      for (int column = 0; column < 4; ++column) {
        CHECK(column_values[row * 4 + column] == static_cast<uint8_t>(packed[row * 8 + rank * 4 + column]));
      }
    }
    const nest::LoadCounts& counts = source.counts();
    CHECK(counts.placed == 1);
    CHECK(counts.placed_bytes == 16);
    CHECK(counts.borrowed == 0);  // the columns are their own copy, not the mapping
    CHECK(counts.split_copied_bytes == 16);
  }
}

TEST_CASE("Shards must be bound to the number of processes, and the root must have one", "[nest][shards]") {
  syntax::ast::BlockItem block{syntax::Span{}};
  syntax::ast::GenericParam shards_generic;
  shards_generic.name.text = "Shards";
  block.generics.push_back(std::move(shards_generic));
  nest::RootBlock with_shards;
  with_shards.block = &block;
  with_shards.qualified_name = "m::Model";
  nest::RootBlock without;
  syntax::ast::BlockItem plain_block{syntax::Span{}};
  without.block = &plain_block;
  without.qualified_name = "m::Plain";

  auto bound = [](int64_t shards) { return eval::GenericBindings{{"Shards", eval::GenericValue::of_dim(shards)}}; };
  auto first_message = [](const syntax::Diagnostics& diagnostics) { return diagnostics.all().front().message; };

  syntax::Diagnostics fine;
  CHECK(nest::check_process_count(with_shards, bound(2), 2, fine));
  CHECK(nest::check_process_count(with_shards, bound(1), 1, fine));
  CHECK(nest::check_process_count(with_shards, {}, 1, fine));
  CHECK(nest::check_process_count(without, {}, 1, fine));
  CHECK(fine.all().empty());

  syntax::Diagnostics unbound;
  CHECK_FALSE(nest::check_process_count(with_shards, {}, 2, unbound));
  CHECK(first_message(unbound).find("`Shards` is not bound") != std::string::npos);

  syntax::Diagnostics too_few;
  CHECK_FALSE(nest::check_process_count(with_shards, bound(2), 1, too_few));
  CHECK(first_message(too_few).find("has 1 process") != std::string::npos);

  syntax::Diagnostics other_count;
  CHECK_FALSE(nest::check_process_count(with_shards, bound(4), 2, other_count));
  CHECK(other_count.all().front().code == "E2111");

  syntax::Diagnostics no_generic;
  CHECK_FALSE(nest::check_process_count(without, {}, 2, no_generic));
  CHECK(first_message(no_generic).find("has no generic `Shards`") != std::string::npos);
}
