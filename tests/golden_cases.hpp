// The stored reference cases in golden/ and the card each one runs, shared
// by the tests that run cards on them (nest, validate).
#pragma once

#include <string>
#include <vector>

namespace linnet_test {

struct GoldenCase {
  std::string card;    // under nest/
  std::string golden;  // under golden/
};

inline const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = {
      {"mistral-7b-instruct-v0.3", "mistral-a"},
      {"mistral-7b-instruct-v0.3", "mistral-trunc"},
      {"qwen3-8b", "qwen3-a"},
      {"gpt-oss-20b", "gptoss-a"},
  };
  return cases;
}

}  // namespace linnet_test
