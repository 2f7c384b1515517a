// bindings.json, the check of a manifest against a checkpoint (every problem
// at once), and the parameter source: zero-copy borrowing, exact widening,
// tensors of layers a truncated run never touches, and the 2 MiB page hint
// on packed u8 weights.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "linnet/nest/bindings.hpp"
#include "linnet/tensor/half.hpp"
#include "safetensors_builder.hpp"
#include "test_run_golden.hpp"

using namespace linnet;
using linnet::nest::testing::counting_bytes;
using linnet::nest::testing::TensorSpec;
using linnet::nest::testing::well_formed;
using tensor::DType;

namespace {

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<std::byte> bf16_bytes(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float value : values) bits.push_back(tensor::float_to_bf16_bits(value));
  return bytes_of(bits);
}

nest::Checkpoint checkpoint_of(const std::vector<TensorSpec>& tensors) {
  std::vector<nest::SafetensorsFile> files;
  files.push_back(nest::SafetensorsFile::from_bytes(well_formed(tensors), "test.safetensors"));
  return nest::Checkpoint::from_files(std::move(files), "test.safetensors");
}

eval::ParameterInfo param(const std::string& path, DType dtype, tensor::Shape shape, bool optional = false,
                          eval::ParameterKind kind = eval::ParameterKind::Param) {
  eval::ParameterInfo info;
  info.path = path;
  info.kind = kind;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.optional = optional;
  return info;
}

// The one diagnostic whose message mentions `text`.
const syntax::Diagnostic& problem_about(const std::vector<syntax::Diagnostic>& problems, const std::string& text) {
  const syntax::Diagnostic* found = nullptr;
  for (const syntax::Diagnostic& problem : problems) {
    if (problem.message.find(text) != std::string::npos) {
      REQUIRE(found == nullptr);
      found = &problem;
    }
  }
  if (found == nullptr) FAIL("no problem mentions " << text);
  return *found;
}

