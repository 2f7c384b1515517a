// Device placement without a GPU: a stand-in device whose memory is host
// memory, and a table whose every kernel runs the CPU kernel on that memory,
// put in front of the CPU table exactly as the CUDA table is
// (ops::DeviceOpTable, ops::DeviceDispatcher). The stand-in counts every copy,
// so these tests check the placement rules the CUDA table relies on: weights
// are uploaded once per instance, results stay on the device until the host
// reads them, and an op the device lacks runs on the host with counted
// copies.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "linnet/ops/device_table.hpp"
#include "linnet/tensor/device.hpp"
#include "linnet/tensor/storage.hpp"
#include "test_run_golden.hpp"

using namespace linnet;
using namespace nest_test;

namespace {

// Device memory that is host memory. Freed blocks are kept until the
// backend goes, so that no address is reused and "each destination is
// uploaded at most once" means "each storage is uploaded at most once".
class HostTestDevice : public tensor::DeviceBackend {
 public:
  ~HostTestDevice() override {
    for (void* block : blocks_) std::free(block);
  }
  std::string name() const override { return "host-test"; }
  // Upload count per destination address.
  std::map<const void*, int> uploads_to;

 protected:
  void* allocate_memory(size_t bytes) override {
    void* block = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    blocks_.insert(block);
    return block;
  }
  void release_memory(void*) noexcept override {}
  void upload(void* destination, const void* source, size_t bytes) override {
    std::memcpy(destination, source, bytes);
    ++uploads_to[destination];
  }
  void download(void* destination, const void* source, size_t bytes) override { std::memcpy(destination, source, bytes); }

 private:
  std::set<void*> blocks_;
};

std::shared_ptr<HostTestDevice>& test_device() {
  static std::shared_ptr<HostTestDevice> device;
  return device;
}

// A tensor's device copy seen as a host tensor (the stand-in's device memory
// is host memory), with the same view.
Tensor on_device_view(const Tensor& tensor) {
  const std::shared_ptr<tensor::Storage>& storage = tensor.storage();
  std::shared_ptr<tensor::DeviceBackend> backend = test_device();
  const void* memory = storage->device_data(backend);
  auto view = tensor::Storage::borrow(memory, storage->bytes(), storage);
  return Tensor::from_storage(view, tensor.dtype(), tensor.shape(), tensor.strides(), tensor.offset());
}

eval::Value arguments_on_device(const eval::Value& value) {
  switch (value.kind()) {
    case eval::Value::Kind::Tensor: return eval::Value::from_tensor(on_device_view(value.tensor()));
    case eval::Value::Kind::Optional:
      return value.has_value() ? eval::Value::some(arguments_on_device(value.inner())) : value;
    case eval::Value::Kind::Tuple: {
      std::vector<eval::Value> elements;
      for (const eval::Value& element : value.elements()) elements.push_back(arguments_on_device(element));
      return eval::Value::tuple(std::move(elements));
    }
    default: return value;
  }
}

// A kernel's result written into new device storage, as a device kernel's is.
eval::Value result_on_device(const eval::Value& value) {
  if (value.kind() == eval::Value::Kind::Tuple) {
    std::vector<eval::Value> elements;
    for (const eval::Value& element : value.elements()) elements.push_back(result_on_device(element));
    return eval::Value::tuple(std::move(elements));
  }
  if (!value.is_tensor()) return value;
  const Tensor dense = value.tensor().contiguous();
  const size_t bytes = static_cast<size_t>(dense.numel()) * dense.element_size();
  std::shared_ptr<tensor::DeviceBackend> backend = test_device();
  auto storage = tensor::Storage::on_device(backend, bytes);
  std::memcpy(storage->device_mutable_data(backend), dense.raw_data(), bytes);
  return eval::Value::from_tensor(
      Tensor::from_storage(storage, dense.dtype(), dense.shape(), tensor::contiguous_strides(dense.shape()), 0));
}

// Every stand-in kernel: the CPU kernel of the same op, run on device memory.
std::optional<eval::Value> run_on_test_device(const eval::NativeCall& call) {
  const ops::KernelChoice cpu = ops::cpu_op_table()->find(call.qualified_name, *ops::call_dtype(call), call.policy);
  REQUIRE(cpu.kernel != nullptr);
  std::vector<eval::Value> arguments;
  for (const eval::Value& argument : call.arguments) arguments.push_back(arguments_on_device(argument));
  const eval::NativeCall on_device{call.op, call.qualified_name, call.generics, arguments, call.policy};
  std::optional<eval::Value> result = cpu.kernel->run(on_device);
  if (!result) return std::nullopt;
  return result_on_device(*result);
}

// The stand-in device's kernels: the CPU table's ops, except those in `missing`.
std::shared_ptr<const ops::OpTable> test_device_table(const std::set<std::string>& missing) {
  auto table = std::make_shared<ops::RegistryOpTable>("host-test");
  for (const ops::KernelRegistration* registration : ops::cpu_op_table()->registrations()) {
    if (missing.contains(registration->op)) continue;
    table->register_kernel({registration->op, registration->dtype, registration->policy, registration->summary,
                            &run_on_test_device});
  }
  return table;
}

std::unique_ptr<nest::Session> session_on(const std::shared_ptr<eval::OpDispatcher>& dispatcher) {
  nest::SessionOptions options;
  options.card = card_path("mistral-7b-instruct-v0.3");
  options.binds = golden_binds("mistral-a");
  options.binds.push_back("T=f32");
  options.weights = {golden_path("mistral-a")};
  options.std_dir = source_path("stdlib");
  options.numerics = eval::NumericsPolicy::Equivalent;
  options.dispatcher = dispatcher;
  auto session = std::make_unique<nest::Session>(options);
  if (!session->load()) FAIL("the session did not load:\n" << session->render_diagnostics());
  return session;
}

Tensor forward(nest::Session& session, const Tensor& tokens) {
  return session.call("forward", session.inputs("forward", std::map<std::string, Tensor>{{"tokens", tokens}})).tensor();
}

}  // namespace

