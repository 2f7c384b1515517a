// Helpers for the tests that run cards on the golden checkpoints: which card
// goes with which golden case, the generics from meta.json's
// `linnet_generics` as --bind arguments, a loaded session, and expected.npz.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <simdjson.h>
#include <string>
#include <vector>

#include "linnet/nest/bind_from.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/nest/session.hpp"
#include "linnet/tensor/npz.hpp"

namespace nest_test {

using linnet::tensor::DType;
using linnet::tensor::Shape;
using linnet::tensor::Tensor;

inline std::string source_path(const std::string& relative) { return std::string(LINNET_SOURCE_DIR) + "/" + relative; }
inline std::string card_path(const std::string& card) { return source_path("nest/" + card); }
inline std::string golden_path(const std::string& golden) { return source_path("golden/" + golden); }

// "Vocab=512", "T=f32", ... from golden/<case>/meta.json's linnet_generics.
inline std::vector<std::string> golden_binds(const std::string& golden) {
  const std::string path = golden_path(golden) + "/meta.json";
  std::string why;
  // The same reader as --bind-from (a meta.json needs no root block).
  auto binds = linnet::nest::binds_from_file(path, linnet::nest::RootBlock{}, why);
  if (!binds) FAIL(why);
  return *binds;
}

// A session of `card` on golden/<golden> with its generics, plus `extra`
// binds (which override, as later --bind arguments do).
inline std::unique_ptr<linnet::nest::Session> golden_session(const std::string& card, const std::string& golden,
                                                             const std::vector<std::string>& extra = {}) {
  linnet::nest::SessionOptions options;
  options.card = card_path(card);
  options.binds = golden_binds(golden);
  for (const std::string& bind : extra) options.binds.push_back(bind);
  options.weights = {golden_path(golden)};
  options.std_dir = source_path("stdlib");
  auto session = std::make_unique<linnet::nest::Session>(options);
  if (!session->load()) FAIL("the session did not load:\n" << session->render_diagnostics());
  return session;
}

// A writable copy of a card directory (the cards are checked in read-only),
// so that a test can change its nest.toml and remove it afterwards.
inline void copy_card(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  fs::copy(from, to, fs::copy_options::recursive);
  fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(to)) {
    fs::permissions(entry.path(), entry.is_directory() ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add);
  }
}

inline std::map<std::string, linnet::tensor::NpyArray> golden_expected(const std::string& golden) {
  return linnet::tensor::read_npz(golden_path(golden) + "/expected.npz");
}

inline Tensor expected_tensor(const std::string& golden, const std::string& name) {
  const auto arrays = golden_expected(golden);
  auto found = arrays.find(name);
  if (found == arrays.end()) FAIL("golden/" << golden << "/expected.npz has no " << name);
  return linnet::nest::tensor_from_npy(found->second);
}

inline double max_abs_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double difference = std::abs(x[i] - y[i]);
    if (std::isnan(difference)) return INFINITY;
    worst = std::max(worst, difference);
  }
  return worst;
}

inline Tensor i32_tensor(const std::vector<int32_t>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape);
}
inline Tensor i32_scalar(int64_t value) { return Tensor::scalar(DType::I32, value); }

// Calls an entry with named inputs; a failure shows the rendered diagnostic.
inline linnet::eval::Value call(linnet::nest::Session& session, const std::string& entry,
                                const std::map<std::string, Tensor>& inputs,
                                const linnet::eval::GenericBindings& generics = {}) {
  try {
    linnet::eval::EntryInputs call_inputs = session.inputs(entry, inputs);
    for (const auto& [name, value] : generics) call_inputs.generics[name] = value;
    return session.call(entry, call_inputs);
  } catch (const linnet::nest::RunError& failure) {
    FAIL("entry `" << entry << "` failed:\n" << failure.what());
  } catch (const linnet::nest::InputError& failure) {
    FAIL("entry `" << entry << "`: " << failure.what());
  }
  return {};
}

}  // namespace nest_test
