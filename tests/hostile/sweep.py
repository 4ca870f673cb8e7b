#!/usr/bin/python3
"""Issue 38's hostile sweep: every item's cases across every verb, with held / total per item.

tests/cli/test_hostile.py holds one CLI test per cause, run by ctest. This sweep multiplies each cause over the verbs,
flags, formats and values it can reach, so the count says how much of the surface holds, not that one example does:

  1. a model's own lite.json declaring shapes, dtypes and counts lite cannot use, under every verb that loads a model;
  2. containers (.npz, gzip idx, .npy) that inflate past, or declare far more than, what they hold, under every data
     flag;
  3. character and block devices wherever lite reads a file (traces in every format, data, configs, recipes, models);
  4. numbers beyond what a flag takes, for every numeric flag of every verb (read from --help, so new flags are
     swept too); thread variables lite refuses; signals in the middle of timing, calibration and a recipe step; a
     load run that announces its length;
  5. prefix-trace lines, token files and decoders of every wrong shape.

What holds (tests/hostile/sweep_runner.py): the documented exit code; for exit 2 one error line in the documented
form naming the file or flag, nothing on stdout; nothing written; peak RSS under the case's bound (800 MiB unless
stated); an end within its time, and within 2 s of a signal.

  /usr/bin/python3 tests/hostile/sweep.py [--items 1,2] [--jobs 2] [--keep DIR] [--list]

Exit 0 when every case held, 1 otherwise (the failures listed). About 3-5 minutes on 2 cores.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import fixtures  # noqa: E402
from sweep_runner import LITE, Case, run_case  # noqa: E402

DEVICES = ["/dev/urandom", "/dev/zero", "/dev/null", "/dev/full", "/dev/loop0"]
BEYOND = ["18446744073709551616", "-99999999999999999999", "1e999", "nan"]
THREAD_VALUES = ["abc", "-3", "100000", "99999999999999999999", "1.5"]
PREFIX_ONLY = {"--block-tokens", "--kv-bytes-per-token", "--prefill-ms-per-token", "--instances", "--target-ttft-p99"}


def verb_bases(F):
    """A valid command per verb, so the case's one hostile part is the only thing wrong with it."""
    m = f"{F}/fmnist_cnn.pt"
    return {
        "profile": ["profile", m, "--iterations", "2", "--warmup", "1"],
        "prune": ["prune", m, "--ratio", "0.3", "-o", "{W}/out.pt", "--iterations", "2", "--warmup", "1"],
        "quantize": ["quantize", m, "--mode", "dynamic", "-o", "{W}/out.pt", "--iterations", "2", "--warmup", "1"],
        "distill": ["distill", "--teacher", m, "--student", f"{F}/student.pt", "--data", f"{F}/fmnist_eval.pt",
                    "--epochs", "1", "--samples", "64", "-o", "{W}/d.pt"],
        "optimize": ["optimize", m, "--target-p99", "1000", "--modes", "float,dynamic", "-o", "{W}/out.pt",
                     "--work-dir", "{W}/work"],
        "cache-sim": ["cache-sim", f"{F}/inference_requests.csv", "--sizes", "10"],
    }


def item1(F):
    cases = []
    for name, (_, codes) in fixtures.LITE_JSON.items():
        model = f"{F}/meta_{name}.pt"
        needles = (f"meta_{name}.pt",)
        for verb, argv in verb_bases(F).items():
            if verb == "cache-sim":
                continue
            argv = [model if a == f"{F}/fmnist_cnn.pt" else a for a in argv]
            # distill reads its inputs from --data and never the declared ones: running is right there too
            cases.append(Case(1, f"{verb} on a model whose lite.json has {name}", argv,
                              (0, *codes) if verb == "distill" else codes, needles))
        student = verb_bases(F)["distill"]
        student = [model if a == f"{F}/student.pt" else a for a in student]
        cases.append(Case(1, f"distill with a student whose lite.json has {name}", student, (0, *codes), needles))
    for name, (_, codes) in fixtures.LITE_JSON_TEXT.items():
        argv = [f"{F}/meta_{name}.pt" if a == f"{F}/fmnist_cnn.pt" else a for a in verb_bases(F)["profile"]]
        cases.append(Case(1, f"profile on a model whose lite.json is {name}", argv, codes, (f"meta_{name}.pt",)))
    return cases


