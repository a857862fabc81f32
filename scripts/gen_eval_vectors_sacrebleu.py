#!/usr/bin/env python3
"""Generate tests/data/eval/bleu_*.jsonl from sacrebleu itself, run from source:

    /usr/bin/python3 scripts/gen_eval_vectors_sacrebleu.py --sacrebleu DIR [--out tests/data/eval]

DIR is a checkout of mjpost/sacrebleu (tests/data/eval/README.md names the commit)
with sacrebleu/version.py written as `__version__ = "2.6.0"` (the release's
setuptools-scm would write it). Debian's /usr/bin/python3 with python3-regex and
python3-numpy. Output (one JSON object per line):

- bleu_vectors.jsonl: {"source", "options" (calibench's option names), "sentence",
  "hyps", "refs" (per segment, its list of references), "corpus": {score, counts,
  totals, precisions, bp, sys_len, ref_len, line}, "sentences": [{score, line}]}
  or, for sacrebleu's tests that call BLEU.compute_bleu on statistics,
  {"source", "options", "stats", "corpus": {...}};
- chrf_vectors.jsonl: {"source", "metric" (chrf or chrf++), "options", "sentence",
  "hyps", "refs", "corpus": {score, stats (the summed [hyp, ref, match] per order),
  line}, "sentences": [{score, line}]};
- ter_vectors.jsonl: as chrF's, "stats" the summed [edits, average reference length];
- bootstrap_vectors.jsonl: numpy's draws ({"kind": "raw64" | "choice" | "bool", "seed",
  "n", "draws"}: PCG64.random_raw, default_rng(seed).choice(n, size=(3, m)),
  integers(2, size=(3, 45), dtype=bool)) and {"kind": "bootstrap", "metric", "options",
  "seed" (SACREBLEU_SEED), "samples", "hyps", "refs", "baseline", "corpus": {score, mean,
  ci, line} (corpus_score with n_bootstrap), "paired_bs"/"paired_ar": {samples,
  signature, baseline, system: {score, mean, ci}, p_value} (PairedTest)};
- bleu_tokenize.jsonl: {"tok", "in", "out"}: out = " ".join(tokenizer(in).split()).

Corpora: the cases of sacrebleu's own test/test_bleu.py, test/test_sentence_bleu.py and
test/test_chrf.py, test/test_ter.py and test/test_tokenizer_ter.py,
then seeded random corpora (prose, code, CJK, Arabic, emoji, combining marks, Greek
capital sigma, Turkish dotted I, Unicode spaces, empty and very long lines, 1-4
references and a variable number of them).
"""
import argparse
import json
import os
import random
import sys

from eval_vectors_words import vary_words

SEED = 20261203


def load(sacrebleu_dir):
    sys.path.insert(0, sacrebleu_dir)
    from sacrebleu.metrics import BLEU
    from sacrebleu.metrics.bleu import _get_tokenizer
    return BLEU, _get_tokenizer


def chrf_metric(opts, metric):
    from sacrebleu.metrics import CHRF
    return CHRF(char_order=int(opts.get('char-order', 6)),
                word_order=int(opts.get('word-order', 2 if metric == 'chrf++' else 0)),
                beta=int(opts.get('beta', 2)), lowercase=bool(opts.get('lowercase')),
                whitespace=bool(opts.get('whitespace')), eps_smoothing=bool(opts.get('eps-smoothing')))


def summed_case(source, metric, m, hyps, refs, opts, sentence, stat):
    """A vector of metric m whose statistics sum over segments: corpus score, line and
    summed statistics (each through stat); sentence scores."""
    from sacrebleu.utils import sum_of_lists
    corpus = m.corpus_score(hyps, streams(refs))
    stats = sum_of_lists(m._extract_corpus_statistics(hyps, streams(refs)))
    out = {'source': source, 'metric': metric, 'options': opts, 'sentence': sentence, 'hyps': hyps,
           'refs': refs, 'corpus': {'score': corpus.score, 'stats': [stat(x) for x in stats],
                                    'line': corpus.format(width=1, signature=str(m.get_signature()))}}
    if sentence:
        out['sentences'] = []
        for h, r in zip(hyps, refs):
            sc = m.sentence_score(h, r)
            out['sentences'].append({'score': sc.score,
                                     'line': sc.format(width=1, signature=str(m.get_signature()))})
    return out


