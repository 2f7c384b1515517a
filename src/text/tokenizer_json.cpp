// Reading tokenizer.json into a Tokenizer::Impl. Every field the file sets
// is either understood or refused by name: a tokenizer that would
// silently compute other ids than the reference is worse than none.
#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tokenizer_impl.hpp"
#include "linnet/syntax/file_reading.hpp"

namespace linnet::text {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::string quote_regex(std::string_view literal) {
  std::string out = "\\Q";
  // \E inside \Q...\E ends the quote: spell it out of the quoted run.
  for (size_t at = 0; at < literal.size(); ++at) {
    if (literal.substr(at, 2) == "\\E") {
      out += "\\E\\\\E\\Q";
      ++at;
    } else {
      out += literal[at];
    }
  }
  return out + "\\E";
}

std::string type_of(element value, const std::string& where) {
  std::string_view type;
  if (value["type"].get(type) != simdjson::SUCCESS) throw TokenizerError(where + " has no `type`");
  return std::string(type);
}

std::string string_field(element value, const char* key, const std::string& where) {
  std::string_view text;
  if (value[key].get(text) != simdjson::SUCCESS) {
    throw TokenizerError(where + " needs a string `" + key + "`");
  }
  return std::string(text);
}

bool bool_field(element value, const char* key, bool fallback) {
  bool flag = fallback;
  if (value[key].get(flag) != simdjson::SUCCESS) return fallback;
  return flag;
}

// A Split/Replace pattern: {"String": "..."} or {"Regex": "..."}; the
// literal text (when `literal` is wanted and it is a String) or a regex.
std::shared_ptr<const Regex> pattern_regex(element pattern, const std::string& where, std::string* literal) {
  std::string_view text;
  if (pattern["String"].get(text) == simdjson::SUCCESS) {
    if (literal) {
      *literal = std::string(text);
      return nullptr;
    }
    return std::make_shared<const Regex>(quote_regex(text));
  }
  if (pattern["Regex"].get(text) == simdjson::SUCCESS) return std::make_shared<const Regex>(std::string(text));
  throw TokenizerError(where + "'s pattern is neither {\"String\": ...} nor {\"Regex\": ...}");
}

void read_normalizer(element value, std::vector<NormalizerStep>& steps) {
  if (value.is_null()) return;
  const std::string type = type_of(value, "the normalizer");
  using Kind = NormalizerStep::Kind;
  if (type == "Sequence") {
    simdjson::dom::array list;
    if (value["normalizers"].get(list) != simdjson::SUCCESS) throw TokenizerError("a Sequence normalizer has no list");
    for (element item : list) read_normalizer(item, steps);
  } else if (type == "NFC") {
    steps.push_back({Kind::NFC, {}, {}, {}});
  } else if (type == "NFD") {
    steps.push_back({Kind::NFD, {}, {}, {}});
  } else if (type == "NFKC") {
    steps.push_back({Kind::NFKC, {}, {}, {}});
  } else if (type == "NFKD") {
    steps.push_back({Kind::NFKD, {}, {}, {}});
  } else if (type == "Lowercase") {
    steps.push_back({Kind::Lowercase, {}, {}, {}});
  } else if (type == "Prepend") {
    steps.push_back({Kind::Prepend, string_field(value, "prepend", "the Prepend normalizer"), {}, {}});
  } else if (type == "Replace") {
    NormalizerStep step{Kind::Replace, {}, {}, string_field(value, "content", "the Replace normalizer")};
    step.regex = pattern_regex(value["pattern"], "the Replace normalizer", &step.text);
    steps.push_back(std::move(step));
  } else {
    throw TokenizerError("the normalizer `" + type + "` is not supported");
  }
}

void read_pre_tokenizer(element value, std::vector<PreTokenizerStep>& steps) {
  if (value.is_null()) return;
  const std::string type = type_of(value, "the pre-tokenizer");
  using Kind = PreTokenizerStep::Kind;
  if (type == "Sequence") {
    simdjson::dom::array list;
    if (value["pretokenizers"].get(list) != simdjson::SUCCESS) {
      throw TokenizerError("a Sequence pre-tokenizer has no list");
    }
    for (element item : list) read_pre_tokenizer(item, steps);
  } else if (type == "Split") {
    PreTokenizerStep step(Kind::Split);
    step.regex = pattern_regex(value["pattern"], "the Split pre-tokenizer", nullptr);
    const std::string behavior = string_field(value, "behavior", "the Split pre-tokenizer");
    using Behavior = PreTokenizerStep::Behavior;
    if (behavior == "Isolated") step.behavior = Behavior::Isolated;
    else if (behavior == "Removed") step.behavior = Behavior::Removed;
    else if (behavior == "MergedWithPrevious") step.behavior = Behavior::MergedWithPrevious;
    else if (behavior == "MergedWithNext") step.behavior = Behavior::MergedWithNext;
    else throw TokenizerError("the Split behavior `" + behavior + "` is not supported");
    step.invert = bool_field(value, "invert", false);
    if (step.invert) throw TokenizerError("an inverted Split pre-tokenizer is not supported");
    steps.push_back(std::move(step));
  } else if (type == "ByteLevel") {
    PreTokenizerStep step(Kind::ByteLevel);
    step.add_prefix_space = bool_field(value, "add_prefix_space", false);
    step.use_regex = bool_field(value, "use_regex", true);
    if (step.use_regex) {
      // GPT-2's pattern, which ByteLevel applies when `use_regex` is set.
      step.regex = std::make_shared<const Regex>(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
    }
    steps.push_back(std::move(step));
  } else if (type == "Metaspace") {
    PreTokenizerStep step(Kind::Metaspace);
    step.replacement = string_field(value, "replacement", "the Metaspace pre-tokenizer");
    std::string_view scheme;
    if (value["prepend_scheme"].get(scheme) == simdjson::SUCCESS) {
      step.prepend_scheme = std::string(scheme);
    } else {
      step.prepend_scheme = bool_field(value, "add_prefix_space", true) ? "always" : "never";
    }
    if (step.prepend_scheme != "always" && step.prepend_scheme != "first" && step.prepend_scheme != "never") {
      throw TokenizerError("the Metaspace prepend scheme `" + step.prepend_scheme + "` is not supported");
    }
    step.split = bool_field(value, "split", true);
    steps.push_back(std::move(step));
  } else {
    throw TokenizerError("the pre-tokenizer `" + type + "` is not supported");
  }
}

void read_post_processor(element value, const Vocabulary& vocab, std::optional<std::vector<TemplateItem>>& out) {
  if (value.is_null()) return;
  const std::string type = type_of(value, "the post-processor");
  if (type == "Sequence") {
    simdjson::dom::array list;
    if (value["processors"].get(list) != simdjson::SUCCESS) throw TokenizerError("a Sequence post-processor has no list");
    for (element item : list) read_post_processor(item, vocab, out);
  } else if (type == "ByteLevel") {
    // Only adjusts offsets: the ids are unchanged.
  } else if (type == "TemplateProcessing") {
    simdjson::dom::array single;
    if (value["single"].get(single) != simdjson::SUCCESS) throw TokenizerError("TemplateProcessing has no `single`");
    std::vector<TemplateItem> items;
    for (element item : single) {
      element special;
      if (item["SpecialToken"].get(special) == simdjson::SUCCESS) {
        const std::string name = string_field(special, "id", "a TemplateProcessing special token");
        TemplateItem entry;
        simdjson::dom::array ids;
        if (value["special_tokens"][name]["ids"].get(ids) == simdjson::SUCCESS) {
          for (element id : ids) {
            int64_t number = 0;
            if (id.get(number) != simdjson::SUCCESS) throw TokenizerError("a special token id is not an integer");
            entry.ids.push_back(static_cast<int32_t>(number));
          }
        } else if (auto found = vocab.find(name); found != vocab.end()) {
          entry.ids.push_back(found->second);
        } else {
          throw TokenizerError("TemplateProcessing names the special token `" + name + "`, which it does not define");
        }
        items.push_back(std::move(entry));
      } else if (item["Sequence"].error() == simdjson::SUCCESS) {
        items.push_back({true, {}});
      } else {
        throw TokenizerError("a TemplateProcessing item is neither SpecialToken nor Sequence");
      }
    }
    out = std::move(items);
  } else {
    throw TokenizerError("the post-processor `" + type + "` is not supported");
  }
}

void read_decoder(element value, std::vector<DecoderStep>& steps) {
  if (value.is_null()) return;
  const std::string type = type_of(value, "the decoder");
  using Kind = DecoderStep::Kind;
  if (type == "Sequence") {
    simdjson::dom::array list;
    if (value["decoders"].get(list) != simdjson::SUCCESS) throw TokenizerError("a Sequence decoder has no list");
    for (element item : list) read_decoder(item, steps);
  } else if (type == "ByteLevel") {
    steps.emplace_back(Kind::ByteLevel);
  } else if (type == "ByteFallback") {
    steps.emplace_back(Kind::ByteFallback);
  } else if (type == "Fuse") {
    steps.emplace_back(Kind::Fuse);
  } else if (type == "Replace") {
    DecoderStep step(Kind::Replace);
    std::string literal;
    if (pattern_regex(value["pattern"], "the Replace decoder", &literal)) {
      throw TokenizerError("a Replace decoder with a regex pattern is not supported");
    }
    step.pattern = literal;
    step.content = string_field(value, "content", "the Replace decoder");
    steps.push_back(std::move(step));
  } else if (type == "Strip") {
    DecoderStep step(Kind::Strip);
    step.content = string_field(value, "content", "the Strip decoder");
    uint64_t start = 0, stop = 0;
    if (value["start"].get(start) != simdjson::SUCCESS) start = 0;
    if (value["stop"].get(stop) != simdjson::SUCCESS) stop = 0;
    step.start = start;
    step.stop = stop;
    steps.push_back(std::move(step));
  } else if (type == "Metaspace") {
    DecoderStep step(Kind::Metaspace);
    step.replacement = string_field(value, "replacement", "the Metaspace decoder");
    std::string_view scheme;
    if (value["prepend_scheme"].get(scheme) == simdjson::SUCCESS) {
      step.prepend = scheme != "never";
    } else {
      step.prepend = bool_field(value, "add_prefix_space", true);
    }
    steps.push_back(std::move(step));
  } else {
    throw TokenizerError("the decoder `" + type + "` is not supported");
  }
}

std::unique_ptr<BpeModel> read_model(element model) {
  const std::string type = type_of(model, "the model");
  if (type != "BPE") throw TokenizerError("the model `" + type + "` is not supported (only BPE)");
  std::string_view affix;
  if ((model["continuing_subword_prefix"].get(affix) == simdjson::SUCCESS && !affix.empty()) ||
      (model["end_of_word_suffix"].get(affix) == simdjson::SUCCESS && !affix.empty())) {
    throw TokenizerError("BPE with a continuing-subword prefix or end-of-word suffix is not supported");
  }
  double dropout = 0;
  if (model["dropout"].get(dropout) == simdjson::SUCCESS && dropout > 0) {
    throw TokenizerError("BPE dropout is not supported (it makes encoding random)");
  }
  object vocab_object;
  if (model["vocab"].get(vocab_object) != simdjson::SUCCESS) throw TokenizerError("the BPE model has no `vocab` object");
  Vocabulary vocab;
  vocab.reserve(vocab_object.size());
  for (auto [key, value] : vocab_object) {
    int64_t id = 0;
    if (value.get(id) != simdjson::SUCCESS || id < 0 || id > INT32_MAX) {
      throw TokenizerError("the vocabulary entry `" + std::string(key) + "` has no valid id");
    }
    vocab.emplace(std::string(key), static_cast<int32_t>(id));
  }
  std::vector<std::pair<std::string, std::string>> merges;
  simdjson::dom::array merge_list;
  if (model["merges"].get(merge_list) == simdjson::SUCCESS) {
    merges.reserve(merge_list.size());
    for (element merge : merge_list) {
      std::string_view text;
      simdjson::dom::array pair;
      if (merge.get(text) == simdjson::SUCCESS) {
        // The older spelling, "left right": the parts never hold a space.
        const size_t space = text.find(' ');
        if (space == std::string_view::npos) throw TokenizerError("the merge `" + std::string(text) + "` has no space");
        merges.emplace_back(std::string(text.substr(0, space)), std::string(text.substr(space + 1)));
      } else if (merge.get(pair) == simdjson::SUCCESS && pair.size() == 2) {
        std::string_view left, right;
        if (pair.at(0).get(left) != simdjson::SUCCESS || pair.at(1).get(right) != simdjson::SUCCESS) {
          throw TokenizerError("a merge pair does not hold two strings");
        }
        merges.emplace_back(std::string(left), std::string(right));
      } else {
        throw TokenizerError("a merge is neither \"left right\" nor [left, right]");
      }
    }
  }
  BpeOptions options;
  std::string_view unk;
  if (model["unk_token"].get(unk) == simdjson::SUCCESS) options.unk_token = std::string(unk);
  options.fuse_unk = bool_field(model, "fuse_unk", false);
  options.byte_fallback = bool_field(model, "byte_fallback", false);
  options.ignore_merges = bool_field(model, "ignore_merges", false);
  return std::make_unique<BpeModel>(std::move(vocab), merges, std::move(options));
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view json, const std::string& origin) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  element root;
  if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
    throw TokenizerError(origin + " is not valid JSON (" + simdjson::error_message(error) + ")");
  }
  try {
    auto impl = std::make_unique<Impl>();
    element model;
    if (root["model"].get(model) != simdjson::SUCCESS) throw TokenizerError("there is no `model`");
    impl->model = read_model(model);
    element part;
    if (root["normalizer"].get(part) == simdjson::SUCCESS) read_normalizer(part, impl->normalizers);
    if (root["pre_tokenizer"].get(part) == simdjson::SUCCESS) read_pre_tokenizer(part, impl->pre_tokenizers);
    if (root["post_processor"].get(part) == simdjson::SUCCESS) {
      read_post_processor(part, impl->model->vocab(), impl->post_template);
    }
    if (root["decoder"].get(part) == simdjson::SUCCESS) read_decoder(part, impl->decoders);

    simdjson::dom::array added;
    if (root["added_tokens"].get(added) == simdjson::SUCCESS) {
      for (element token : added) {
        AddedToken entry;
        int64_t id = 0;
        if (token["id"].get(id) != simdjson::SUCCESS || id < 0 || id > INT32_MAX) {
          throw TokenizerError("an added token has no valid id");
        }
        entry.id = static_cast<int32_t>(id);
        entry.content = string_field(token, "content", "an added token");
        if (entry.content.empty()) throw TokenizerError("an added token is empty");
        entry.special = bool_field(token, "special", false);
        entry.lstrip = bool_field(token, "lstrip", false);
        entry.rstrip = bool_field(token, "rstrip", false);
        if (bool_field(token, "single_word", false)) {
          throw TokenizerError("the added token `" + entry.content + "` is single_word, which is not supported");
        }
        impl->added_by_id[entry.id] = impl->added.size();
        impl->added.push_back(std::move(entry));
      }
    }
    for (size_t i = 0; i < impl->added.size(); ++i) {
      impl->added_by_first_byte[static_cast<unsigned char>(impl->added[i].content[0])].push_back(i);
    }
    for (auto& candidates : impl->added_by_first_byte) {
      std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
        return impl->added[a].content.size() > impl->added[b].content.size();
      });
    }

    // id -> piece, for decoding.
    int64_t size = 0;
    for (const auto& [piece, id] : impl->model->vocab()) size = std::max<int64_t>(size, int64_t{id} + 1);
    for (const AddedToken& token : impl->added) size = std::max<int64_t>(size, int64_t{token.id} + 1);
    impl->pieces.assign(static_cast<size_t>(size), std::string());
    impl->has_piece.assign(static_cast<size_t>(size), false);
    for (const auto& [piece, id] : impl->model->vocab()) {
      impl->pieces[static_cast<size_t>(id)] = piece;
      impl->has_piece[static_cast<size_t>(id)] = true;
    }
    for (const AddedToken& token : impl->added) {
      impl->pieces[static_cast<size_t>(token.id)] = token.content;
      impl->has_piece[static_cast<size_t>(token.id)] = true;
    }
    return Tokenizer(std::move(impl));
  } catch (const TokenizerError& failure) {
    throw TokenizerError(origin + ": " + failure.what());
  }
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  std::string text, problem;
  if (!syntax::read_whole_file(path, text, problem)) throw TokenizerError("`" + path + "` " + problem);
  return from_json(text, path);
}

}  // namespace linnet::text
