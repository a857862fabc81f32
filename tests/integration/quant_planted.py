# planted KLD of the simulator's lm section under int4 weights (docs/probe.md, "lm"):
# E over z ~ scale*N(0, I_V), e ~ N(0, I_V) of KL(softmax z || softmax(z + noise*e))
# = log sum_v p_v exp(noise*e_v) - noise * sum_v p_v e_v; and P(argmax z == argmax(z+noise*e)).
import math, random, sys
V, scale, noise, n = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(12345)
kl = same = 0.0
for _ in range(n):
    z = [scale * rng.gauss(0, 1) for _ in range(V)]
    e = [rng.gauss(0, 1) for _ in range(V)]
    m = max(z); w = [math.exp(x - m) for x in z]; s = sum(w); p = [x / s for x in w]
    kl += math.log(sum(pv * math.exp(noise * ev) for pv, ev in zip(p, e))) - noise * sum(pv * ev for pv, ev in zip(p, e))
    q = [a + noise * b for a, b in zip(z, e)]
    same += max(range(V), key=z.__getitem__) == max(range(V), key=q.__getitem__)
print(f"{kl / n:.6f} {same / n:.6f}")