def chrf_case(source, metric, hyps, refs, opts, sentence=False):
    """A chrF vector: corpus score, line and summed statistics; sentence scores."""
    return summed_case(source, metric, chrf_metric(opts, metric), hyps, refs, opts, sentence,
                       lambda x: x)


def ter_metric(opts):
    from sacrebleu.metrics import TER
    return TER(normalized=bool(opts.get('ter-normalized')), no_punct=bool(opts.get('ter-no-punct')),
               asian_support=bool(opts.get('ter-asian-support')),
               case_sensitive=bool(opts.get('ter-case-sensitive')))


def ter_case(source, hyps, refs, opts, sentence=False):
    """A TER vector: corpus score, line and summed [edits, average reference length]."""
    return summed_case(source, 'ter', ter_metric(opts), hyps, refs, opts, sentence, float)


def shuffled_blocks(rng, words):
    """The words with a few blocks moved, some words changed: text that needs shifts."""
    w = list(words)
    for _ in range(rng.randint(0, 3)):
        if len(w) < 3:
            break
        a = rng.randrange(len(w))
        b = min(len(w), a + rng.randint(1, 12))
        block, rest = w[a:b], w[:a] + w[b:]
        t = rng.randrange(len(rest) + 1)
        w = rest[:t] + block + rest[t:]
    return [x if rng.random() > 0.1 else rng.choice(PROSE) for x in w if rng.random() > 0.05]


def ter_cases():
    """test/test_ter.py's and test/test_tokenizer_ter.py's cases, then seeded random corpora."""
    out = []
    t = 'test/test_ter.py'
    basic = [(['aaaa bbbb cccc dddd'], ['aaaa bbbb cccc dddd']), (['dddd eeee ffff'], ['aaaa bbbb cccc']),
             ([''], ['a']), (['a'], ['']), ([''], ['']), (['d e f g h a b c'], ['a b c d e f g h'])]
    for i, (h, r) in enumerate(basic):
        out.append(ter_case(f'{t} test_cases[{i}]', h, [[x] for x in r], {}))
    wmt_h = ['wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .',
             'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
             'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie Werte für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',
             'Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .',
             'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "']
    wmt_r = ['wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .',
             'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
             'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',
             'Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .',
             'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "']
    out.append(ter_case(f'{t} test_cases[6] (WMT 2019 dev)', wmt_h, [[x] for x in wmt_r], {}, sentence=True))
    t = 'test/test_tokenizer_ter.py'
    tok_cases = [({}, ["a b c d", "", "a b c d.", "A B C D."]),
                 ({'ter-no-punct': True}, ["a b c d.", "A ; B ) C : D."]),
                 ({'ter-normalized': True}, ["a b (c) d.", "Jim's car.", "4.2"]),
                 ({'ter-normalized': True, 'ter-asian-support': True}, ["美众院公布对特", "りの拳銃を持"])]
    for i, (opts, texts) in enumerate(tok_cases):
        out.append(ter_case(f'{t} case set {i} (as hypothesis and reference)', texts,
                            [[x.upper() + " x"] for x in texts], opts, sentence=True))
    # Alignments far off the diagonal, where the beam of 25 cells decides the distance.
    a = [f'a{i}' for i in range(35)]
    b = [f'b{i}' for i in range(40)]
    c = [f'c{i}' for i in range(35)]
    far = [(a + b, b + c), (b + a, a), (a[:5] + b, c + b + a), (b, a + a + b)]
    for i, (h, r) in enumerate(far):
        out.append(ter_case(f'beam: alignment far off the diagonal #{i}', [" ".join(h)], [[" ".join(r)]], {},
                            sentence=True))
    rng = random.Random(SEED + 3)
    kinds = ['prose', 'code', 'cjk', 'arabic', 'emoji', 'marks', 'case', 'mixed']
    flags = ['ter-case-sensitive', 'ter-normalized', 'ter-no-punct', 'ter-asian-support']
    idx = 0
    for kind in kinds:
        for variant in range(6):
            opts = {f: True for f in flags if rng.random() < 0.35}
            nrefs = rng.choice([1, 1, 2, 3])
            hyps, refs = [], []
            for i in range(rng.randint(1, 15)):
                base = rand_text(rng, kind).split(' ')
                if variant == 4 and i == 0:   # very different lengths: the beam widens
                    base = (base * 40)[:rng.randint(100, 160)]
                if variant == 5 and i == 0:   # many repeats: the candidate limit
                    base = [rng.choice(['a', 'b', 'c']) for _ in range(rng.randint(60, 90))]
                k = rng.randint(1, nrefs) if variant == 1 else nrefs
                refs.append([" ".join(shuffled_blocks(rng, base)) for _ in range(k)])
                h = shuffled_blocks(rng, base)
                if variant == 4 and i == 0:
                    h = h[:rng.randint(0, 3)]
                hyps.append(" ".join(h))
            out.append(ter_case(f'random seed {SEED + 3} #{idx} ({kind})', hyps, refs, opts,
                                sentence=variant in (2, 5)))
            idx += 1
    return out