def data_flags(F):
    """Every flag that reads a data file: (name, argv builder from data path and optional labels path)."""
    m, s, e = f"{F}/fmnist_cnn.pt", f"{F}/student.pt", f"{F}/fmnist_eval.pt"
    lab = lambda flag, labels: [flag, labels] if labels else []  # noqa: E731
    return {
        "profile --eval": lambda d, l: ["profile", m, "--eval", d, *lab("--labels", l), "--iterations", "2"],
        "prune --eval": lambda d, l: ["prune", m, "--ratio", "0.3", "--eval", d, *lab("--labels", l), "-o",
                                      "{W}/o.pt"],
        "prune --data (taylor)": lambda d, l: ["prune", m, "--ratio", "0.3", "--criterion", "taylor", "--data", d,
                                               "-o", "{W}/o.pt"],
        "quantize --eval": lambda d, l: ["quantize", m, "--mode", "dynamic", "--eval", d, *lab("--labels", l), "-o",
                                         "{W}/o.pt"],
        "quantize --calib": lambda d, l: ["quantize", m, "--mode", "static", "--calib", d, "-o", "{W}/o.pt"],
        "distill --data": lambda d, l: ["distill", "--teacher", m, "--student", s, "--data", d,
                                        *lab("--data-labels", l), "-o", "{W}/d.pt"],
        "distill --eval": lambda d, l: ["distill", "--teacher", m, "--student", s, "--data", e, "--eval", d,
                                        *lab("--eval-labels", l), "-o", "{W}/d.pt"],
        "optimize --eval": lambda d, l: ["optimize", m, "--target-p99", "1000", "--eval", d, *lab("--labels", l),
                                         "--modes", "float", "-o", "{W}/o.pt", "--work-dir", "{W}/work"],
    }


def item2(F):
    bombs = {"bomb_payload.npz": None, "bomb_lying.npz": None, "bomb_shape.npz": None, "bomb_shape.npy": None,
             "bomb_payload-images.idx3-ubyte.gz": f"{F}/labels16.idx1-ubyte",
             "bomb_header-images.idx3-ubyte.gz": f"{F}/labels16.idx1-ubyte"}
    cases = []
    for bomb, labels in bombs.items():
        for flag, build in data_flags(F).items():
            cases.append(Case(2, f"{flag} {bomb}", build(f"{F}/{bomb}", labels), (2,), (bomb,), timeout_s=90))
    dec = f"{F}/decoder.pt"
    cases.append(Case(2, "profile a decoder --prompts bomb_tokens.npz",
                      ["profile", dec, "--prompts", f"{F}/bomb_tokens.npz", "--generate", "2", "--iterations", "1"],
                      (2,), ("bomb_tokens.npz",)))
    cases.append(Case(2, "quantize a decoder --eval bomb_tokens.npz",
                      ["quantize", dec, "--mode", "dynamic", "--eval", f"{F}/bomb_tokens.npz", "-o", "{W}/q.pt"],
                      (2,), ("bomb_tokens.npz",)))
    return cases


