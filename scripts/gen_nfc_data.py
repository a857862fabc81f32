#!/usr/bin/env python3
"""Generate src/tok/nfc_data.c, the Unicode tables behind nfc.c (NFC, NFD, NFKC, NFKD
and the combining marks that StripAccents drops), from the Unicode Character Database
files of Debian's unicode-data package.

    /usr/bin/python3 scripts/gen_nfc_data.py [--ucd /usr/share/unicode] [--max-age 9.0] \
        > src/tok/nfc_data.c

--max-age keeps only the characters assigned in that Unicode version or earlier; later
ones are treated as unassigned (combining class 0, no decomposition), as an
implementation of that version does. Normalization of assigned characters never
changes between versions (Unicode's stability policy), so the tables equal that
version's (compatibility mappings and the General_Category of marks, too). Why 9.0: nfc.c serves tokenizer.json's NFC normalizer, and Hugging Face
tokenizers (the reference, npm tokenizers 0.23.2) normalizes as Unicode 9.0: it reorders
every combining mark assigned up to 9.0 and none assigned from 10.0 on
(tests/data/tok/corpus_nfc_versions.txt holds one line for each such mark).
"""
import argparse
import os

MAX = 0x110000
# General categories that changed between 9.0 and the UCD here, into or out of M: the
# 9.0 one (StripAccents drops 9.0's marks: measured with npm tokenizers 0.23.2 over
# every code point, exactly the UCD's M of characters assigned by 9.0 but these).
CATEGORY_9_0 = {0x111C9: 'Po', 0x1CF2: 'Mc', 0x1CF3: 'Mc'}
SBASE, SCOUNT = 0xAC00, 11172


def version_key(v):
    return tuple(int(x) for x in v.split('.'))


def code_points(field):
    """'0041..005A' or '00C0' -> range."""
    a, _, b = field.partition('..')
    return range(int(a, 16), int(b or a, 16) + 1)


def ucd_lines(path):
    """Data fields of a UCD file, comments and blank lines dropped."""
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                yield [x.strip() for x in line.split(';')]


def assigned_by(ucd, max_age):
    """The code points assigned in Unicode max_age ('9.0') or earlier (DerivedAge.txt)."""
    out = set()
    for cps, age in ucd_lines(os.path.join(ucd, 'DerivedAge.txt')):
        if version_key(age) <= version_key(max_age):
            out.update(code_points(cps))
    return out


def ucd_version(ucd):
    """The UCD's own version ('15.0.0'), from its ReadMe.txt."""
    with open(os.path.join(ucd, 'ReadMe.txt'), encoding='utf-8') as f:
        return next((w for line in f for w in line.split() if w[:1].isdigit()
                     and w.count('.') == 2), 'unknown')


def ranges(value_of):
    """[(start, end, value)] for runs of equal non-zero value."""
    out, start, cur = [], None, 0
    for cp in range(MAX + 1):
        v = value_of(cp) if cp < MAX else 0
        if v != cur:
            if cur:
                out.append((start, cp - 1, cur))
            start, cur = cp, v
    return out