bool has_note(const syntax::Diagnostic& diagnostic, const std::string& text) {
  return std::any_of(diagnostic.notes.begin(), diagnostic.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("bindings.json is one flat object of strings", "[nest][bindings]") {
  syntax::Diagnostics diagnostics;
  const auto bindings = nest::parse_bindings(R"({"a.weight": "model.a.weight", "b": "c"})", "b.json", diagnostics);
  REQUIRE(bindings);
  CHECK(bindings->tensor_for("a.weight") == "model.a.weight");
  CHECK(bindings->tensor_for("unmapped.weight") == "unmapped.weight");  // binds to its own name
  CHECK(bindings->maps("b"));
  CHECK_FALSE(bindings->maps("unmapped.weight"));

  for (const std::string bad : {R"({"a": 1})", R"(["a"])", R"({"a": "x", "a": "y"})", R"({"a": )", R"({"": "x"})"}) {
    INFO(bad);
    syntax::Diagnostics errors;
    CHECK_FALSE(nest::parse_bindings(bad, "b.json", errors));
    REQUIRE(errors.error_count() == 1);
    CHECK(errors.all()[0].code == "E5001");
    CHECK(errors.all()[0].message.find("b.json") != std::string::npos);
  }
  // Every card's own bindings file reads.
  for (const std::string card : {"mistral-7b-instruct-v0.3", "qwen3-8b", "gpt-oss-20b"}) {
    syntax::Diagnostics errors;
    const auto read = nest::read_bindings(nest_test::card_path(card) + "/bindings.json", errors);
    REQUIRE(read);
    CHECK(read->size() > 100);
  }
}

TEST_CASE("which stored dtypes load as which declared ones", "[nest][bindings]") {
  CHECK(nest::loadable_as(DType::BF16, DType::BF16));
  CHECK(nest::loadable_as(DType::BF16, DType::F32));
  CHECK(nest::loadable_as(DType::F16, DType::F32));
  CHECK(nest::loadable_as(DType::F32, DType::F64));
  CHECK(nest::loadable_as(DType::U8, DType::U8));
  CHECK_FALSE(nest::loadable_as(DType::F32, DType::BF16));  // never narrowed
  CHECK_FALSE(nest::loadable_as(DType::BF16, DType::F16));  // neither widens to the other
  CHECK_FALSE(nest::loadable_as(DType::I32, DType::F32));   // integers never change type
  CHECK_FALSE(nest::loadable_as(DType::U8, DType::I32));
  CHECK_FALSE(nest::loadable_as(DType::I32, DType::I64));
}

TEST_CASE("every binding problem is reported at once, naming path, tensor, expected and actual",
          "[nest][bindings]") {
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"model.embed.weight", "BF16", {4, 2}, counting_bytes(16)},
      {"head.weight", "F32", {2, 3}, counting_bytes(24)},
      {"norm.weight", "F32", {2}, counting_bytes(8)},
      {"ids", "I32", {4}, counting_bytes(16)},
      {"scales", "U8", {4}, counting_bytes(4)},
      {"fp8", "F8_E4M3", {2}, counting_bytes(2)},
      {"proj.bias", "F32", {5}, counting_bytes(20)},
      {"layers.9.extra", "F32", {1}, counting_bytes(4)},
  });
  const nest::Bindings bindings({{"embedding.weight", "model.embed.weight"}, {"missing.weight", "model.missing"}},
                                "bindings.json");
  const std::vector<eval::ParameterInfo> manifest = {
      param("embedding.weight", DType::F32, {4, 2}),                 // bf16 widens: fine
      param("head.weight", DType::F32, {3, 2}),                      // wrong shape
      param("head.bias", DType::F32, {3}, true),                     // optional, absent: fine
      param("norm.weight", DType::BF16, {2}),                        // f32 would narrow
      param("ids", DType::F32, {4}),                                 // an integer tensor to a float
      param("scales", DType::U8, {4}),                               // fine
      param("fp8", DType::F32, {2}),                                 // no Linnet dtype
      param("proj.bias", DType::F32, {3}, true),                     // optional, present, wrong shape
      param("missing.weight", DType::F32, {2}),                      // missing
      param("cache", DType::F32, {8}, false, eval::ParameterKind::State),  // the model's own
  };
  const std::vector<syntax::Diagnostic> problems = nest::check_parameters(manifest, checkpoint, bindings);
  CHECK(problems.size() == 6);
  for (const syntax::Diagnostic& problem : problems) CHECK(problem.code == "E6003");

  const syntax::Diagnostic& shape = problem_about(problems, "`head.weight`");
  CHECK(shape.message.find("has shape [2, 3], expected f32[3, 2]") != std::string::npos);
  CHECK(has_note(shape, "the checkpoint holds f32[2, 3]"));

  const syntax::Diagnostic& narrowing = problem_about(problems, "`norm.weight`");
  CHECK(narrowing.message.find("has dtype f32, expected bf16[2]") != std::string::npos);
  CHECK(has_note(narrowing, "narrowed only on request"));
  REQUIRE(narrowing.help.size() == 1);
  CHECK(narrowing.help[0].find("pass --cast-weights to round the stored f32 values to bf16") != std::string::npos);
  CHECK(problem_about(problems, "`ids`").help.empty());  // an integer is never cast
  // With --cast-weights the f32 tensor loads (rounded); the other problems stay.
  const std::vector<syntax::Diagnostic> cast = nest::check_parameters(manifest, checkpoint, bindings, true);
  CHECK(cast.size() == 5);
  for (const syntax::Diagnostic& problem : cast) CHECK(problem.message.find("`norm.weight`") == std::string::npos);

  const syntax::Diagnostic& integer = problem_about(problems, "`ids`");
  CHECK(integer.message.find("has dtype i32, expected f32[4]") != std::string::npos);
  CHECK(has_note(integer, "integer, u8 and bool tensors load only as their own dtype"));

  const syntax::Diagnostic& missing = problem_about(problems, "`missing.weight`");
  CHECK(missing.message == "the checkpoint has no tensor `model.missing` for param `missing.weight`");
  CHECK(has_note(missing, "expected f32[2]"));
  CHECK(has_note(missing, "`bindings.json` binds `missing.weight` to `model.missing`"));

  CHECK(problem_about(problems, "`fp8`").message.find("stored as F8_E4M3") != std::string::npos);
  CHECK(problem_about(problems, "`proj.bias`").message.find("has shape [5], expected f32[3]") != std::string::npos);

  // Only metadata was read.
  CHECK(checkpoint.touched().empty());
  CHECK(nest::unbound_tensors(manifest, checkpoint, bindings) == std::vector<std::string>{"layers.9.extra"});
}