TEST_CASE("device placement: weights uploaded once, results stay on the device, bit for bit the CPU", "[device]") {
  test_device() = std::make_shared<HostTestDevice>();
  const Tensor tokens = expected_tensor("mistral-a", "tokens");

  auto cpu_session = session_on(ops::make_cpu_dispatcher());
  const Tensor cpu_logits = forward(*cpu_session, tokens);

  auto table = std::make_shared<ops::DeviceOpTable>(test_device_table({}), ops::cpu_op_table());
  auto dispatcher = std::make_shared<ops::DeviceDispatcher>(table);
  auto device_session = session_on(dispatcher);

  const Tensor first = forward(*device_session, tokens);
  const tensor::TransferStats after_first = test_device()->stats();
  // The logits are a device result the host has not read yet.
  CHECK_FALSE(first.storage()->host_current());
  CHECK(first.storage()->device_backend() == test_device().get());
  // Reading them is one counted download of exactly their bytes.
  const std::vector<float> first_values = first.to_vector<float>();
  const tensor::TransferStats after_read = test_device()->stats();
  CHECK(after_read.downloads == after_first.downloads + 1);
  CHECK(after_read.download_bytes == after_first.download_bytes + first_values.size() * sizeof(float));
  CHECK(first_values == cpu_logits.to_vector<float>());

  const Tensor second = forward(*device_session, tokens);
  const tensor::TransferStats after_second = test_device()->stats();
  CHECK(second.to_vector<float>() == first_values);
  // No storage is ever uploaded twice: the weights went up once, in the
  // first call, and the second call re-sent none of them.
  int most_uploads = 0;
  for (const auto& [address, count] : test_device()->uploads_to) most_uploads = std::max(most_uploads, count);
  CHECK(most_uploads == 1);
  const uint64_t first_call_upload_bytes = after_first.upload_bytes;
  const uint64_t second_call_upload_bytes = after_second.upload_bytes - after_read.upload_bytes;
  INFO("first call uploaded " << first_call_upload_bytes << " bytes, the second " << second_call_upload_bytes);
  CHECK(second_call_upload_bytes < first_call_upload_bytes / 4);
  // Every bound parameter a device kernel read keeps a current device copy.
  int weights_on_device = 0;
  std::function<void(const eval::BlockInstance&)> visit = [&](const eval::BlockInstance& block) {
    for (const auto& [name, member] : block.members) {
      if (member.value.is_tensor() && member.value.tensor().storage()->device_current()) ++weights_on_device;
      if (member.value.kind() == eval::Value::Kind::Block) visit(*member.value.block());
      if (member.value.kind() == eval::Value::Kind::BlockArray) {
        for (const auto& child : member.value.blocks()) visit(*child);
      }
    }
  };
  visit(device_session->instance());
  CHECK(weights_on_device > 0);
  CHECK(dispatcher->stats().device_calls > 0);
  CHECK(dispatcher->stats().host_calls == 0);
  test_device().reset();
}

