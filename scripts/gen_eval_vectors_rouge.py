#!/usr/bin/python3
"""Test vectors for calibench's ROUGE, Porter stemmer and SQuAD exact/F1, made by the
reference implementations themselves.

    /usr/bin/python3 scripts/gen_eval_vectors_rouge.py \\
        --rouge-ref /tmp/ref-rouge --squad-ref /tmp/ref-squad \\
        --out tests/data/eval

--rouge-ref: a directory holding Google's rouge-score as the package `rouge_score`
(google-research/google-research, folder rouge/: rouge_scorer.py, scoring.py,
tokenize.py, tokenizers.py) and its testdata/ (target.txt, prediction.txt,
pyrouge_files/target_multi.0.txt, prediction_multi.0.txt). --squad-ref: a directory
holding the official SQuAD v1.1 scoring functions as compute_score.py. Debian's
python3-nltk (PorterStemmer), -numpy, -absl, -six and -regex must be installed; run
with Debian's /usr/bin/python3. tests/data/eval/rouge/README.md names the commits.

Writes:
  rouge/porter.tsv        word <TAB> NLTK PorterStemmer().stem(word)
  rouge/tokenize.jsonl    text -> tokens (default and unicode tokenizer, +/- stemmer)
  rouge/scores.jsonl      RougeScorer(all 11 types).score / score_multi vectors
  rouge/bootstrap.jsonl   BootstrapAggregator after np.random.seed(seed)
  squad/squad.jsonl       normalize_answer, exact and f1 (max over references)
  squad/corpus.json       compute_score over all squad.jsonl items
Every random choice comes from random.Random with a fixed seed, so a rerun with the
same reference and Python/NLTK/numpy versions writes the same files.
"""
import argparse
import glob
import json
import os
import random
import re
import sys

from eval_vectors_words import vary_words

TYPES = ['rouge%d' % n for n in range(1, 10)] + ['rougeL', 'rougeLsum']

# ---- calibench's unicode tokenizer, defined here for the vectors (docs/eval.md)
CJK = r'\p{Han}\p{Hiragana}\p{Katakana}'
UNICODE_TOKEN = r'[' + CJK + r']\p{M}*|(?:(?![' + CJK + r'])[\p{L}\p{N}]\p{M}*)+'


def unicode_lower(text):
    """Simple (one-to-one) lowercase; U+0130 -> 'i'; final sigma folded to sigma."""
    out = []
    for c in text:
        if c == '\u0130':
            out.append('i')
        elif c == '\u03c2':
            out.append('\u03c3')
        else:
            low = c.lower()
            assert len(low) == 1, hex(ord(c))
            out.append(low)
    return ''.join(out)


class UnicodeTokenizer:
    def __init__(self, stemmer, regex):
        self.stemmer = stemmer
        self.re = regex.compile(UNICODE_TOKEN)

    def tokenize(self, text):
        toks = self.re.findall(unicode_lower(text))
        if self.stemmer:
            toks = [self.stemmer.stem(t) if len(t) > 3 and re.fullmatch('[a-z0-9]+', t) else t
                    for t in toks]
        return toks


# ---- random text ------------------------------------------------------------------
def chars(a, b):
    return [chr(c) for c in range(a, b + 1)]


HAN = chars(0x4E00, 0x9FA5)
KANA = chars(0x3041, 0x3093) + chars(0x30A1, 0x30F3)
HANGUL = chars(0xAC00, 0xD7A3)
ARABIC = chars(0x0621, 0x063A) + chars(0x0641, 0x064A)
ARABIC_MARKS = chars(0x064B, 0x0652)
ARABIC_DIGITS = chars(0x0660, 0x0669)
DEVANAGARI = chars(0x0915, 0x0939)
DEVANAGARI_MARKS = chars(0x093E, 0x094D)
GREEK = chars(0x0391, 0x03A9) + chars(0x03B1, 0x03C9)
EMOJI = chars(0x1F600, 0x1F64F) + chars(0x1F300, 0x1F320) + ['\u2764\ufe0f', '\U0001F44D\U0001F3FD',
                                                            '\U0001F468\u200d\U0001F469\u200d\U0001F467']