TEST_CASE("the parameter source borrows the mapping and widens exactly", "[nest][bindings]") {
  const std::vector<float> embedding = {0.5f, -1.25f, 3.0f, 1e-3f, 7.0f, -0.1f};
  const std::vector<float> rounded = [&] {
    std::vector<float> out;
    for (float value : embedding) out.push_back(tensor::round_to_bf16(value));
    return out;
  }();
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"embed", "BF16", {3, 2}, bf16_bytes(embedding)},
      {"ids", "I32", {2}, bytes_of(std::vector<int32_t>{7, -3})},
      {"unused", "F32", {1}, counting_bytes(4)},
  });
  const nest::Bindings bindings(std::map<std::string, std::string>{{"embedding.weight", "embed"}});
  nest::CheckpointParameterSource source(checkpoint, bindings);

  SECTION("the stored dtype: no copy") {
    const auto tensor = source.fetch({"embedding.weight", eval::ParameterKind::Param, DType::BF16, {3, 2}, false});
    REQUIRE(tensor);
    CHECK(tensor->dtype() == DType::BF16);
    CHECK_FALSE(tensor->is_writable());  // borrowed
    CHECK(tensor->raw_data() == static_cast<const void*>(checkpoint.find("embed")->bytes.data()));
    CHECK(tensor->to_vector<float>() == rounded);
    CHECK(source.counts().borrowed == 1);
    CHECK(source.counts().widened == 0);
  }
  SECTION("a bf16 matrix at f32: read as f32, stored bytes left in the mapping") {
    const auto tensor = source.fetch({"embedding.weight", eval::ParameterKind::Param, DType::F32, {3, 2}, false});
    REQUIRE(tensor);
    CHECK(tensor->dtype() == DType::F32);
    CHECK_FALSE(tensor->is_writable());
    const std::optional<tensor::Tensor> stored = tensor->stored_bf16();
    REQUIRE(stored);
    CHECK(stored->raw_data() == static_cast<const void*>(checkpoint.find("embed")->bytes.data()));
    CHECK_FALSE(tensor->storage()->widened());
    CHECK(tensor->to_vector<float>() == rounded);  // exact
    CHECK(tensor->storage()->widened());
    CHECK(source.counts().widen_on_access == 1);
    CHECK(source.counts().widen_on_access_bytes == 6 * 2);
    CHECK(source.counts().widened == 0);
  }
  SECTION("integers keep their type, and absent tensors are nothing") {
    const auto ids = source.fetch({"ids", eval::ParameterKind::Param, DType::F32, {2}, false});
    REQUIRE(ids);
    CHECK(ids->dtype() == DType::I32);  // returned as stored, for the interpreter to reject
    CHECK_FALSE(source.fetch({"absent", eval::ParameterKind::Param, DType::F32, {2}, true}));
  }
  CHECK_FALSE(checkpoint.was_touched("unused"));
}

