// Writes seeded random text built from the characters where tokenizers are most
// likely to disagree: contractions with odd case (’S, 'ſ, 'K with a Kelvin sign),
// letters of many scripts, combining marks, digits of other scripts, every
// White_Space character and look-alikes (U+180E, U+200B, U+FEFF), controls, emoji
// with modifiers, ZWJ and variation selectors, unassigned and private-use code
// points, CR/LF mixes.
//   node tok_random.mjs SEED LINES > file
const [seed = '1', lines = '2000'] = process.argv.slice(2);
let s = BigInt(seed) * 0x9E3779B97F4A7C15n + 1n;
const rnd = (n) => { // SplitMix64
  s = (s + 0x9E3779B97F4A7C15n) & 0xFFFFFFFFFFFFFFFFn;
  let z = s;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & 0xFFFFFFFFFFFFFFFFn;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & 0xFFFFFFFFFFFFFFFFn;
  return Number((z ^ (z >> 31n)) % BigInt(n));
};
const pool = [
  "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'D", "'\u017f", "'\u212a", "’s", "'x",
  'a', 'Z', 'hello', 'World', 'ÉCOLE', 'straße', 'İstanbul', 'ǅ', 'ǈ', 'ﬁ', 'ǲ', 'Ω', 'µ',
  'привет', 'ΑΒΓ', 'שלום', 'مرحبا', 'नमस्ते', 'ไทย', '中文', '日本語', 'ｶﾀｶﾅ', '한국어', '각',
  'e\u0301', 'a\u0300\u0323', '\u0301', '\u0308\u0308', 'q\u0307\u0323', '\u1e0b\u0323', 'A\u030a', '\u212b', '\u0958',
  '0', '7', '12', '123', '1234', '٣٤٥', '۱۲', '१२३', '１２３', '½', 'Ⅻ', '²', '𝟙𝟚',
  ' ', '  ', '   ', '\t', '\n', '\r\n', '\r', '\n\n', ' \n', '\u000b', '\u000c', '\u0085', '\u00a0', '\u1680',
  '\u2000', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\u180e', '\u200b', '\ufeff',
  '\u0000', '\u0001', '\u001f', '\u007f', '\u0378', '\ue000', '\u{10ffff}', '\ufffd',
  '.', ',', '!', '?', '...', '—', '–', '-', '_', '/', '\\', '"', '«', '»', '(', ')', '[', ']', '{', '}', '<', '>',
  '<|', '|>', '<s>', '</s>', '@', '#', '$', '%', '&', '*', '+', '=', '~', '`', '^', '|', ':', ';',
  '😀', '👍🏽', '👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇺🇸', '❤️', '1️⃣', '\u200d', '\ufe0f', '🤷‍♂️', '🧑🏿‍🚀',
];
const out = [];
for (let l = 0; l < +lines; l++) {
  const n = 1 + rnd(24);
  let line = '';
  for (let i = 0; i < n; i++) line += pool[rnd(pool.length)].replace(/\n/g, rnd(4) ? '\n' : ' ');
  out.push(line.replace(/\n/g, ' '));
}
process.stdout.write(out.join('\n') + '\n');