def bootstrap_cases(BLEU):
    """numpy's draws as sacrebleu makes them, and sacrebleu's bootstrap intervals and
    paired tests on random corpora."""
    import numpy as np
    from sacrebleu.significance import PairedTest
    out = []
    for seed in (12345, 0, 1, 2**40 + 3):
        g = np.random.PCG64(seed)
        out.append({'kind': 'raw64', 'seed': seed, 'draws': [str(g.random_raw()) for _ in range(8)]})
        for n in (1, 2, 3, 37, 1000, 2**31 + 5):
            rng = np.random.default_rng(seed)
            out.append({'kind': 'choice', 'seed': seed, 'n': n,
                        'draws': rng.choice(n, size=(3, min(n, 50)), replace=True).ravel().tolist()})
        rng = np.random.default_rng(seed)
        out.append({'kind': 'bool', 'seed': seed,
                    'draws': [int(x) for x in rng.integers(2, size=(3, 45), dtype=bool).ravel()]})
    rng = random.Random(SEED + 4)
    metrics = {'bleu': lambda o: BLEU(**bleu_kwargs(o, False)), 'chrf': lambda o: chrf_metric(o, 'chrf'),
               'chrf++': lambda o: chrf_metric(o, 'chrf++'), 'ter': ter_metric}
    idx = 0
    for kind in ('prose', 'code', 'mixed', 'cjk'):
        for name in metrics:
            for variant in range(2):
                nseg = rng.choice([1, 2, 7, 40, 150])
                hyps, refs = random_corpus(rng, kind, nseg, rng.choice([1, 2]))
                base = [perturb(rng, h, kind) for h in hyps]
                opts = {}
                if name == 'bleu' and variant:
                    opts = {'tokenize': 'intl', 'smooth': 'add-k'}
                seed = [12345, 7][variant]
                os.environ['SACREBLEU_SEED'] = str(seed)
                n_bs = [1000, 200][variant]
                m = metrics[name](opts)
                sc = m.corpus_score(hyps, streams(refs), n_bootstrap=n_bs)
                rec = {'kind': 'bootstrap', 'source': f'random seed {SEED + 4} #{idx} ({kind})',
                       'metric': name, 'options': opts, 'seed': seed, 'samples': n_bs, 'hyps': hyps,
                       'refs': refs, 'baseline': base,
                       'corpus': {'score': sc.score, 'mean': float(sc._mean), 'ci': float(sc._ci),
                                  'line': sc.format(width=1, signature=str(m.get_signature()))}}
                for test in ('bs', 'ar'):
                    m = metrics[name](opts)
                    n_samples = [1000, 10000][test == 'ar'] if variant == 0 else [100, 500][test == 'ar']
                    pt = PairedTest([('base', base), ('sys', hyps)], {name: m}, streams(refs),
                                    test_type=test, n_samples=n_samples)
                    sigs, scores = pt()
                    key = [k for k in scores if k != 'System'][0]
                    bl, sy = scores[key]
                    rec['paired_' + test] = {
                        'samples': n_samples, 'signature': str(sigs[key]),
                        'baseline': {'score': bl.score, 'mean': None if bl.mean is None else float(bl.mean),
                                     'ci': None if bl.ci is None else float(bl.ci)},
                        'system': {'score': sy.score, 'mean': None if sy.mean is None else float(sy.mean),
                                   'ci': None if sy.ci is None else float(sy.ci)},
                        'p_value': sy.p_value}
                os.environ.pop('SACREBLEU_SEED')
                out.append(rec)
                idx += 1
    return out