def item3(F):
    cases = []
    m, dec = f"{F}/fmnist_cnn.pt", f"{F}/decoder.pt"
    for dev in DEVICES:
        for fmt in (None, "csv", "txt", "oracleGeneral", "vscsi", "mooncake", "tokens"):
            for skip in (False, True):
                argv = ["cache-sim", dev, "--sizes", "10", *(["--format", fmt] if fmt else []),
                        *(["--skip-bad-lines"] if skip else [])]
                cases.append(Case(3, f"cache-sim {dev} as a {fmt or 'detected'} trace{' skipping' * skip}", argv,
                                  (2,), (dev,), timeout_s=30, max_rss_mib=300))
        for flag, build in data_flags(F).items():
            cases.append(Case(3, f"{flag} {dev}", build(dev, None), (2,), (dev,), timeout_s=30))
        others = {
            "profile --input-file": ["profile", m, "--input-file", dev],
            "profile a decoder --prompts": ["profile", dec, "--prompts", dev, "--generate", "2"],
            "cache-sim --miss-latency-from": ["cache-sim", f"{F}/inference_requests.csv", "--miss-latency-from", dev],
            "cache-sim --prefill-cost-from": ["cache-sim", f"{F}/prefix_ok.jsonl", "--prefill-cost-from", dev],
            "optimize --trace": ["optimize", m, "--target-p99", "1000", "--trace", dev, "--hit-latency", "0.05",
                                 "-o", "{W}/o.pt",
                                 "--work-dir", "{W}/work"],
            "profile MODEL": ["profile", dev],
            "quantize MODEL": ["quantize", dev, "--mode", "dynamic", "-o", "{W}/o.pt"],
            "run RECIPE": ["run", dev],
            "profile --config": ["profile", m, "--config", dev],
            "cache-sim --config": ["cache-sim", f"{F}/inference_requests.csv", "--config", dev],
        }
        for name, argv in others.items():
            cases.append(Case(3, f"{name} {dev}", argv, (2,), (dev,), timeout_s=30))
    return cases


def numeric_flags(verb):
    """The flags `lite VERB --help` shows taking an INT, UINT or FLOAT (or X) value."""
    text = subprocess.run([LITE, verb, "--help"], capture_output=True, text=True, env=dict(os.environ, COLUMNS="200"))
    return re.findall(r"^\s+(?:-\w,)?(--[\w-]+) (?:INT|UINT|FLOAT|X)\b", text.stdout, re.M)


def item4_values(F):
    cases = []
    for verb, base in verb_bases(F).items():
        for flag in numeric_flags(verb):
            argv = list(base)
            if verb == "cache-sim" and flag in PREFIX_ONLY:
                argv[1] = f"{F}/prefix_ok.jsonl"
            for value in BEYOND:
                # distill's --lr is bounded at 1e30 only: a rate that diverges is the finite-loss gate's to stop
                # (test_distill drives that gate with --lr 1e30), so 2^64 as a float may run
                codes = (0, 1, 2) if flag == "--lr" and value == BEYOND[0] else (2,)
                cases.append(Case(4, f"{verb} {flag} {value}", [*argv, flag, value], codes, (flag,), timeout_s=60))
    return cases


def item4_environment(F):
    cases = []
    for verb in ("profile", "prune", "quantize", "distill"):
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            for value in THREAD_VALUES:
                cases.append(Case(4, f"{verb} with {var}={value}", verb_bases(F)[verb], (2,), (var,),
                                  env={var: value}, timeout_s=60))
    return cases


