// Checks of command-line values that the option parser itself does not
// make. Every command runs them before it loads anything, so that a bad
// value is refused at once (exit 2) rather than after a long load or run.
// Each prints one `error: ...` line to stderr and returns 2, or returns 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace linnet::cli {

// --temperature: 0 (greedy) or a finite number in [kMinTemperature,
// kMaxTemperature]. NaN, infinities and tiny (denormal) values would make
// logits / T overflow and the sampler read garbage.
inline constexpr double kMinTemperature = 1e-4;
inline constexpr double kMaxTemperature = 1e4;
int check_temperature(double temperature);

// A tolerance such as --max-abs: finite and not negative.
int check_tolerance(const std::string& flag, const std::optional<double>& value);

// --max-loop-iterations: at least 1.
int check_loop_limit(const std::optional<int64_t>& limit);

// --out: empty, or a file ending in .npz/.npy (or any of `extensions`
// when given) whose directory exists and is writable, and which is not
// itself a directory.
int check_output_path(const std::string& out);

// --weights: every path exists (a directory or a file).
int check_weights_paths(const std::vector<std::string>& weights);

// "1,2,3" or "1 2 3": non-negative integers below 2^31 separated by one
// comma (spaces around it allowed) or by spaces. An empty item (`1,,2`),
// a sign, or trailing junk gives nothing.
std::optional<std::vector<int32_t>> parse_token_list(const std::string& text);

}  // namespace linnet::cli
