"""eval_words.py - the word-list datasets of the eval integration tests (test_eval_*.sh),
imported by their python heredocs (PYTHONPATH=$SRC/tests/integration): item i's
reference is n words of one list, a wrong answer as many words of another, so answers
differ in quality and not in length."""
import json

WORDS = "river stone cloud lamp window garden bread chair music paper engine forest".split()
OTHER = "seven blue quickly under never orange tiny loud warm empty square north".split()


def reference(i, n):
    return " ".join(WORDS[(i * 7 + k * 5) % len(WORDS)] for k in range(n))


def wrong(i, n):
    return " ".join(OTHER[(i + k) % len(OTHER)] for k in range(n))


def put(f, obj):
    """One JSONL line."""
    f.write(json.dumps(obj) + "\n")


def write_items(path, count):
    """A jsonl: dataset of `count` items, each asking for the eight words of its line
    (max_tokens 64); returns their [(prompt, reference)]."""
    items = [(f"Item {i}: say the eight words of line {i}.", reference(i, 8)) for i in range(count)]
    with open(path, "w") as ds:
        for i, (prompt, ref) in enumerate(items):
            put(ds, {"id": f"i{i}", "prompt": prompt, "reference": ref, "max_tokens": 64})
    return items