ODD = ['\u212a', '\u0130', 'İstanbul', 'ǅ', 'ß', 'ẞ', 'Ａｂｃ', 'café', 'cafe\u0301', 'naïve', '\u00a0',
       '\u2003', '\u3000', '\x1c', '\x85', '\u2028', '\t', '\r', '\x00', '_', 'ΟΔΟΣ', 'Σ', 'ς', "l'été",
       'Ⅻ', '²', '½', '٣', '\ufeff', '\u200b']
CODE = ['def', 'return', 'if', 'else', 'for', 'while', 'int', 'x', 'y1', 'foo_bar', 'fooBar', 'HTTPServer',
        '0x1F', '3.14', '==', '!=', '->', '=>', '(', ')', '{', '}', '[', ']', ';', ':', '//', '#', '"s"',
        "'c'", '+=', 'self.x', 'std::vector<int>', 'i++', 'a[i]', '\n    ', '\n']
PUNCT = [',', '.', '!', '?', ';', ':', ' -', "'s", '"', '(', ')', '...', ' --', '/']


def english(rng, vocab, n):
    out = []
    for i in range(n):
        w = rng.choice(vocab)
        r = rng.random()
        if r < 0.08:
            w = w.capitalize()
        elif r < 0.10:
            w = w.upper()
        elif r < 0.13:
            w = str(rng.randint(0, 5000))
        out.append(w)
        if rng.random() < 0.12:
            out.append(rng.choice(PUNCT))
    return ' '.join(out)


def script_text(rng, alphabet, n, marks=None, digits=None, spaced=True):
    out = []
    for _ in range(n):
        k = rng.randint(1, 6)
        w = ''
        for _ in range(k):
            w += rng.choice(alphabet)
            if marks and rng.random() < 0.3:
                w += rng.choice(marks)
        if digits and rng.random() < 0.1:
            w = ''.join(rng.choice(digits) for _ in range(rng.randint(1, 3)))
        out.append(w)
    return (' ' if spaced else '').join(out)


def mutate(rng, text, vocab):
    """A hypothesis near a reference: words dropped, swapped, replaced, inserted."""
    out = vary_words(rng, text, lambda: rng.choice(vocab), 0.08, lambda: rng.choice(vocab))
    if len(out) > 3 and rng.random() < 0.5:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return ' '.join(out)


def multiline(rng, make, lines):
    parts = []
    for _ in range(lines):
        r = rng.random()
        parts.append('' if r < 0.1 else ('  ' if r < 0.15 else make()))
    sep = '\r\n' if rng.random() < 0.1 else '\n'
    return sep.join(parts) + ('\n' if rng.random() < 0.3 else '')


