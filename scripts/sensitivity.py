#!/usr/bin/env python3
"""Reads scripts/bench-sensitivity.sh's table: per tensor, the KL divergence per unit of each
metric's error, and the best mix the measured KL divergences allow.

    scripts/sensitivity.py SENS.tsv [REFERENCE.gguf ...]

For each tensor: KLD / weighted error (`absolute`), KLD / (elements x relative error^2)
(`relative`), KLD / relative error^2, the geometric mean over q3_k and q4_k. A metric that
predicts the KL divergence gives the same number for every tensor.

For each REFERENCE (a llama-quantize file of the same model, read with gguf-inspect from
GGUF_INSPECT or target/release): its types' summed single-tensor KLD, and the oracle, the mix
of the measured types with the least summed KLD in the same tensor bytes (exact dynamic
programme, 32-byte steps).
"""
import math
import os
import subprocess
import sys
from collections import defaultdict

BYTES_PER_ELEMENT = {"q2_k": 84 / 256, "q3_k": 110 / 256, "q4_k": 144 / 256, "iq4_xs": 136 / 256,
                     "q5_k": 176 / 256, "q6_k": 210 / 256, "q8_0": 34 / 32}


def load(path):
    kld, err, elements = defaultdict(dict), defaultdict(dict), {}
    for line in open(path):
        name, ty, k, rest = line.rstrip("\n").split("\t")
        _, sq, rel, we, wrel, n = rest.split()
        weighted = we not in ("null", "None", "")
        kld[name][ty] = float(k)
        err[name][ty] = (float(we) if weighted else float(sq),
                         float(wrel) if weighted else float(rel))
        elements[name] = int(n)
    return kld, err, elements


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def oracle(kld, elements, types, limit):
    unit = 32
    best = {0: (0.0, ())}
    for name in kld:
        nxt = {}
        for used, (k, picks) in best.items():
            for t in types:
                u = used + -(-round(elements[name] * BYTES_PER_ELEMENT[t]) // unit)
                if u * unit > limit:
                    continue
                cand = (k + kld[name][t], picks + (t,))
                if u not in nxt or cand[0] < nxt[u][0]:
                    nxt[u] = cand
        best, low = {}, float("inf")
        for u, v in sorted(nxt.items()):
            if v[0] < low:
                best[u], low = v, v[0]
    k, picks = min(best.values())
    return k, dict(zip(kld, picks))


def main():
    kld, err, elements = load(sys.argv[1])
    print("| tensor | KLD/absolute | KLD/relative | KLD/rel^2 |")
    print("|---|---:|---:|---:|")
    for name in kld:
        fit = lambda f: geomean([kld[name][t] / f(t) for t in ("q3_k", "q4_k") if t in kld[name]])
        print("| %s | %.3g | %.3g | %.3g |" % (
            name, fit(lambda t: err[name][t][0]),
            fit(lambda t: elements[name] * err[name][t][1] ** 2),
            fit(lambda t: err[name][t][1] ** 2)))
    types = [t for t in BYTES_PER_ELEMENT if all(t in kld[n] for n in kld)]
    inspect = os.environ.get("GGUF_INSPECT", os.path.join(
        os.path.dirname(__file__), "..", "target", "release", "gguf-inspect"))
    for ref in sys.argv[2:]:
        dump = subprocess.run([inspect, "dump", ref], capture_output=True, text=True,
                              check=True).stdout
        mix = {}
        for line in dump.splitlines():
            f = line.split()
            if len(f) > 3 and f[0].isdigit() and f[1] in kld:
                mix[f[1]] = f[2].lower()
        if any(t not in kld[n] for n, t in mix.items()):
            print(f"{ref}: a type of its mix was not measured")
            continue
        limit = sum(round(elements[n] * BYTES_PER_ELEMENT[t]) for n, t in mix.items())
        k_ref = sum(kld[n][t] for n, t in mix.items())
        k_opt, picks = oracle(kld, elements, types, limit)
        print(f"{os.path.basename(ref)}: summed single-tensor KLD {k_ref:.6f}; oracle "
              f"{k_opt:.6f} ({k_opt / k_ref:.3f}x) in {limit} tensor bytes: "
              + " ".join(f"{n.removesuffix('.weight')}={t}" for n, t in picks.items()))


if __name__ == "__main__":
    main()