TEST_CASE("--load copies the packed tensors, every tensor or none out of the mapping", "[nest][bindings]") {
  const std::vector<float> matrix = {0.5f, -1.25f, 3.0f, 1e-3f, 7.0f, -0.1f};
  const std::vector<uint8_t> blocks = {0x00, 0x17, 0xF1, 0x88, 0x7F, 0x3C};
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"matrix", "BF16", {3, 2}, bf16_bytes(matrix)},
      {"blocks", "U8", {2, 3}, bytes_of(blocks)},
      {"bias", "BF16", {2}, bf16_bytes({1.5f, -2.0f})},
  });
  const nest::Bindings same_names;
  const auto in_mapping = [&](const tensor::Tensor& tensor, const std::string& name) {
    const std::span<const std::byte> bytes = checkpoint.find(name)->bytes;
    const auto* data = static_cast<const std::byte*>(tensor.raw_data());
    return data >= bytes.data() && data < bytes.data() + bytes.size();
  };
  const auto fetch = [](nest::CheckpointParameterSource& source, const std::string& name, DType dtype,
                        tensor::Shape shape) {
    return source.fetch({name, eval::ParameterKind::Param, dtype, std::move(shape), false}).value();
  };
  struct Expected {
    nest::WeightPlacement placement;
    bool matrix_copied, blocks_copied;
  };
  for (const Expected& expected : {Expected{nest::WeightPlacement::Map, false, false},
                                   Expected{nest::WeightPlacement::Packed, false, true},
                                   Expected{nest::WeightPlacement::Copy, true, true}}) {
    INFO("--load " << nest::weight_placement_name(expected.placement));
    nest::CheckpointParameterSource source(checkpoint, same_names, false, expected.placement);
    const tensor::Tensor packed = fetch(source, "blocks", DType::U8, {2, 3});
    const tensor::Tensor bf16 = fetch(source, "matrix", DType::BF16, {3, 2});
    // A bf16 matrix declared f32 keeps its stored bytes (read as f32 on
    // access), so it is placed like the bf16 one.
    const tensor::Tensor widened_on_access = fetch(source, "matrix", DType::F32, {3, 2});
    // A bf16 vector declared f32 is widened to a copy now: never placed.
    const tensor::Tensor widened = fetch(source, "bias", DType::F32, {2});

    CHECK(in_mapping(packed, "blocks") == !expected.blocks_copied);
    CHECK(in_mapping(bf16, "matrix") == !expected.matrix_copied);
    const std::optional<tensor::Tensor> stored = widened_on_access.stored_bf16();
    REQUIRE(stored);
    CHECK(in_mapping(*stored, "matrix") == !expected.matrix_copied);
    // Copies are served read-only, as the mapping is.
    for (const tensor::Tensor* tensor : {&packed, &bf16, &widened_on_access}) CHECK_FALSE(tensor->is_writable());
    CHECK(packed.to_vector<uint8_t>() == blocks);
    std::vector<float> rounded;
    for (float value : matrix) rounded.push_back(tensor::round_to_bf16(value));
    CHECK(bf16.to_vector<float>() == rounded);
    CHECK(widened_on_access.to_vector<float>() == rounded);
    CHECK(widened.to_vector<float>() == std::vector<float>{1.5f, -2.0f});

    const nest::LoadCounts& counts = source.counts();
    // Each fetch counted once: the f32 view of the matrix as read on
    // access, whether its bytes were placed or not.
    CHECK(counts.placed == (expected.blocks_copied ? 1u : 0u) + (expected.matrix_copied ? 1u : 0u));
    CHECK(counts.placed_bytes == (expected.blocks_copied ? 6u : 0u) + (expected.matrix_copied ? 12u : 0u));
    CHECK(counts.widen_on_access == 1);
    CHECK(counts.widened == 1);
    CHECK(counts.borrowed + counts.placed == 2);
  }
  CHECK(nest::weight_placement_from_name("packed") == nest::WeightPlacement::Packed);
  CHECK(nest::weight_placement_from_name("map") == nest::WeightPlacement::Map);
  CHECK(nest::weight_placement_from_name("copy") == nest::WeightPlacement::Copy);
  CHECK_FALSE(nest::weight_placement_from_name("mmap"));
}

namespace {

// A source on a machine with `available` bytes of free memory.
class SourceWithMemory : public nest::CheckpointParameterSource {
 public:
  SourceWithMemory(const nest::Checkpoint& checkpoint, const nest::Bindings& bindings, size_t available)
      : CheckpointParameterSource(checkpoint, bindings, false, nest::WeightPlacement::Copy), available_(available) {}
  std::optional<size_t> available_memory() const override { return available_; }

 private:
  size_t available_;
};

}  // namespace

