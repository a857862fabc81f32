"""What gen_eval_vectors_rouge.py and gen_eval_vectors_sacrebleu.py share: a variant of
a text near it, word by word, for seeded random corpora."""


def vary_words(rng, text, replace, insert_p, insert):
    """The words of text (split on ' '), each dropped with probability 0.15, else
    replaced by replace() with probability 0.15 and followed by insert() with
    probability insert_p; the draws in that order, from rng and the two callables."""
    out = []
    for w in text.split(' '):
        r = rng.random()
        if r < 0.15:
            continue
        if r < 0.3:
            w = replace()
        out.append(w)
        if rng.random() < insert_p:
            out.append(insert())
    return out