def item4_signals(F):
    m = f"{F}/fmnist_cnn.pt"
    timed = {
        "prune": ["prune", m, "--ratio", "0.3", "-o", "{W}/o.pt", "--duration", "20"],
        "quantize": ["quantize", m, "--mode", "dynamic", "-o", "{W}/o.pt", "--duration", "20"],
        "profile": ["profile", m, "--duration", "20"],
        "run (a quantize step)": ["run", f"{F}/recipe_ok.json", "--work-dir", "{W}/work"],
    }
    cases = []
    for name, argv in timed.items():
        for signum, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
            cases.append(Case(4, f"{name}: {signal.Signals(signum).name} while measuring", argv, (code,),
                              signum=signum, signal_on=b"measuring", signal_after_s=0.05, may_leave=("work",)))
    cases.append(Case(4, "optimize: SIGTERM while measuring", ["optimize", m, "--target-p99", "1000", "--modes",
                                                                 "float,dynamic", "-o",
                                                                 "{W}/o.pt", "--work-dir", "{W}/work"], (143,),
                      signum=signal.SIGTERM, signal_on=b"optimize: ", signal_after_s=1.0, may_leave=("work",)))
    cases.append(Case(4, "distill: SIGINT while training", ["distill", "--teacher", m, "--student", f"{F}/student.pt",
                                                            "--data", f"{F}/fmnist_eval.pt", "--epochs", "50", "-o",
                                                            "{W}/d.pt"], (130,), signum=signal.SIGINT,
                      signal_after_s=6.0))
    cases.append(Case(4, "profile a decoder: SIGTERM while generating",
                      ["profile", f"{F}/decoder.pt", "--generate", "64", "--duration", "20"], (143,),
                      signum=signal.SIGTERM, signal_on=b"timed generations", signal_after_s=0.5))
    announced = b"until the last arrival"  # then the drawn length: "15 min" or so for 3 requests at 0.001 req/s
    for qps in ("0.001", "0.002"):
        cases.append(Case(4, f"profile --qps {qps} --requests 3 says how long first", ["profile", m, "--qps", qps,
                                                                                       "--requests", "3"], (130,),
                          signum=signal.SIGINT, signal_on=announced, terminal_needle=announced, timeout_s=60))
    return cases


def requests_seen(n):
    def check(stdout):
        got = json.loads(stdout)["result"]["trace"]["requests"]
        return None if got == n else f"{got} requests read, expected {n}"
    return check


def said_preallocated(stdout):
    kv = json.loads(stdout)["result"]["decoder"]["kv_cache"]
    return None if kv.get("preallocated") is True else f"the report does not say the cache is preallocated: {kv}"


def item5(F, prefix_variants):
    cases = []
    for v in prefix_variants:
        trace = f"prefix_{v}.jsonl"
        cases.append(Case(5, f"cache-sim prefix trace line 3: {v}", ["cache-sim", f"{F}/{trace}", "--sizes", "10"],
                          (2,), (f"{trace}:3",), max_rss_mib=300))
        cases.append(Case(5, f"cache-sim prefix trace line 3: {v}, skipped", ["cache-sim", f"{F}/{trace}", "--sizes",
                                                                              "10", "--skip-bad-lines", "--json"],
                          (0,), max_rss_mib=300, check=requests_seen(2)))
    for name in ("empty", "utf16"):
        cases.append(Case(5, f"cache-sim prefix trace: {name}", ["cache-sim", f"{F}/prefix_{name}.jsonl", "--format",
                                                                  "mooncake", "--sizes", "10"], (2,),
                          (f"prefix_{name}.jsonl",), max_rss_mib=300))
    dec = f"{F}/decoder.pt"
    for tok in ("tok_float.npy", "tok_3d.npy", "tok_empty.npy", "tok_negative.npy", "tok_vocab.npy",
                "tok_past_positions.npy", "tok_float.pt", "tok_strings.pt", "tok_dict.pt", "tok_text.txt",
                "tok_huge_header.npy"):
        # a context past the model's positions is the model's limit: the line names the model and the count
        needles = ("decoder.pt", "128 positions") if tok == "tok_past_positions.npy" else (tok,)
        cases.append(Case(5, f"profile a decoder --prompts {tok}", ["profile", dec, "--prompts", f"{F}/{tok}",
                                                                      "--generate", "2", "--iterations", "1"],
                          (2,), needles))
    for flag, value in (("--prompt-tokens", "100000"), ("--generate", "100000"), ("--prompt-tokens", "0"),
                        ("--generate", "-1")):
        needles = ("decoder.pt", "128 positions", value) if value == "100000" else (flag,)
        cases.append(Case(5, f"profile a decoder {flag} {value}", ["profile", dec, flag, value, "--iterations", "1"],
                          (2,), needles))
        cases.append(Case(5, f"quantize a decoder {flag} {value}", ["quantize", dec, "--mode", "dynamic", flag, value,
                                                                      "-o", "{W}/q.pt"], (2,), needles))
    for model in ("kv_mismatched.pt", "kv_not_growing.pt"):
        for verb, extra in (("profile", ["--iterations", "1"]), ("quantize", ["--mode", "dynamic", "-o", "{W}/q.pt"]),
                            ("prune", ["--ratio", "0.3", "-o", "{W}/p.pt"])):
            # a cache that does not grow is a preallocated buffer: profile measures it and says so (docs/llm.md)
            preallocated = model == "kv_not_growing.pt" and verb == "profile"
            cases.append(Case(5, f"{verb} a decoder whose cache is {model}", [verb, f"{F}/{model}", "--prompt-tokens",
                                                                               "8", "--generate", "4", *extra,
                                                                               *(["--json"] if preallocated else [])],
                              (0,) if preallocated else (2,), (model,),
                              check=said_preallocated if preallocated else None))
    return cases


