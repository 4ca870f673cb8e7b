#!/usr/bin/python3
"""Seeded Zipf request-trace generator for lite cache-sim benchmarks and tests.

Draws N requests over K keys with P(rank k) proportional to 1/k^alpha (bounded Zipf, alpha = 1.0 by
default, which numpy's zipf() cannot do), maps ranks to key ids with a seeded permutation, gives each
key one fixed log-normal size (median ~4 KiB), and writes libCacheSim's oracleGeneral format
(packed little-endian <IQIq: time, id, size, next-access index, 1-based, -1 for none), or csv/txt.

  scripts/gen_zipf_trace.py --requests 10000000 --keys 1000000 --out /tmp/zipf.oracleGeneral.bin

The same arguments always produce the same bytes. Write large traces under build/ or /tmp, never
into the repository.
"""
import argparse
import pathlib
import sys

import numpy as np


def generate(requests, keys, alpha, seed):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.power(np.arange(1, keys + 1, dtype=np.float64), alpha)
    cdf = np.cumsum(weights)
    ranks = np.searchsorted(cdf, rng.random(requests) * cdf[-1], side="right")
    ranks = np.minimum(ranks, keys - 1)
    ids = rng.permutation(keys).astype(np.uint64) + 1  # rank -> key id in 1..keys
    obj = ids[ranks]
    sizes_per_key = np.clip(rng.lognormal(mean=np.log(4096), sigma=1.0, size=keys), 64, 1 << 20).astype(np.uint32)
    size = sizes_per_key[ids[ranks].astype(np.int64) - 1]
    return obj, size


def next_access(obj):
    n = obj.shape[0]
    order = np.lexsort((np.arange(n), obj))  # by id, then by position
    nxt = np.full(n, -1, dtype=np.int64)
    same = obj[order[:-1]] == obj[order[1:]]
    nxt[order[:-1][same]] = order[1:][same] + 1  # 1-based index of the next request
    return nxt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--format", choices=["oracleGeneral", "csv", "txt"], default="oracleGeneral")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.requests < 1 or a.keys < 1:
        sys.exit("gen_zipf_trace: --requests and --keys must be >= 1")
    obj, size = generate(a.requests, a.keys, a.alpha, a.seed)
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    if a.format == "oracleGeneral":
        rec = np.empty(a.requests, dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")]))
        rec["t"] = (np.arange(a.requests) // 1000).astype(np.uint32)
        rec["id"] = obj
        rec["size"] = size
        rec["next"] = next_access(obj)
        rec.tofile(tmp)
    elif a.format == "csv":
        with open(tmp, "w") as f:
            f.write("time,key,size\n")
            for i in range(a.requests):
                f.write(f"{i // 1000},{obj[i]},{size[i]}\n")
    else:
        np.savetxt(tmp, obj, fmt="%d")
    tmp.replace(out)
    print(f"gen_zipf_trace: wrote {a.requests:,} requests over {a.keys:,} keys (alpha {a.alpha}, seed {a.seed}) "
          f"to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