TEST_CASE("device placement: an op without a device kernel runs on the host with counted copies", "[device]") {
  test_device() = std::make_shared<HostTestDevice>();
  const Tensor tokens = expected_tensor("mistral-a", "tokens");
  auto cpu_session = session_on(ops::make_cpu_dispatcher());
  const Tensor cpu_logits = forward(*cpu_session, tokens);

  // The stand-in lacks rms_norm: its inputs (device results) come to the host.
  auto table = std::make_shared<ops::DeviceOpTable>(test_device_table({"std.nn.norm::rms_norm"}), ops::cpu_op_table());
  auto dispatcher = std::make_shared<ops::DeviceDispatcher>(table);
  auto device_session = session_on(dispatcher);
  const Tensor logits = forward(*device_session, tokens);
  CHECK(logits.to_vector<float>() == cpu_logits.to_vector<float>());
  CHECK(dispatcher->stats().host_calls > 0);
  CHECK(dispatcher->stats().device_calls > 0);
  CHECK(test_device()->stats().downloads > 1);

  const ops::KernelChoice norm = table->find("std.nn.norm::rms_norm", tensor::DType::F32, eval::NumericsPolicy::Equivalent);
  REQUIRE(norm.kernel != nullptr);
  CHECK_FALSE(table->on_device(norm.kernel));
  CHECK(norm.reason.find("inputs read on the host (no host-test kernel)") != std::string::npos);
  const ops::KernelChoice linear = table->find("std.nn.linear::linear", tensor::DType::F32, eval::NumericsPolicy::Equivalent);
  REQUIRE(linear.kernel != nullptr);
  CHECK(table->on_device(linear.kernel));
  CHECK(linear.reason.rfind("host-test native:", 0) == 0);
  test_device().reset();
}

TEST_CASE("device storage: host writes make the device copy stale, device writes the host copy", "[device]") {
  auto device = std::make_shared<HostTestDevice>();
  std::shared_ptr<tensor::DeviceBackend> backend = device;
  Tensor values = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  auto& storage = values.storage();
  CHECK_FALSE(storage->device_current());
  const void* on_device = storage->device_data(backend);
  CHECK(device->stats().uploads == 1);
  CHECK(storage->device_data(backend) == on_device);  // current: no second upload
  CHECK(device->stats().uploads == 1);
  values.mutable_data<float>()[0] = 10;  // a host write
  CHECK_FALSE(storage->device_current());
  storage->device_data(backend);
  CHECK(device->stats().uploads == 2);
  CHECK(static_cast<const float*>(on_device)[0] == 10);
  static_cast<float*>(storage->device_mutable_data(backend))[1] = 20;  // a device write
  CHECK_FALSE(storage->host_current());
  CHECK(values.to_vector<float>() == std::vector<float>{10, 20, 3, 4});
  CHECK(device->stats().downloads == 1);
  CHECK(storage->host_current());
  // Borrowed (checkpoint) storage takes a device copy but refuses device writes.
  const float constant[2] = {5, 6};
  Tensor borrowed = Tensor::borrow(tensor::DType::F32, {2}, constant, nullptr);
  CHECK(borrowed.storage()->device_data(backend) != nullptr);
  CHECK_THROWS_AS(borrowed.storage()->device_mutable_data(backend), tensor::TensorError);
  // A device result read on the host allocates its host bytes then, once.
  auto result = tensor::Storage::on_device(backend, 8);
  std::memcpy(result->device_mutable_data(backend), constant, 8);
  CHECK(reinterpret_cast<const float*>(result->data())[1] == 6);
  CHECK(device->stats().downloads == 2);
  result->data();
  CHECK(device->stats().downloads == 2);
}
