// Reading the JSON files beside a tokenizer (tokenizer_config.json,
// generation_config.json) with simdjson.
#pragma once

#include <string>
#include <string_view>

namespace linnet::text {

// tokenizer_config.json files hold integers past 64 bits (a
// `model_max_length` of 1e30 written out), which simdjson refuses: such a
// run of digits outside strings gets a ".0" and reads as a double.
std::string tame_big_integers(std::string_view json);

}  // namespace linnet::text
