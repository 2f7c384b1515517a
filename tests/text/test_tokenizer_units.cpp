// The tokenizer's pieces on small hand-made inputs: UTF-8 helpers, BPE
// merge order, byte fallback, added tokens, and refusal of what is not
// supported.
#include <catch2/catch.hpp>

#include "linnet/text/tokenizer.hpp"
#include "linnet/text/utf8.hpp"

namespace {

using namespace linnet::text;

// A SentencePiece-style tokenizer over a few pieces, with byte fallback.
const char* kSentencePiece = R"({
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
                   {"id": 2, "content": "<|x|>", "special": false, "lstrip": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                 {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1]}}},
  "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
              {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "<|x|>": 2, "▁": 3, "a": 4, "b": 5, "▁a": 6, "ab": 7, "▁ab": 8,
                      "<0xC3>": 9, "<0xA9>": 10},
            "merges": ["▁ a", "a b", "▁a b"]}
})";

}  // namespace

TEST_CASE("utf8: incomplete tails and repair", "[text][utf8]") {
  CHECK(utf8::incomplete_tail("abc") == 0);
  CHECK(utf8::incomplete_tail("a\xC3") == 1);
  CHECK(utf8::incomplete_tail("a\xF0\x9F\x98") == 3);
  CHECK(utf8::incomplete_tail("a\xF0\x9F\x98\x80") == 0);
  CHECK(utf8::repair("ok\xFFok") == "ok\xEF\xBF\xBDok");
  CHECK(utf8::repair("\xE2\x82") == "\xEF\xBF\xBD");
}

TEST_CASE("BPE: merges by rank, byte fallback, added tokens, post-processor", "[text][bpe]") {
  const Tokenizer tokenizer = Tokenizer::from_json(kSentencePiece);
  // "▁ab": ▁+a first (rank 0), then ▁a+b (rank 2), not a+b (rank 1) first.
  CHECK(tokenizer.encode("ab", false) == std::vector<int32_t>{8});
  CHECK(tokenizer.encode("ab") == std::vector<int32_t>{1, 8});
  // é is not a piece: its two bytes; z has no byte pieces either: <unk> (fused).
  CHECK(tokenizer.encode("é", false) == std::vector<int32_t>{3, 9, 10});
  CHECK(tokenizer.encode("zz", false) == std::vector<int32_t>{3, 0});
  // An added token with lstrip takes the spaces before it.
  CHECK(tokenizer.encode("ab  <|x|>a", false) == std::vector<int32_t>{8, 2, 6});
  CHECK(tokenizer.decode(std::vector<int32_t>{8, 3, 9, 10}) == "ab é");
  CHECK(tokenizer.decode(std::vector<int32_t>{1, 8}, true) == "ab");
  // A byte run cut short decodes to U+FFFD; decode_bytes keeps the byte.
  CHECK(tokenizer.decode(std::vector<int32_t>{9}) == "\xEF\xBF\xBD");
  CHECK(tokenizer.decode_bytes(std::vector<int32_t>{9}) == "\xC3");
  CHECK_THROWS_AS(tokenizer.decode(std::vector<int32_t>{99}), TokenizerError);
  CHECK_THROWS_AS(tokenizer.encode("\xFF"), TokenizerError);
  CHECK(tokenizer.piece(8) == "▁ab");
  CHECK(tokenizer.id_of("<|x|>") == 2);
  CHECK(tokenizer.vocab_size() == 11);
}

TEST_CASE("tokenizer.json: what is not supported is refused by name", "[text]") {
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "WordPiece", "vocab": {}}})"),
                    Catch::Contains("the model `WordPiece` is not supported"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                                             "normalizer": {"type": "BertNormalizer"}})"),
                    Catch::Contains("the normalizer `BertNormalizer` is not supported"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})"),
                    Catch::Contains("not in the vocabulary"));
  CHECK_THROWS_WITH(Tokenizer::from_json("{not json"), Catch::Contains("is not valid JSON"));
}