def all_cases(F, prefix_variants):
    return (item1(F) + item2(F) + item3(F) + item4_values(F) + item4_environment(F) + item4_signals(F)
            + item5(F, prefix_variants))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", default="1,2,3,4,5")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="build the fixtures here and keep them (reused when present)")
    ap.add_argument("--match", default="", help="only cases whose name contains this")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    root = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp(prefix="lite-hostile-"))
    F = root / "fixtures"
    marker = F / ".built"
    if not marker.exists():
        print(f"building fixtures in {F} ...", flush=True)
        variants = fixtures.build(F)
        (F / "prefix_ok.jsonl").write_text(json.dumps({"timestamp": 0, "input_length": 1024, "output_length": 4,
                                                       "hash_ids": [1, 2]}) + "\n")
        (F / "student.pt").write_bytes((F / "fmnist_cnn.pt").read_bytes())
        marker.write_text("\n".join(variants))
    variants = marker.read_text().split("\n")
    items = {int(i) for i in a.items.split(",")}
    cases = [c for c in all_cases(F, variants) if c.item in items and a.match in c.name]
    if a.list:
        for c in cases:
            print(c.item, c.name)
        return 0
    return run_all(cases, root, F, a.jobs)


def run_all(cases, root, F, jobs):
    fixtures_before = {p: p.stat().st_mtime_ns for p in F.iterdir()}
    print(f"{len(cases)} cases, {jobs} at a time; lite: {LITE}", flush=True)
    start = time.monotonic()
    outcomes = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = []
        for i, case in enumerate(cases):
            work = root / f"case{i:04d}"
            shutil.rmtree(work, ignore_errors=True)  # fresh each run: a kept optimize work folder would resume
            work.mkdir()
            futures.append(pool.submit(run_case, case, work))
        for f in futures:
            o = f.result()
            outcomes.append(o)
            if o.problems:
                print(f"  NOT HELD [{o.case.item}] {o.case.name}: {'; '.join(o.problems)}", flush=True)
    if {p: p.stat().st_mtime_ns for p in F.iterdir()} != fixtures_before:
        print("a fixture was changed by a case", flush=True)
    report(outcomes, time.monotonic() - start)
    return 0 if all(not o.problems for o in outcomes) else 1


def report(outcomes, seconds):
    held, total = collections.Counter(), collections.Counter()
    for o in outcomes:
        total[o.case.item] += 1
        held[o.case.item] += not o.problems
    print("\n| item | held | total |\n| --- | ---: | ---: |")
    for item in sorted(total):
        print(f"| {item} | {held[item]} | {total[item]} |")
    print(f"| all | {sum(held.values())} | {sum(total.values())} |")
    worst = max(outcomes, key=lambda o: o.rss_mib)
    print(f"{seconds:.0f} s; largest peak RSS {worst.rss_mib:.0f} MiB ({worst.case.name}); "
          f"longest case {max(o.seconds for o in outcomes):.1f} s")


if __name__ == "__main__":
    sys.exit(main())