def random_pairs(rng, vocab):
    """(category, refs, hyp) over the corpora the issue names."""
    kinds = ['prose', 'prose_lines', 'code', 'cjk', 'arabic', 'devanagari', 'greek', 'hangul', 'emoji',
             'odd', 'mixed', 'empty', 'long', 'long_lines', 'stemmy']
    out = []
    for i in range(450):
        kind = kinds[i % len(kinds)]
        if kind == 'prose':
            make = lambda: english(rng, vocab, rng.randint(1, 40))
        elif kind == 'prose_lines':
            make = lambda: multiline(rng, lambda: english(rng, vocab, rng.randint(1, 15)), rng.randint(1, 6))
        elif kind == 'code':
            make = lambda: ' '.join(rng.choice(CODE) for _ in range(rng.randint(1, 40)))
        elif kind == 'cjk':
            make = lambda: script_text(rng, HAN + KANA, rng.randint(1, 12), spaced=rng.random() < 0.5) + \
                (' ' + english(rng, vocab, 3) if rng.random() < 0.3 else '')
        elif kind == 'arabic':
            make = lambda: script_text(rng, ARABIC, rng.randint(1, 15), ARABIC_MARKS, ARABIC_DIGITS)
        elif kind == 'devanagari':
            make = lambda: script_text(rng, DEVANAGARI, rng.randint(1, 15), DEVANAGARI_MARKS)
        elif kind == 'greek':
            make = lambda: script_text(rng, GREEK + ['ς', 'Σ'], rng.randint(1, 15))
        elif kind == 'hangul':
            make = lambda: script_text(rng, HANGUL, rng.randint(1, 10))
        elif kind == 'emoji':
            make = lambda: ' '.join(rng.choice(EMOJI + vocab) for _ in range(rng.randint(1, 15)))
        elif kind == 'odd':
            make = lambda: ''.join(rng.choice(ODD + [' ', 'k', 'i', 'Kelvin', 'the']) for _ in range(rng.randint(1, 20)))
        elif kind == 'mixed':
            make = lambda: ' '.join(rng.choice([english(rng, vocab, 3), script_text(rng, HAN, 2),
                                                script_text(rng, ARABIC, 2), rng.choice(EMOJI),
                                                rng.choice(ODD)]) for _ in range(rng.randint(1, 8)))
        elif kind == 'empty':
            make = lambda: rng.choice(['', ' ', '\n', '\n\n', '...', '\u00a0', '!?', english(rng, vocab, 2)])
        elif kind == 'long':
            make = lambda: english(rng, vocab, rng.randint(300, 800))
        elif kind == 'long_lines':
            make = lambda: multiline(rng, lambda: english(rng, vocab, rng.randint(40, 150)), rng.randint(2, 4))
        else:  # words that the stemmer conflates
            make = lambda: ' '.join(rng.choice(STEMMY) for _ in range(rng.randint(1, 30)))
        n_refs = 1 if kind.startswith('long') else rng.choice([1, 1, 1, 2, 3, 4])
        refs = [make() for _ in range(n_refs)]
        r = rng.random()
        if r < 0.6 and kind not in ('empty',):
            hyp = mutate(rng, refs[0], vocab if kind in ('prose', 'long', 'stemmy') else refs[0].split(' ') or [''])
        else:
            hyp = make()
        out.append((kind, refs, hyp))
    return out


STEMMY = ['running', 'runs', 'ran', 'runner', 'connection', 'connected', 'connecting', 'connections',
          'generalization', 'generalizations', 'general', 'relational', 'conditional', 'hopeful',
          'hopefulness', 'happiness', 'happy', 'happily', 'skies', 'sky', 'dying', 'dies', 'died',
          'flies', 'flying', 'spied', 'agreed', 'feed', 'plastered', 'motoring', 'sing', 'controlling',
          'rolls', 'news', 'innings', 'succeeded', 'proceeding', 'archaeology', 'geology', 'fully',
          'gracefully', 'analogously', 'sensibility', 'electrical', 'formalize', 'adjustment',
          'adoption', 'probate', 'cease', 'caresses', 'ponies', 'ties', 'cats', 'enjoy', 'enjoyment']


def collect_words():
    """Real words: Debian's license texts, Python's standard library sources, NLTK's."""
    paths = sorted(glob.glob('/usr/share/common-licenses/*')) + sorted(glob.glob('/usr/lib/python3.11/*.py')) \
        + sorted(glob.glob('/usr/lib/python3/dist-packages/nltk/**/*.py', recursive=True))
    words = set()
    for p in paths:
        if not os.path.isfile(p):
            continue
        with open(p, encoding='utf-8', errors='replace') as f:
            for w in re.findall(r'[A-Za-z]+', f.read()):
                if len(w) <= 24:
                    words.add(w.lower())
    return sorted(words)