def shared_sequences(seqs):
    """(flat, offsets): the sequences in one list, each at flat[offsets[i]:][:len], a
    sequence that already stands in flat (anywhere, also across two earlier ones) not
    added again."""
    flat, where, offsets = [], {}, []
    longest = max(len(q) for q in seqs)
    for q in seqs:
        at = where.get(tuple(q))
        if at is None:
            at = len(flat)
            flat.extend(q)
            for i in range(max(0, at - longest), len(flat)):  # the slices it adds
                for j in range(i + 1, min(i + longest, len(flat)) + 1):
                    where.setdefault(tuple(flat[i:j]), i)
        offsets.append(at)
    return flat, offsets


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--ucd', default='/usr/share/unicode')
    ap.add_argument('--max-age', default='9.0')
    ap.add_argument('--corpus', action='store_true',
                    help='write the test corpus of tests/data/tok/corpus_nfc.txt instead')
    args = ap.parse_args()
    assigned = assigned_by(args.ucd, args.max_age)

    ccc, decomp, compat, marks = {}, {}, {}, set()
    for f in ucd_lines(os.path.join(args.ucd, 'UnicodeData.txt')):
        cp = int(f[0], 16)
        if cp not in assigned:
            continue
        if int(f[3]):
            ccc[cp] = int(f[3])
        if CATEGORY_9_0.get(cp, f[2]) in ('Mn', 'Mc', 'Me'):
            marks.add(cp)
        d = f[5]
        if d and not d.startswith('<') and not SBASE <= cp < SBASE + SCOUNT:
            decomp[cp] = [int(x, 16) for x in d.split()]
        elif d.startswith('<'):  # '<font> 0041': a compatibility mapping, one level
            compat[cp] = [int(x, 16) for x in d.split('>', 1)[1].split()]

    excluded = set()  # Full_Composition_Exclusion: never recomposed
    for f in ucd_lines(os.path.join(args.ucd, 'DerivedNormalizationProps.txt')):
        if f[1] == 'Full_Composition_Exclusion':
            excluded.update(cp for cp in code_points(f[0]) if cp in assigned)

    comp = {(d[0], d[1]): cp for cp, d in decomp.items() if len(d) == 2 and cp not in excluded}
    seconds = {b for (_, b) in comp}
    seconds.update(range(0x1161, 0x1176))  # Hangul V
    seconds.update(range(0x11A8, 0x11C3))  # Hangul T

    def unsafe(cp):
        """Can NFC change text holding cp: a combining mark, a character NFC replaces
        (NFC_QC=No), or the second of a composition (NFC_QC=Maybe)."""
        return 1 if cp in ccc or cp in excluded or cp in seconds else 0

    version = ucd_version(args.ucd)
    if args.corpus:
        return write_corpus(args.ucd)
    w = print
    w('/*\n * nfc_data.c - Unicode %s normalization tables for nfc.c, generated by\n'
      ' * scripts/gen_nfc_data.py --max-age %s from the Unicode %s UCD (Debian unicode-data).\n'
      ' * Do not edit.\n */' % (args.max_age, args.max_age, version))
    w('#include "nfc_data.h"\n')
    w('const cb__cp_range cb__nfc_ccc[] = {')
    for a, b, v in ranges(lambda cp: ccc.get(cp, 0)):
        w('    {0x%X, 0x%X, %d},' % (a, b, v))
    w('};\nconst size_t cb__nfc_ccc_len = sizeof cb__nfc_ccc / sizeof cb__nfc_ccc[0];\n')
    # the two yes/no properties in one table (most combining marks have both): 1 unsafe,
    # 2 a mark (CB__NFC_UNSAFE, CB__NFC_MARK in nfc_data.h)
    w('const cb__cp_range cb__nfc_flags[] = {')
    for a, b, v in ranges(lambda cp: unsafe(cp) | (2 if cp in marks else 0)):
        w('    {0x%X, 0x%X, %d},' % (a, b, v))
    w('};\nconst size_t cb__nfc_flags_len = sizeof cb__nfc_flags / sizeof cb__nfc_flags[0];\n')
    w('const cb__nfc_decomp cb__nfc_decomps[] = {')
    for cp in sorted(decomp):
        d = decomp[cp] + [0]
        w('    {0x%X, 0x%X, 0x%X},' % (cp, d[0], d[1]))
    w('};\nconst size_t cb__nfc_decomps_len = sizeof cb__nfc_decomps / sizeof cb__nfc_decomps[0];\n')
    w('const cb__nfc_comp cb__nfc_comps[] = {')
    for (a, b) in sorted(comp):
        w('    {0x%X, 0x%X, 0x%X},' % (a, b, comp[(a, b)]))
    w('};\nconst size_t cb__nfc_comps_len = sizeof cb__nfc_comps / sizeof cb__nfc_comps[0];\n')
    # compatibility mappings: each character's code points in one array, where a mapping
    # already standing in it (e.g. the mathematical alphabets' letters) points there
    w('const uint32_t cb__nfc_compat_cps[] = {')
    flat, offsets = shared_sequences([compat[cp] for cp in sorted(compat)])
    offsets = dict(zip(sorted(compat), offsets))
    for i in range(0, len(flat), 8):
        w('    %s,' % ', '.join('0x%X' % x for x in flat[i:i + 8]))
    w('};\nconst cb__nfc_compat cb__nfc_compats[] = {')
    for cp in sorted(compat):
        w('    {0x%X, %d, %d},' % (cp, offsets[cp], len(compat[cp])))
    w('};\nconst size_t cb__nfc_compats_len = sizeof cb__nfc_compats / sizeof cb__nfc_compats[0];')


def write_corpus(ucd):
    """Text that NFC changes differently in each Unicode version: every combining mark
    of the UCD (of any age) but those of class 230 (U+0301's own), before and after
    U+0301, so that canonical ordering moves it or not, and every character with a canonical decomposition, 16 to a line."""
    marks, decomposables = [], []
    for f in ucd_lines(os.path.join(ucd, 'UnicodeData.txt')):
        cp = int(f[0], 16)
        if int(f[3]) and int(f[3]) != 230:
            marks.append(cp)
        if f[5] and not f[5].startswith('<'):
            decomposables.append(cp)
    for cp in marks:
        print('x\u0301%c x%c\u0301' % (cp, cp))
    for i in range(0, len(decomposables), 16):
        print(' '.join(chr(cp) for cp in decomposables[i:i + 16]))


if __name__ == '__main__':
    main()