TEST_CASE("--load leaves a tensor mapped when its copy would leave too little free memory", "[nest][bindings]") {
  const nest::Checkpoint checkpoint = checkpoint_of({
      {"small", "U8", {64}, counting_bytes(64)},
      {"large", "U8", {4096}, counting_bytes(4096)},
  });
  const nest::Bindings same_names;
  // Room for the small copy and the reserve, not for the large one.
  SourceWithMemory source(checkpoint, same_names, nest::CheckpointParameterSource::kPlacementReserve + 1000);
  const tensor::Tensor small = source.fetch({"small", eval::ParameterKind::Param, DType::U8, {64}, false}).value();
  const tensor::Tensor large = source.fetch({"large", eval::ParameterKind::Param, DType::U8, {4096}, false}).value();
  CHECK(small.raw_data() != static_cast<const void*>(checkpoint.find("small")->bytes.data()));
  CHECK(large.raw_data() == static_cast<const void*>(checkpoint.find("large")->bytes.data()));
  CHECK(std::memcmp(small.raw_data(), checkpoint.find("small")->bytes.data(), 64) == 0);
  const nest::LoadCounts& counts = source.counts();
  CHECK(counts.placed == 1);
  CHECK(counts.borrowed == 1);
  CHECK(counts.left_mapped == 1);
  CHECK(counts.left_mapped_bytes == 4096);
  // The machine's own figure, where Linux gives one.
  if (std::filesystem::exists("/proc/meminfo")) {
    const std::optional<size_t> available = nest::CheckpointParameterSource(checkpoint, same_names).available_memory();
    REQUIRE(available);
    CHECK(*available > 0);
  }
}

TEST_CASE("--load defaults to packed on the CPU and to map with --device cuda", "[nest][bindings]") {
  nest::SessionOptions options;
  CHECK(nest::Session(options).weight_placement() == nest::WeightPlacement::Packed);
  options.device = nest::Device::Cuda;  // only read here: nothing is loaded
  CHECK(nest::Session(options).weight_placement() == nest::WeightPlacement::Map);
  options.placement = nest::WeightPlacement::Copy;
  CHECK(nest::Session(options).weight_placement() == nest::WeightPlacement::Copy);
}

TEST_CASE("a truncated run binds only the layers it instantiates", "[nest][bindings][golden]") {
  // golden/mistral-trunc holds 4 layers; --bind Layers=2 runs the first two.
  auto session = nest_test::golden_session("mistral-7b-instruct-v0.3", "mistral-trunc");
  CHECK(session->generics().at("Layers") == eval::GenericValue::of_dim(2));
  const std::vector<std::string> touched = session->checkpoint().touched();
  CHECK(touched.size() == 2 * 9 + 3);
  for (const std::string& name : touched) {
    INFO(name);
    CHECK(name.find("layers.2.") == std::string::npos);
    CHECK(name.find("layers.3.") == std::string::npos);
  }
  CHECK(session->unbound_tensors().size() == 2 * 9);
  bool noted = false;
  for (const std::string& note : session->notes()) noted = noted || note == "running 2 of the checkpoint's 4 layers";
  CHECK(noted);
  // Running does not touch them either.
  nest_test::call(*session, "forward", {{"tokens", nest_test::i32_tensor({1, 2, 3}, {1, 3})}});
  CHECK(session->checkpoint().touched() == touched);
}

TEST_CASE("a checkpoint that does not fit the card fails before anything is instantiated", "[nest][bindings][golden]") {
  // The Mistral card at the golden Mistral sizes, on the Qwen3 checkpoint:
  // different widths, missing tensors, extra norms.
  linnet::nest::SessionOptions options;
  options.card = nest_test::card_path("mistral-7b-instruct-v0.3");
  options.binds = nest_test::golden_binds("mistral-a");
  options.weights = {nest_test::golden_path("qwen3-a")};
  options.std_dir = nest_test::source_path("stdlib");
  linnet::nest::Session session(options);
  CHECK_FALSE(session.load());
  size_t binding_errors = 0;
  for (const syntax::Diagnostic& diagnostic : session.diagnostics().all()) {
    binding_errors += diagnostic.code == "E6003";
  }
  CHECK(binding_errors > 5);
  CHECK(session.render_diagnostics().find("do not bind to the checkpoint") != std::string::npos);
}