SUFFIXES = ['sses', 'ies', 'ss', 's', 'eed', 'ed', 'ing', 'ied', 'at', 'bl', 'iz', 'y', 'ational', 'tional',
            'enci', 'anci', 'izer', 'bli', 'abli', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation',
            'ator', 'alism', 'iveness', 'fulness', 'ousness', 'aliti', 'iviti', 'biliti', 'fulli', 'logi',
            'icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness', 'al', 'ance', 'ence', 'er', 'ic',
            'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'sion', 'tion', 'ion', 'ou', 'ism', 'ate', 'iti',
            'ous', 'ive', 'ize', 'e', 'll', 'yy', 'ying', 'yed']


def synthetic_words(rng):
    """Stems of every shape (y's, digits, doubled letters) with every rule's suffix."""
    cons, vows = 'bcdfghjklmnpqrstvwxz', 'aeiouy'
    out = set()
    for suffix in SUFFIXES:
        for _ in range(60):
            n = rng.randint(0, 7)
            stem = ''.join(rng.choice(cons if (k % 2 == 0) ^ (rng.random() < 0.2) else vows) for k in range(n))
            if rng.random() < 0.15 and stem:
                stem += stem[-1]
            if rng.random() < 0.05:
                stem += str(rng.randint(0, 99))
            out.add(stem + suffix)
            out.add(stem + suffix + suffix[-1:])
    for w in ['y', 'yy', 'yyy', 'yyyy', 'yyyyy', 'syzygy', 'toy', 'by', 'a', 'ab', 'abc', 'ies', 'sies',
              '1990s', '2nd', '4ever', 'xyzzy']:
        out.add(w)
    return sorted(out)


