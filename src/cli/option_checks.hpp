// Checks of command-line values that the option parser itself does not
// make. Every command runs them before it loads anything, so that a bad
// value is refused at once (exit 2) rather than after a long load or run.
// Each prints one `error: ...` line to stderr and returns 2, or returns 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace linnet::cli {

// CLI11 checks of an option's text, run before CLI11 converts it (which
// would take `` as 0, saturate 2^64 to the type's largest value and wrap
// `-1` into an unsigned seed). A failed check is a usage error (exit 2):
// "error: --seed: `-1` is not an integer from 0 to 18446744073709551615".
//
// An integer option: decimal digits only (a leading `-` where `min` < 0),
// from `min` to `max`.
CLI::Validator integer_from(int64_t min, int64_t max);
// A seed: any 64-bit unsigned integer, in decimal.
CLI::Validator seed_value();
// A number option: a decimal number as C++'s from_chars reads it (`nan`
// and `inf` pass here and are refused by the option's own check, which
// says why); never empty, blank or with trailing text.
CLI::Validator number_value();
// A name or path option given with an empty value (`--entry ''`), which
// would otherwise read as the option not given at all.
CLI::Validator not_empty();

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