namespace {

// The flags (`VmFlags` of /proc/self/smaps) of the mapping holding `address`;
// empty where the system has no such file.
std::string mapping_flags(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto target = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find('-') < line.find(' ')) {
      inside = target >= begin && target < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return (flags + " ").find(" " + flag + " ") != std::string::npos;
}

}  // namespace

TEST_CASE("packed u8 weights go to 2 MiB pages: copied (--load packed) or hinted in the mapping (--load map)",
          "[nest][bindings]") {
  // Only where Linux reports mapping flags and has transparent huge pages.
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled") ||
      mapping_flags(reinterpret_cast<const void*>(&mapping_flags)).empty()) {
    WARN("skipped: no /proc/self/smaps flags or no transparent huge pages");
    return;
  }
  // A 6 MiB u8 tensor, then an 8 MiB bf16 one. Wherever the mapping puts
  // them, the u8 tensor holds at least two whole 2 MiB units, so its middle
  // byte (3 MiB in) lies in a marked unit; the bf16 tensor is not marked,
  // and neither are the u8 tensor's partial units at its ends.
  const size_t u8_bytes = size_t{6} << 20, bf16_bytes_count = size_t{8} << 20;
  const linnet::nest::testing::TempDir dir;
  const std::string path = dir.write(
      "model.safetensors",
      well_formed({
          {"blocks", "U8", {static_cast<int64_t>(u8_bytes)}, counting_bytes(u8_bytes)},
          {"head", "BF16", {static_cast<int64_t>(bf16_bytes_count / 2)}, std::vector<std::byte>(bf16_bytes_count)},
      }));
  const nest::Checkpoint checkpoint = nest::Checkpoint::open(path);
  const nest::Bindings bindings(std::map<std::string, std::string>{{"experts.blocks", "blocks"}, {"lm.head", "head"}});
  const eval::ParameterRequest blocks_request{
      "experts.blocks", eval::ParameterKind::Param, DType::U8, {static_cast<int64_t>(u8_bytes)}, false};

  SECTION("copied into the process's memory, marked for 2 MiB pages") {
    nest::CheckpointParameterSource source(checkpoint, bindings);  // --load packed, the default
    const auto blocks = source.fetch(blocks_request);
    REQUIRE(blocks);
    const auto* first = static_cast<const std::byte*>(blocks->raw_data());
    const std::span<const std::byte> stored = checkpoint.find("blocks")->bytes;
    CHECK((first < stored.data() || first >= stored.data() + stored.size()));
    CHECK(has_flag(mapping_flags(first + u8_bytes / 2), "hg"));
    CHECK(std::memcmp(first, stored.data(), u8_bytes) == 0);
    CHECK(source.counts().placed == 1);
  }
  nest::CheckpointParameterSource source(checkpoint, bindings, false, nest::WeightPlacement::Map);
  const std::byte* head_end = checkpoint.find("head")->bytes.data() + bf16_bytes_count - 1;
  CHECK_FALSE(has_flag(mapping_flags(head_end), "hg"));

  const auto blocks = source.fetch(blocks_request);
  const auto head = source.fetch(
      {"lm.head", eval::ParameterKind::Param, DType::BF16, {static_cast<int64_t>(bf16_bytes_count / 2)}, false});
  REQUIRE(blocks);
  REQUIRE(head);
  CHECK(blocks->raw_data() == static_cast<const void*>(checkpoint.find("blocks")->bytes.data()));  // borrowed
  const auto* first = static_cast<const std::byte*>(blocks->raw_data());
  CHECK(has_flag(mapping_flags(first + u8_bytes / 2), "hg"));
  CHECK_FALSE(has_flag(mapping_flags(head_end), "hg"));  // other dtypes keep 4 KiB pages
  // Nothing before the tensor is marked: the unit holding the byte before it
  // is only partly the tensor's (its data starts after the file's header).
  CHECK_FALSE(has_flag(mapping_flags(first - 1), "hg"));
}
