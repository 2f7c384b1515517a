#!/usr/bin/env node
// Makes the small tokenizers of the golden cases: their checkpoints have
// synthetic 512-entry vocabularies, so each case gets a tokenizer.json of
// exactly that size, trained here (plain BPE, most frequent pair first) on
// this project's own docs, in its family's style:
//   qwen3-a, gptoss-a    byte-level BPE with the family's split pattern
//                        and chat-style special tokens
//   mistral-a, -trunc    SentencePiece-style BPE: "▁" for spaces, byte
//                        fallback, a <s> added in front by the post-processor
// and a tokenizer_config.json with a small chat template of our own.
// Deterministic: the output is committed; rerun after changing this file.
//   node scripts/make_golden_tokenizers.js
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const VOCAB = 512;
const corpus = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).sort().map((f) => `docs/${f}`)]
  .filter((f) => f.endsWith('.md'))
  .map((f) => fs.readFileSync(path.join(root, f), 'utf8'))
  .join('\n');

// GPT-2's byte-to-character table.
function byteChars() {
  const chars = [];
  let extra = 256;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    chars.push(String.fromCodePoint(printable ? b : extra++));
  }
  return chars;
}

// Most-frequent-pair BPE over words (arrays of symbols), until `budget` merges.
function train(words, budget) {
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) || 0) + 1);
  let entries = [...counts.entries()].map(([w, n]) => [w.split('\u0000'), n]);
  const merges = [];
  while (merges.length < budget) {
    const pairs = new Map();
    for (const [symbols, n] of entries) {
      for (let i = 0; i + 1 < symbols.length; ++i) {
        const key = symbols[i] + '\u0000' + symbols[i + 1];
        pairs.set(key, (pairs.get(key) || 0) + n);
      }
    }
    let best = null;
    let bestCount = 0;
    for (const [key, n] of pairs) {
      if (n > bestCount || (n === bestCount && key < best)) {
        best = key;
        bestCount = n;
      }
    }
    if (!best || bestCount < 2) break;
    const [a, b] = best.split('\u0000');
    merges.push([a, b]);
    entries = entries.map(([symbols, n]) => {
      const out = [];
      for (let i = 0; i < symbols.length; ++i) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
          out.push(a + b);
          ++i;
        } else {
          out.push(symbols[i]);
        }
      }
      return [out, n];
    });
  }
  return merges;
}

const chatTemplate =
  "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
const mistralTemplate =
  "{{- bos_token }}{%- for message in messages %}{%- if message['role'] == 'user' %}{{- '[INST] ' + message['content'] + ' [/INST]' }}" +
  "{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content'] + eos_token }}{%- endif %}{%- endfor %}";

function byteLevel(caseName, pattern, specials, eos) {
  const chars = byteChars();
  const words = [];
  const re = new RegExp(jsPattern(pattern), "gu");
  for (const match of corpus.matchAll(re)) {
    const bytes = Buffer.from(match[0], 'utf8');
    words.push([...bytes].map((b) => chars[b]).join('\u0000'));
  }
  const merges = train(words, VOCAB - 256 - specials.length);
  const vocab = {};
  chars.forEach((c, i) => (vocab[c] = i));
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  const added = specials.map((content, i) => ({
    id: Object.keys(vocab).length + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const byteLevelStep = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: caseName === 'qwen3-a' ? { type: 'NFC' } : null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false }, byteLevelStep] },
    post_processor: byteLevelStep, decoder: byteLevelStep,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: caseName === 'gptoss-a', vocab, merges },
  };
  const config = { tokenizer_class: 'PreTrainedTokenizerFast', bos_token: null, eos_token: eos, chat_template: chatTemplate };
  return { tokenizer, config, size: Object.keys(vocab).length + added.length };
}

function sentencePiece() {
  const marker = '\u2581';
  const specials = ['<unk>', '<s>', '</s>'];
  const vocab = {};
  specials.forEach((s, i) => (vocab[s] = i));
  for (let b = 0; b < 256; ++b) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = Object.keys(vocab).length;
  const text = corpus.replace(/ /g, marker);
  const charCounts = new Map();
  for (const c of text) if (c !== '\n') charCounts.set(c, (charCounts.get(c) || 0) + 1);
  const alphabet = [...charCounts.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 90).map(([c]) => c);
  if (!alphabet.includes(marker)) alphabet.push(marker);
  for (const c of alphabet) vocab[c] = Object.keys(vocab).length;
  const known = new Set(alphabet);
  const words = [];
  for (const line of text.split('\n')) {
    for (const w of (marker + line).split(new RegExp(`(?=${marker})`, 'u'))) {
      const symbols = [...w].filter((c) => known.has(c));
      if (symbols.length) words.push(symbols.join('\u0000'));
    }
  }
  const merges = train(words, VOCAB - Object.keys(vocab).length);
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  const added = specials.map((content, id) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const tokenizer = {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: marker }, { type: 'Replace', pattern: { String: ' ' }, content: marker }] },
    pre_tokenizer: null,
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: marker }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
      { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges },
  };
  const config = { tokenizer_class: 'LlamaTokenizerFast', add_bos_token: true, bos_token: '<s>', eos_token: '</s>', chat_template: mistralTemplate };
  return { tokenizer, config, size: Object.keys(vocab).length };
}

const qwenPattern = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const o200kPattern = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// JavaScript has no (?i:...) group: the training split spells it out.
const jsPattern = (p) => p.replace(/\(\?i:'s\|'t\|'re\|'ve\|'m\|'ll\|'d\)/g, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])");

const cases = {
  'qwen3-a': byteLevel('qwen3-a', qwenPattern, ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], '<|im_end|>'),
  'gptoss-a': byteLevel('gptoss-a', o200kPattern, ['<|start|>', '<|message|>', '<|end|>', '<|return|>', '<|channel|>'], '<|return|>'),
  'mistral-a': sentencePiece(),
};
cases['mistral-trunc'] = cases['mistral-a'];
for (const [name, made] of Object.entries(cases)) {
  // The training split used JavaScript's pattern; the file keeps the family's.
  const dir = path.join(root, 'golden', name);
  if (made.size !== VOCAB) throw new Error(`${name}: ${made.size} entries, not ${VOCAB}`);
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(made.tokenizer) + '\n');
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(made.config, null, 2) + '\n');
  console.log(`${name}: ${made.size} tokens`);
}
module.exports = { jsPattern };