def chrf_cases():
    """test/test_chrf.py's cases, then seeded random corpora."""
    out = []
    t = 'test/test_chrf.py'
    sent = [('Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.',
             'Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.'),
            ('Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.',
             'A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.'),
            ('Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.',
             'Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.')]
    for i, (h, r) in enumerate(sent):
        out.append(chrf_case(f'{t} test_sentence_level_chrf[{i}]', 'chrf', [h], [[r]],
                             {'eps-smoothing': True}, sentence=True))
    basic = [(["abcdefg"], ["hijklmnop"]), (["a"], ["b"]), ([""], ["b"]), ([""], ["ref"]),
             ([""], ["reference"]), (["aa"], ["ab"]), (["a", "b"], ["a", "c"]), (["a"], ["a"]),
             (["a b c"], ["a b c"]), (["a b c"], ["abc"]),
             ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
              ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."]),
             ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
              ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."]),
             (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"])]
    for i, (h, r) in enumerate(basic):
        out.append(chrf_case(f'{t} test_cases[{i}]', 'chrf', h, [[x] for x in r],
                             {'beta': '3', 'eps-smoothing': True}))
    eff = [(["a"], ["a"]), ([""], ["reference"]), (["a b c"], ["a b c"]), (["a b c"], ["abc"]),
           ([""], ["c"]), (["a", "b"], ["a", "c"]), (["aa"], ["ab"])]
    for i, (h, r) in enumerate(eff):
        out.append(chrf_case(f'{t} test_cases_effective_order[{i}]', 'chrf', h, [[x] for x in r], {'beta': '3'}))
    ws = basic[11:12] + basic[10:11]
    for i, (h, r) in enumerate(ws):
        out.append(chrf_case(f'{t} test_cases_keep_whitespace[{i}]', 'chrf', [h[0].strip()], [[r[0]]],
                             {'beta': '3', 'whitespace': True}))
    rng = random.Random(SEED + 2)
    kinds = ['prose', 'code', 'cjk', 'arabic', 'emoji', 'marks', 'case', 'mixed']
    idx = 0
    for kind in kinds:
        for metric in ('chrf', 'chrf++'):
            for variant in range(3):
                opts = {}
                if rng.random() < 0.3:
                    opts['lowercase'] = True
                if rng.random() < 0.25:
                    opts['eps-smoothing'] = True
                if rng.random() < 0.2:
                    opts['whitespace'] = True
                if rng.random() < 0.2:
                    opts['beta'] = str(rng.choice([0, 1, 3]))
                if rng.random() < 0.2:
                    opts['char-order'] = str(rng.choice([1, 3, 4, 8]))
                if rng.random() < 0.15:
                    opts['word-order'] = str(rng.choice([1, 3]))
                nrefs = rng.choice([1, 1, 2, 3, 4])
                hyps, refs = random_corpus(rng, kind, rng.randint(1, 25), nrefs,
                                           var_refs=variant == 1 and nrefs > 1,
                                           long_lines=1 if variant == 0 and rng.random() < 0.3 else 0,
                                           newlines=variant == 1)
                out.append(chrf_case(f'random seed {SEED + 2} #{idx} ({kind})', metric, hyps, refs, opts,
                                     sentence=variant == 2))
                idx += 1
    return out


def bleu_kwargs(opts, sentence):
    kw = {}
    if 'tokenize' in opts:
        kw['tokenize'] = opts['tokenize']
    if 'smooth' in opts:
        kw['smooth_method'] = opts['smooth']
    if 'smooth-value' in opts:
        kw['smooth_value'] = float(opts['smooth-value'])
    if 'max-ngram-order' in opts:
        kw['max_ngram_order'] = int(opts['max-ngram-order'])
    kw['lowercase'] = bool(opts.get('lowercase'))
    # sacrebleu.py: --sentence-level turns effective order on
    kw['effective_order'] = (not opts.get('no-effective-order')) if sentence else \
        bool(opts.get('effective-order'))
    return kw


def score_dict(score, sig):
    return {'score': score.score, 'counts': list(score.counts), 'totals': list(score.totals),
            'precisions': list(score.precisions), 'bp': score.bp, 'sys_len': score.sys_len,
            'ref_len': score.ref_len, 'line': score.format(width=1, signature=sig)}


def streams(refs):
    """Per-segment reference lists -> sacrebleu's streams (None where a segment has fewer)."""
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def case(BLEU, source, hyps, refs, opts, sentence=False):
    m = BLEU(**bleu_kwargs(opts, sentence))
    corpus = m.corpus_score(hyps, streams(refs))
    out = {'source': source, 'options': opts, 'sentence': sentence, 'hyps': hyps, 'refs': refs,
           'corpus': score_dict(corpus, str(m.get_signature()))}
    if sentence:
        sents = []
        for h, r in zip(hyps, refs):
            s = m.sentence_score(h, r)
            sents.append({'score': s.score, 'line': s.format(width=1, signature=str(m.get_signature()))})
        out['sentences'] = sents
    return out


def stats_case(BLEU, source, correct, total, sys_len, ref_len, opts):
    m = BLEU(**bleu_kwargs(opts, False))
    m.num_refs = 1
    s = BLEU.compute_bleu(list(correct), list(total), sys_len, ref_len,
                          smooth_method=m.smooth_method, smooth_value=m.smooth_value,
                          effective_order=m.effective_order, max_ngram_order=m.max_ngram_order)
    return {'source': source, 'options': opts, 'stats': [sys_len, ref_len] + list(correct) + list(total),
            'corpus': score_dict(s, str(m.get_signature()))}


def sacrebleu_test_cases(BLEU):
    """The cases of sacrebleu's test/test_bleu.py and test/test_sentence_bleu.py."""
    out = []
    refs = [['The dog bit the man.', 'It was not unexpected.', 'The man bit him first.'],
            ['The dog had bit the man.', 'No one was surprised.', 'The man had bitten the dog.']]
    hyps = ['The dog bit the man.', "It wasn't surprising.", 'The man had just bitten him.']
    seg_refs = [list(x) for x in zip(*refs)]
    t = 'test/test_bleu.py'
    raw = {'tokenize': 'none', 'smooth': 'floor', 'smooth-value': '0.01', 'effective-order': True}
    for i, (h, r) in enumerate([(["this is a test", "another test"], [["ref1", "ref2"]]),
                                (["this is a test"], [["this is a test"]]),
                                (["this is a fest"], [["this is a test"]])]):
        out.append(case(BLEU, f'{t} test_raw_bleu_cases[{i}]', h, [list(x) for x in zip(*r)], raw))
    for i, (h, opts) in enumerate([(hyps, {}), (['', '', ''], {}), (hyps, {'tokenize': 'none'}),
                                   (hyps, {'tokenize': '13a'}), (hyps, {'tokenize': 'intl'}),
                                   (hyps, {'smooth': 'none'})]):
        out.append(case(BLEU, f'{t} test_corpus_bleu_cases[{i}]', h, seg_refs, opts))
    for i, (h, r) in enumerate([(["test"], [["a test"]]), (["a test"], [["a test"]]),
                                (["a little test"], [["a test"]])]):
        out.append(case(BLEU, f'{t} test_case_effective_order[{i}]', h, [list(x) for x in zip(*r)], raw))
    off_h, off_r = ["am I am a character sequence"], [["I am a symbol string sequence a a"]]
    for v in ('0.01', '0.0', '0.1'):
        out.append(case(BLEU, f'{t} test_case_statistics/test_offset (smooth-value {v})', off_h,
                        [list(x) for x in zip(*off_r)], dict(raw, **{'smooth-value': v})))
    out.append(stats_case(BLEU, f'{t} test_case_scoring', [9, 7, 5, 3], [10, 8, 6, 4], 11, 11, {'smooth': 'none'}))
    for i, (c, tot, sl, rl, off) in enumerate([([0, 0, 0, 0], [4, 4, 2, 1], 0, 1, '0.0'),
                                               ([0, 0, 0, 0], [10, 11, 12, 0], 14, 10, '0.0'),
                                               ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, '0.0'),
                                               ([6, 5, 4, 0], [6, 5, 4, 3], 6, 6, '0.0'),
                                               ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, '0.1'),
                                               ([0, 0, 0, 0], [0, 0, 0, 0], 1, 5, '0.01')]):
        out.append(stats_case(BLEU, f'{t} test_case_degenerate_stats[{i}]', c, tot, sl, rl,
                              {'smooth': 'floor', 'smooth-value': off}))
    for order in range(1, 7):
        out.append(case(BLEU, f'{t} test_bleu_max_order (order {order})', hyps, seg_refs,
                        {'max-ngram-order': str(order)}))
    t = 'test/test_sentence_bleu.py'
    ref = "producţia de zahăr brut se exprimă în zahăr alb;"
    sys_ = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
    for i, (sm, sv, lc, tok) in enumerate([
            ('exp', None, False, '13a'), ('none', None, False, '13a'), ('floor', None, False, '13a'),
            ('floor', 0.1, False, '13a'), ('floor', 0.5, False, '13a'), ('add-k', None, False, '13a'),
            ('add-k', 1, False, '13a'), ('add-k', 2, False, '13a'), ('exp', None, False, 'none'),
            ('exp', None, False, 'intl'), ('exp', None, False, 'char'), ('exp', None, True, 'char')]):
        opts = {'smooth': sm, 'tokenize': tok}
        if sv is not None:
            opts['smooth-value'] = str(sv)
        if lc:
            opts['lowercase'] = True
        out.append(case(BLEU, f'{t} test_cases[{i}]', [sys_], [[ref]], opts, sentence=True))
    for i, (sm, sv) in enumerate([('exp', None), ('none', None), ('floor', None), ('floor', 0.1),
                                  ('add-k', None), ('add-k', 1)]):
        opts = {'smooth': sm}
        if sv is not None:
            opts['smooth-value'] = str(sv)
        out.append(case(BLEU, f'{t} test_cases_zero_bleu[{i}]', ["this is a cat"], [["okay thanks"]],
                        opts, sentence=True))
    return out


