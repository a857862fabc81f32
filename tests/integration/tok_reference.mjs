// The reference side of the tokenizer tests: prints what the reference tokenizers
// give, in `calibench tokenize`'s output format, so the shell test can diff the two.
//
//   node tok_reference.mjs tiktoken ENCODING [options] FILE...   (npm tiktoken, WASM)
//   node tok_reference.mjs hf TOKENIZER_JSON [options] FILE...   (npm tokenizers, the
//                                                  Hugging Face Rust library, native)
// options: --count  --each-line  --special allow|text  --add-special-tokens
//          --decode-roundtrip (print decode(encode(x)) instead of ids)
// Files are read as node reads text (fs.readFileSync(f, "utf8")): invalid UTF-8
// becomes U+FFFD, which is what the references can be given.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [kind, spec, ...rest] = process.argv.slice(2);
const opts = { count: false, each: false, special: null, addSpecial: false, roundtrip: false };
const files = [];
for (let i = 0; i < rest.length; i++) {
  const a = rest[i];
  if (a === '--count') opts.count = true;
  else if (a === '--each-line') opts.each = true;
  else if (a === '--special') opts.special = rest[++i];
  else if (a === '--add-special-tokens') opts.addSpecial = true;
  else if (a === '--decode-roundtrip') opts.roundtrip = true;
  else files.push(a);
}

let encode, decode;
if (kind === 'tiktoken') {
  const { get_encoding } = require('tiktoken');
  const enc = get_encoding(spec);
  encode = (text) => {
    if (opts.special === 'allow') return Array.from(enc.encode(text, 'all'));
    if (opts.special === 'text') return Array.from(enc.encode(text, [], []));
    return Array.from(enc.encode(text));
  };
  decode = (ids) => Buffer.from(enc.decode(Uint32Array.from(ids)));
} else if (kind === 'hf') {
  const { Tokenizer } = require('tokenizers');
  const tok = Tokenizer.fromFile(spec);
  encode = async (text) => (await tok.encode(text, null, { addSpecialTokens: opts.addSpecial })).getIds();
  decode = async (ids) => Buffer.from(await tok.decode(ids, false), 'utf8');
} else {
  console.error(`usage: node tok_reference.mjs tiktoken|hf SPEC [options] FILE...`);
  process.exit(2);
}

async function one(text) {
  const ids = await encode(text);
  if (opts.roundtrip) return (await decode(ids)).toString('utf8');
  return opts.count ? String(ids.length) : ids.join(' ');
}

const out = [];
for (const f of files) {
  const text = fs.readFileSync(f, 'utf8');
  if (opts.each) {
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) out.push(await one(line));
  } else {
    out.push(await one(text));
  }
}
process.stdout.write(out.map((l) => l + '\n').join(''));