# ---- vectors ------------------------------------------------------------------------
def prf(s):
    return [s.precision, s.recall, s.fmeasure]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rouge-ref', required=True)
    ap.add_argument('--squad-ref', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    sys.path.insert(0, args.rouge_ref)
    sys.path.insert(0, args.squad_ref)
    import numpy as np
    import regex
    from nltk.stem import porter
    from rouge_score import rouge_scorer, scoring, tokenize
    import compute_score as squad

    rouge_dir = os.path.join(args.out, 'rouge')
    squad_dir = os.path.join(args.out, 'squad')
    os.makedirs(rouge_dir, exist_ok=True)
    os.makedirs(squad_dir, exist_ok=True)
    rng = random.Random(20261203)
    stemmer = porter.PorterStemmer()
    vocab = collect_words()

    # Porter: every collected word and the synthetic ones.
    words = sorted(set(vocab) | set(synthetic_words(rng)) | set(STEMMY) |
                   {'skies', 'sky', 'dying', 'lying', 'tying', 'news', 'innings', 'inning', 'outings',
                    'outing', 'cannings', 'canning', 'howe', 'proceed', 'exceed', 'succeed'})
    with open(os.path.join(rouge_dir, 'porter.tsv'), 'w', encoding='utf-8') as f:
        for w in words:
            f.write('%s\t%s\n' % (w, stemmer.stem(w)))

    # Scores. First the cases of rouge-score's own tests (rouge_scorer_test.py).
    td = os.path.join(args.rouge_ref, 'rouge_score', 'testdata')
    with open(os.path.join(td, 'target.txt')) as f:
        targets = f.readlines()
    with open(os.path.join(td, 'prediction.txt')) as f:
        predictions = f.readlines()
    with open(os.path.join(td, 'pyrouge_files', 'target_multi.0.txt')) as f:
        target_multi = f.read()
    with open(os.path.join(td, 'pyrouge_files', 'prediction_multi.0.txt')) as f:
        prediction_multi = f.read()
    cases = [('rouge_scorer_test', [t], p) for t, p in [
        ('testing one two', 'testing'), ('testing one two', ''), ('testing one two', 'testing one'),
        ('testing one two', 'testing two'), ('w1 w2 w3 w4 w5', 'w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5'),
        ('w1 w2 w3 w4 w5', ''), ('', 'w1'), ('w1 w2 w3 w4 w5', '/'),
        ('The quick brown fox jumps over the lazy dog', 'The quick brown dog jumps on the log.')]]
    cases += [('rouge_scorer_test:testdata/target.txt line %d' % (i + 1), [targets[i]], predictions[i])
              for i in range(2)]
    cases += [('rouge_scorer_test:testdata/pyrouge_files/*_multi.0.txt', [target_multi], prediction_multi)]
    # score_multi on equal F-measures with different P and R: np.argmax takes the first
    cases += [('score_multi tie', ['a b c d', 'a'], 'a b'), ('score_multi tie', ['a', 'a b c d'], 'a b')]
    cases += [('random:' + k, refs, hyp) for k, refs, hyp in random_pairs(rng, vocab)]

    tokenizers = {}
    for stem in (False, True):
        tokenizers[('default', stem)] = None  # rouge-score's DefaultTokenizer
        tokenizers[('unicode', stem)] = UnicodeTokenizer(stemmer if stem else None, regex)
    with open(os.path.join(rouge_dir, 'scores.jsonl'), 'w', encoding='utf-8') as f:
        for src, refs, hyp in cases:
            for (tok, stem), t in tokenizers.items():
                # the long texts once, with rouge-score's own tokenizer and stemmer
                if tok == 'unicode' and (src.startswith('rouge_scorer_test') or src.startswith('random:long')):
                    continue
                if src.startswith('random:long') and not stem:
                    continue
                sc = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem, tokenizer=t)
                res = sc.score_multi(refs, hyp) if len(refs) > 1 else sc.score(refs[0], hyp)
                # the same type alone: rouge-score takes another path for rougeLsum only
                only = rouge_scorer.RougeScorer(['rougeLsum'], use_stemmer=stem, tokenizer=t)
                alone = only.score_multi(refs, hyp) if len(refs) > 1 else only.score(refs[0], hyp)
                assert alone['rougeLsum'] == res['rougeLsum']
                f.write(json.dumps({'src': src, 'tokenizer': tok, 'stem': stem, 'refs': refs, 'hyp': hyp,
                                    'scores': {k: prf(res[k]) for k in TYPES}}, ensure_ascii=False) + '\n')

    # Tokens: tokenize_test.py's cases and every text above.
    # marks without a letter before them (emoji presentation, a text's first character)
    # are no token in the unicode tokenizer; marks after a letter stay in its token
    marks = ['\u2764\ufe0f love \u2764\ufe0f', '\u0301abc \u0301', 'a\u0301b', '\u65e5\u672c\u3099\u8a9e',
             'x \ufe0f y', '\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e',
             '\u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627', 'K\u212aelvin \u0130I\u0131',
             '\u1100\u1161\u11a8 \uac01']
    texts = ['one Two three', 'one\n Two \nthree'] + marks + [t for _, refs, hyp in cases for t in refs + [hyp]]
    with open(os.path.join(rouge_dir, 'tokenize.jsonl'), 'w', encoding='utf-8') as f:
        for text in [t for t in texts if len(t) < 1500][:300]:
            for (tok, stem), t in tokenizers.items():
                toks = tokenize.tokenize(text, stemmer if stem else None) if t is None else t.tokenize(text)
                f.write(json.dumps({'text': text, 'tokenizer': tok, 'stem': stem, 'tokens': toks},
                                   ensure_ascii=False) + '\n')

    # Bootstrap: scoring_test.py's two fixed cases, then random scores.
    boot = [(123, 0.9, 1000, [(1, 1 / 3, 1 / 2), (0, 0, 0), (1, 1, 1)]),
            (123, 0.0, 1000, [(1, 1 / 3, 1 / 2), (0, 0, 0), (1, 1, 1)])]
    r1 = rouge_scorer.RougeScorer(['rouge1'])
    seg = [prf(r1.score(refs[0], hyp)['rouge1']) for _, refs, hyp in cases]
    boot += [(12345, 0.95, 1000, seg), (0, 0.95, 100, seg[:1]), (4294967295, 0.5, 333, seg[:7]),
             (7, 0.99, 2000, seg[:300]), (1, 1.0, 10, seg[:2])]
    with open(os.path.join(rouge_dir, 'bootstrap.jsonl'), 'w', encoding='utf-8') as f:
        for seed, ci, n, scores in boot:
            np.random.seed(seed)
            agg = scoring.BootstrapAggregator(confidence_interval=ci, n_samples=n)
            for s in scores:
                agg.add_scores({'r': scoring.Score(*s)})
            a = agg.aggregate()['r']
            f.write(json.dumps({'seed': seed, 'confidence': ci, 'n_samples': n, 'scores': [list(s) for s in scores],
                                'low': prf(a.low), 'mid': prf(a.mid), 'high': prf(a.high)}) + '\n')

    # SQuAD: answers with articles, punctuation, case, Unicode.
    answers = ['The Eiffel Tower', 'eiffel tower', 'an apple', 'A', 'a', 'the', 'The the', 'An', 'U.S.A.',
               'usa', '1,000', '1000', 'Denver Broncos', 'the Denver Broncos!', "Beyoncé's", 'beyonces',
               'ΟΔΟΣ', 'οδος', 'ΟΔΟΣ.', 'ΑΣ\u0301Σ', 'İstanbul', 'istanbul', 'STRASSE', 'straße', 'ẞ',
               '«a»', 'a«b»', 'l\'été', 'the\u00a0end', 'the\x1cend', 'the\u3000end', 'end\u200b',
               '北京', '北 京', 'Ａn ａpple', 'x_the_y', 'the_', 'théa', 'a-b', 'a - b', '', '  ', '...',
               'Σ', 'aΣ', 'aΣb', 'a\'Σ', 'aΣ\'', 'ǅΣ', 'ΣΣ', 'ⅫΣ', 'ßΣ', '\x00the', 'the\tend\n']
    items = []
    srng = random.Random(14)
    for a in answers:
        items.append((a, [a.lower()]))
        items.append((a, [srng.choice(answers), a]))
    for _ in range(400):
        def ans():
            parts = [srng.choice(['the', 'a', 'an', 'The', 'A']) if srng.random() < 0.3 else '']
            parts += [srng.choice(vocab + answers + STEMMY) for _ in range(srng.randint(1, 6))]
            s = ' '.join(p for p in parts if p)
            if srng.random() < 0.3:
                s += srng.choice(PUNCT + ['\u00bf', '\u2014', '\u201c'])
            if srng.random() < 0.2:
                s = s.upper()
            return s
        hyp = ans()
        refs = [ans() for _ in range(srng.randint(1, 3))]
        if srng.random() < 0.4:
            refs.append(hyp.lower() if srng.random() < 0.5 else mutate(srng, hyp, vocab))
        items.append((hyp, refs))
    total_em = total_f1 = 0
    with open(os.path.join(squad_dir, 'squad.jsonl'), 'w', encoding='utf-8') as f:
        for hyp, refs in items:
            em = squad.metric_max_over_ground_truths(squad.exact_match_score, hyp, refs)
            f1 = squad.metric_max_over_ground_truths(squad.f1_score, hyp, refs)
            f.write(json.dumps({'hyp': hyp, 'refs': refs, 'norm_hyp': squad.normalize_answer(hyp),
                                'norm_refs': [squad.normalize_answer(r) for r in refs],
                                'exact': float(em), 'f1': float(f1)}, ensure_ascii=False) + '\n')
    dataset = [{'paragraphs': [{'qas': [{'id': str(i), 'answers': [{'text': r} for r in refs]}
                                        for i, (hyp, refs) in enumerate(items)]}]}]
    predictions = {str(i): hyp for i, (hyp, refs) in enumerate(items)}
    with open(os.path.join(squad_dir, 'corpus.json'), 'w', encoding='utf-8') as f:
        json.dump(squad.compute_score(dataset, predictions), f)
        f.write('\n')


if __name__ == '__main__':
    main()