PROSE = ("the a of to and in is it that was for on are with as his they be at one have this from "
         "or had by word but what some we can out other were all there when up use your how said "
         "an each she which do their time if will way about many then them write would like so "
         "these her long make thing see him two has look more day could go come did number sound "
         "no most people my over know water than call first who may down side been now find "
         "The Dog It I We New York U.S. Mr. Dr. e.g. don't it's o'clock well-known state-of-the-art "
         "über naïve café résumé Straße façade coöperate").split()
CODE = ["foo(bar,", "baz);", "x=1.5;", "a.b.c", "3,000.50", "-1", "2-3", "x-y", "i++", "{", "}",
        "[0]", "&amp;", "&lt;tag&gt;", "&quot;q&quot;", "<skipped>", "a<skipped>b", "@user", "#tag",
        "$HOME", "~/path/to/file.txt", "`cmd`", "^_^", "|", "\\n", "1.", ".5", ",", ".", "...",
        "--flag", "1-", "9,", "x.", "http://example.com/a?b=c&d=e", "f(x)", "!=", "==", "<=", "->"]
CJK = list("我们今天去北京大学看看你好世界中文分词测试这是一个句子吗。，、！？：；（）「」『』《》")
CJK += ['\u2000', '\u2001', '\u2010', '\u20ac', '\u2a6d', '\u2a6e', '\u2f80', '\u2f81', '\u2fa1',
        '\u2fa2', '\u3400', '\u4db5', '\u4db6', '\u9fbb', '\u9fbc', '\uff01', '\uff21', '\uffef',
        '\u2600', '\u27bf', '\u3000', '\u3001', '\u3042', '\u30a2', '\ufe10', '\ufe30', '\U00020000',
        '\U0002a6d6', '\U0002f800', 'ｶ', '１２３']
