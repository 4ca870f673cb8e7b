#!/usr/bin/python3
"""Writes data/inference_requests.csv, the demo trace for `lite cache-sim` (seeded, pure Python).

The scenario: an inference-result cache in front of a model. Each row is one request:
  time      seconds since the start (Poisson arrivals, ~20 requests/s)
  key       the input's id (same input, same answer: cacheable)
  size      bytes of the cached result (fixed per input, log-normal, median ~3 KiB)
  cost_ms   the model's latency for this request on a miss (per-input base, log-normal, median ~35 ms,
            times +-10% jitter)
Popularity is Zipf(0.9) over the inputs, plus short bursts where a recent input is asked again
(retries, pagination), which is where recency-based policies earn their keep.

  scripts/gen_demo_trace.py              # writes data/inference_requests.csv
  scripts/gen_demo_trace.py --out x.csv --requests 1000 --seed 7
"""
import argparse
import bisect
import math
import pathlib
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = pathlib.Path(__file__).resolve().parents[1]
    ap.add_argument("--out", default=str(root / "data" / "inference_requests.csv"))
    ap.add_argument("--requests", type=int, default=15000)
    ap.add_argument("--inputs", type=int, default=1500)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=2024)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    ids = [f"in-{rng.getrandbits(40):010x}" for _ in range(a.inputs)]
    size = [max(256, min(65536, int(rng.lognormvariate(math.log(3072), 0.8)))) for _ in range(a.inputs)]
    base_ms = [rng.lognormvariate(math.log(35.0), 0.35) for _ in range(a.inputs)]
    cum, total = [], 0.0
    for r in range(a.inputs):
        total += 1.0 / (r + 1) ** a.alpha
        cum.append(total)

    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t = 0.0
    recent = []
    lines = ["time,key,size,cost_ms"]
    for _ in range(a.requests):
        t += rng.expovariate(20.0)
        if recent and rng.random() < 0.15:
            k = rng.choice(recent[-30:])
        else:
            k = min(bisect.bisect_left(cum, rng.random() * total), a.inputs - 1)
        recent.append(k)
        cost = base_ms[k] * rng.uniform(0.9, 1.1)
        lines.append(f"{t:.3f},{ids[k]},{size[k]},{cost:.2f}")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(out)
    print(f"gen_demo_trace: wrote {a.requests:,} requests over {a.inputs:,} inputs to {out}")


if __name__ == "__main__":
    main()
