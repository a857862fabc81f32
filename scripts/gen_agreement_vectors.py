#!/usr/bin/python3
"""Reference vectors for calibench's agreement statistics (src/stats/agreement.c).

Run with Debian's interpreter, which has python3-scipy and python3-sklearn:

    /usr/bin/python3 scripts/gen_agreement_vectors.py > tests/data/stats/agreement/vectors.jsonl

One JSON object per line: "name", "x", "y", and the references' values
"pearson" (scipy.stats.pearsonr), "spearman" (scipy.stats.spearmanr), "kendall_tau_b"
(scipy.stats.kendalltau, variant b) and, for discrete data, "kappa", "kappa_linear",
"kappa_quadratic" (sklearn.metrics.cohen_kappa_score with weights None, "linear",
"quadratic"). nan is written as null. The first line names the versions.
"""
import json
import math
import warnings

import numpy as np
import scipy
import scipy.stats
import sklearn
from sklearn.metrics import cohen_kappa_score

warnings.simplefilter("ignore")  # constant inputs warn; their nan is the point
SEED = 20261203


def num(v):
    v = float(v)
    return None if math.isnan(v) else v


def case(name, x, y, discrete):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    out = {"name": name, "x": x, "y": y}
    out["pearson"] = num(scipy.stats.pearsonr(x, y)[0]) if len(x) >= 2 else None
    out["spearman"] = num(scipy.stats.spearmanr(x, y)[0])
    out["kendall_tau_b"] = num(scipy.stats.kendalltau(x, y)[0])
    if discrete:
        for key, w in (("kappa", None), ("kappa_linear", "linear"),
                       ("kappa_quadratic", "quadratic")):
            out[key] = num(cohen_kappa_score(x, y, weights=w))
    return out


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    for i, n in enumerate((5, 17, 50, 200)):
        x = rng.normal(size=n)
        y = 0.6 * x + rng.normal(size=n)
        cases.append(case(f"continuous-{i}-n{n}", x, y, False))
    for i, (n, k) in enumerate(((8, 3), (30, 5), (60, 5), (120, 10), (400, 10))):
        x = rng.integers(1, k + 1, size=n)
        noise = rng.integers(-1, 2, size=n)
        y = np.clip(x + noise, 1, k)
        cases.append(case(f"scores-{i}-n{n}-scale{k}", x, y, True))
    for i, n in enumerate((10, 40)):
        x = rng.integers(1, 6, size=n)
        y = rng.integers(1, 6, size=n)
        cases.append(case(f"independent-{i}-n{n}", x, y, True))
    x = rng.integers(0, 3, size=25)
    # sklearn refuses non-integral labels ("continuous is not supported"): no kappa
    cases.append(case("scores-with-ties-as-halves", x / 2, (x + rng.integers(0, 2, 25)) / 2, False))
    cases.append(case("perfect", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], True))
    cases.append(case("reversed", [1, 2, 3, 4, 5], [5, 4, 3, 2, 1], True))
    cases.append(case("n2", [1, 3], [2, 7], True))
    cases.append(case("n2-tied-y", [1, 3], [2, 2], True))
    cases.append(case("n3", [3, 1, 2], [1, 2, 3], True))
    cases.append(case("constant-x", [4, 4, 4, 4], [1, 2, 3, 4], True))
    cases.append(case("constant-both-equal", [2, 2, 2], [2, 2, 2], True))
    cases.append(case("constant-both-different", [2, 2, 2], [3, 3, 3], True))
    cases.append(case("disjoint-labels", [1, 1, 2, 2], [3, 4, 3, 4], True))
    cases.append(case("binary", [0, 1, 1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 1, 1, 1, 1], True))
    print(json.dumps({"generator": "scripts/gen_agreement_vectors.py", "seed": SEED,
                      "python": "/usr/bin/python3", "numpy": np.__version__,
                      "scipy": scipy.__version__, "sklearn": sklearn.__version__}))
    for c in cases:
        print(json.dumps(c))


if __name__ == "__main__":
    main()