ARABIC = "مرحبا بالعالم هذا اختبار للنص العربي ، ؟ ! ١٢٣ ٤٫٥ كتاب الطالب".split()
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧", "🇩🇪", "❤️", "✈", "☃", "€5", "£", "©", "™", "±", "→", "∑", "√2",
         "°C", "½", "²", "Ⅻ", "𝟘", "⁉"]
MARKS = ["e\u0301", "a\u0308\u0304", "n\u0303", "\u0915\u094d\u0937", "\u0e01\u0e34",
         "\u05e9\u05c1", "o\u0332", "\u200d", "\u200b", "\ufeff", "\u00ad"]
CASES = ["ΣΟΦΙΑ", "ΟΔΟΣ", "ΦΙΛΟΣΟΦΟΣ", "ΑΣΑ", "ΑΣ'Α", "Σ", "ΑΣ.", "Α'Σ", "ΣΑ", "İstanbul", "İ", "ǅ", "ß", "ẞ", "ΐ", "Ω",
         "K", "Å", "ﬃ", "ᾼ", "Ⓐ", "𐐀", "ΑΣ\u0301", "Α\u00adΣ"]
SPACES = [" ", "  ", "\t", "\u00a0", "\u3000", "\u2003", "\u202f", "\u205f", "\x1c", "\x1f",
          "\x85", "\u2028", "\u1680", "\x0b", "\x0c", "\u200b"]


def rand_text(rng, kind, long=False):
    pools = {'prose': PROSE, 'code': CODE + PROSE[:30], 'cjk': CJK, 'arabic': ARABIC,
             'emoji': EMOJI + PROSE[:20], 'marks': MARKS + PROSE[:20], 'case': CASES + PROSE[:20],
             'mixed': PROSE + CODE + CJK + ARABIC + EMOJI + MARKS + CASES}
    pool = pools[kind]
    n = rng.randint(2000, 6000) if long else rng.choice([0, 1, 2, 3, 5, 8, 13, 20, 30])
    out = []
    for i in range(n):
        if i:
            out.append(rng.choice(SPACES) if rng.random() < 0.1 else ("" if kind == 'cjk' and rng.random() < 0.5 else " "))
        out.append(rng.choice(pool))
    s = "".join(out)
    if rng.random() < 0.1:
        s = rng.choice(SPACES) + s
    if rng.random() < 0.15:
        s = s + rng.choice(SPACES)
    return s


def perturb(rng, text, kind):
    """A reference-like variant: words dropped, swapped, replaced."""
    def replace():
        return rand_text(rng, kind).split(' ')[0] if kind != 'cjk' else rng.choice(CJK)

    return " ".join(vary_words(rng, text, replace, 0.05, lambda: rng.choice(PROSE)))


def random_corpus(rng, kind, nseg, nrefs, var_refs=False, long_lines=0, newlines=False):
    hyps, refs = [], []
    for i in range(nseg):
        base = rand_text(rng, kind, long=i < long_lines)
        k = rng.randint(1, nrefs) if var_refs else nrefs
        r = [perturb(rng, base, kind) for _ in range(k)]
        h = perturb(rng, base, kind)
        if newlines and rng.random() < 0.3:
            h = h.replace(' ', rng.choice(['\n', '-\n', ' \n ']), 1)
        hyps.append(h)
        refs.append(r)
    return hyps, refs


def random_cases(BLEU):
    rng = random.Random(SEED)
    out = []
    kinds = ['prose', 'code', 'cjk', 'arabic', 'emoji', 'marks', 'case', 'mixed']
    toks = ['13a', 'intl', 'zh', 'char', 'none']
    smooths = [{}, {'smooth': 'floor'}, {'smooth': 'floor', 'smooth-value': '0.25'},
               {'smooth': 'add-k'}, {'smooth': 'add-k', 'smooth-value': '0.5'}, {'smooth': 'none'}]
    idx = 0
    for kind in kinds:
        for tok in toks:
            for variant in range(3):
                opts = {'tokenize': tok}
                opts.update(rng.choice(smooths))
                if rng.random() < 0.3:
                    opts['lowercase'] = True
                if rng.random() < 0.2:
                    opts['max-ngram-order'] = str(rng.choice([1, 2, 3, 5, 6]))
                sentence = variant == 2
                if not sentence and rng.random() < 0.2:
                    opts['effective-order'] = True
                if sentence and rng.random() < 0.2:
                    opts['no-effective-order'] = True
                nrefs = rng.choice([1, 1, 2, 3, 4])
                hyps, refs = random_corpus(rng, kind, rng.randint(1, 25), nrefs,
                                           var_refs=variant == 1 and nrefs > 1,
                                           long_lines=1 if variant == 0 and rng.random() < 0.3 else 0,
                                           newlines=variant == 1)
                out.append(case(BLEU, f'random seed {SEED} #{idx} ({kind}, {tok})', hyps, refs, opts, sentence))
                idx += 1
    return out


def tokenize_cases(get_tok):
    rng = random.Random(SEED + 1)
    out = []
    fixed = ["", " ", "a.b", "a. b", "1.5", "1,000", "x1.", ".5", "a,", "1-2", "a-b", "3-", "-3",
             "&amp;lt;", "<skipped>x", "a-\nb", "a\nb", "Mr. Smith's \"quote\" (paren) [br] {c} 10%",
             "2024. End", "word.", "\u00a0x\u3000y\x1c", "ΑΣ ΣΑ", "İ", "\U0001f600!", "e\u0301.",
             "١٢٣،٤", "中文，测试。", "\u2001\u2a6d\u2a6e", "\u2f80\u2f81\u2fa1\u2fa2", "a\u2028b"]
    fixed += ["a" + c + "b" for c in "\u2000\u2001\u2a6d\u2a6e\u2f80\u2f81\u2fa1\u2fa2\u4db5\u4db6\u9fbb\u9fbc\ufa2d\ufa2e\ufa6a\ufa6b\ufad9\ufada"]
    kinds = ['prose', 'code', 'cjk', 'arabic', 'emoji', 'marks', 'case', 'mixed']
    texts = fixed + [rand_text(rng, rng.choice(kinds)) for _ in range(400)]
    # Characters from the whole code space, several per line, for the Unicode classes.
    for _ in range(300):
        cps = [rng.randrange(0x20, 0x30000) for _ in range(12)]
        texts.append("".join(chr(c) if not 0xD800 <= c < 0xE000 else 'x' for c in cps))
    for name in ['13a', 'intl', 'zh', 'char', 'none']:
        tok = get_tok(name)()
        for t in texts:
            out.append({'tok': name, 'in': t, 'out': " ".join(tok(t).split())})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sacrebleu', required=True)
    ap.add_argument('--out', default='tests/data/eval')
    a = ap.parse_args()
    BLEU, get_tok = load(os.path.abspath(a.sacrebleu))
    with open(os.path.join(a.out, 'bleu_vectors.jsonl'), 'w', encoding='utf-8') as f:
        for c in sacrebleu_test_cases(BLEU) + random_cases(BLEU):
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'chrf_vectors.jsonl'), 'w', encoding='utf-8') as f:
        for c in chrf_cases():
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'ter_vectors.jsonl'), 'w', encoding='utf-8') as f:
        for c in ter_cases():
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'bootstrap_vectors.jsonl'), 'w', encoding='utf-8') as f:
        for c in bootstrap_cases(BLEU):
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'bleu_tokenize.jsonl'), 'w', encoding='utf-8') as f:
        for c in tokenize_cases(get_tok):
            f.write(json.dumps(c, ensure_ascii=False) + '\n')


main()
