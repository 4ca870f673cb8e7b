"""lite cache-sim's prefix mode end to end (docs/cache-sim.md "Prefix KV cache"): Mooncake's real conversation
trace against what its paper reports, a token-id trace whose answers are worked out by hand, capacities in blocks,
tokens and KV bytes with the KV-format what-if, the TTFT model with queueing, targets and exit codes, and every
bad-input path (exit 2, one line naming the file, line and field or the flag, nothing written)."""
import json
import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET

from litetest import DATA, LITE, SHARED, LiteTestCase, lite_json_result, run_lite, run_lite_json

MOONCAKE = SHARED / "data" / "llm-traces" / "conversation_trace.jsonl"
ENGINE_TOLERANCE = 0.01  # token hit ratio an engine may lose to the ideal model at 50M tokens (Engines)


def mooncake_line(t, n_in, ids, n_out=1):
    return json.dumps({"timestamp": t, "input_length": n_in, "output_length": n_out, "hash_ids": ids})


class PrefixTestCase(LiteTestCase):
    def require_mooncake(self):
        if not MOONCAKE.is_file():
            self.skipTest(f"the shared Mooncake trace is not at {MOONCAKE} (../shared is absent on this machine)")
        return MOONCAKE

    def write(self, name, lines):
        path = self.tmp / name
        path.write_text("".join(l + "\n" for l in lines))
        return path

    def chat(self):
        """8 conversations of 4 turns, each turn adding one 512-token block to its conversation's chain: 80 prompt
        blocks, 48 of them seen before; 32 distinct blocks."""
        lines, t = [], 0
        for turn in range(1, 5):
            for conv in range(8):
                lines.append(mooncake_line(t, 512 * turn, [100 * conv + i for i in range(turn)]))
                t += 1
        return self.write("chat.jsonl", lines)


class MooncakeTrace(PrefixTestCase):
    def test_recognised_by_content_with_the_papers_shape(self):
        trace = self.require_mooncake()
        doc = run_lite_json("cache-sim", trace, "--sizes", "3Mtok,50Mtok", "--mrc")["result"]
        self.assertEqual(doc["mode"], "prefix")
        self.assertEqual(doc["trace"]["format"], "mooncake")
        self.assertEqual(doc["trace"]["requests"], 12031)
        self.assertEqual(doc["trace"]["prompt_tokens"], 144793823)
        self.assertEqual(doc["trace"]["distinct_blocks"], 182790)
        self.assertAlmostEqual(doc["unbounded"]["mean_request_hit_ratio"], 0.409, delta=0.005)  # Table 2: ~40%
        unbounded = doc["unbounded"]["token_hit_ratio"]
        rows = {(r["policy"], r["capacity_tokens"]): r for r in doc["records"]}
        self.assertEqual({p for p, _ in rows}, {"lru", "radix-lru"})  # the prefix mode's default policies
        small, large = rows[("lru", 5859 * 512)], rows[("lru", 97656 * 512)]
        self.assertLess(small["token_hit_ratio"], unbounded / 2)  # Figure 9: under half at 3M tokens
        self.assertGreater(large["token_hit_ratio"], 0.95 * unbounded)  # nearly all of it at 50M
        for r in doc["records"]:
            for key in ("capacity_blocks", "capacity_tokens", "requests", "prompt_tokens", "hit_tokens", "hit_blocks",
                        "orphan_blocks"):
                self.assertIn(key, r)
            self.assertEqual(r["orphan_blocks"], 0)  # tail-first LRU and radix-lru never orphan
        # the one-pass curve equals the replays at their capacities
        curve = dict(zip(doc["curve"]["capacity_blocks"], doc["curve"]["hit_tokens"]))
        for r in doc["records"]:
            if r["policy"] == "lru":
                self.assertEqual(curve[r["capacity_blocks"]], r["hit_tokens"])

    def test_zstd_and_stdin_read_the_same(self):
        trace = self.require_mooncake()
        if not shutil.which("zstd"):
            self.skipTest("zstd is not installed")
        packed = self.tmp / "conv.jsonl.zst"
        subprocess.run(["zstd", "-q", "-o", str(packed), str(trace)], check=True)
        args = ("--sizes", "1000,10000", "--policy", "radix-lru")
        plain = run_lite_json("cache-sim", trace, *args)["result"]["records"]
        self.assertEqual(run_lite_json("cache-sim", packed, *args)["result"]["records"][0]["hit_tokens"],
                         plain[0]["hit_tokens"])
        piped = run_lite_json("cache-sim", "-", "--format", "mooncake", *args,
                              stdin=trace.read_text())["result"]["records"]
        self.assertEqual([r["hit_tokens"] for r in piped], [r["hit_tokens"] for r in plain])

    def test_kv_formats_and_ttft(self):
        trace = self.require_mooncake()
        doc = run_lite_json("cache-sim", trace, "--policy", "radix-lru", "--sizes", "256GiB,1TiB",
                            "--kv-layout", "layers=80,kv-heads=8,head-dim=128,dtype=fp16", "--kv-dtype", "fp16,int4",
                            "--prefill-cost", "a=20,b=0.05,c=1e-6", "--instances", "8")["result"]
        self.assertEqual([f["bytes_per_token"] for f in doc["kv_formats"]], [327680, 81920])
        by = {(r["kv_dtype"], r["capacity_bytes"] // 2**30): r for r in doc["records"]}
        for size in (255, 1023):  # whole blocks under 256 GiB and 1 TiB
            fp16 = next(r for (d, b), r in by.items() if d == "fp16" and abs(b - size) <= 1)
            int4 = next(r for (d, b), r in by.items() if d == "int4" and abs(b - size) <= 1)
            self.assertAlmostEqual(int4["capacity_blocks"], 4 * fp16["capacity_blocks"], delta=3)  # whole blocks
            self.assertGreater(int4["token_hit_ratio"], fp16["token_hit_ratio"])  # the lighter KV holds more
            self.assertLess(int4["ttft_mean_ms"], fp16["ttft_mean_ms"])
            self.assertLessEqual(int4["ttft_p50_ms"], int4["ttft_p99_ms"])
        queued = run_lite_json("cache-sim", trace, "--policy", "lru", "--sizes", "10Mtok", "--prefill-ms-per-token",
                               "0.05", "--instances", "2")["result"]["records"][0]
        alone = run_lite_json("cache-sim", trace, "--policy", "lru", "--sizes", "10Mtok", "--prefill-ms-per-token",
                              "0.05")["result"]["records"][0]
        self.assertGreater(queued["ttft_p99_ms"], alone["ttft_p99_ms"])  # two instances cannot keep up: waits


class TokenIdTrace(PrefixTestCase):
    def test_chained_blocks_by_hand(self):
        system = list(range(100, 116))  # a 16-token system prompt: one block of 16
        lines = [json.dumps({"timestamp": 0, "tokens": system + [1, 2, 3]}),
                 json.dumps({"timestamp": 5, "prompt_token_ids": system + [7, 8]}),
                 json.dumps({"timestamp": 9, "tokens": system + [1, 2, 3, 4], "output_length": 3}),
                 json.dumps({"timestamp": 9, "tokens": [5] + system})]  # same tokens, another prefix: no hit
        trace = self.write("chat.jsonl", lines)
        doc = run_lite_json("cache-sim", trace, "--sizes", "100", "--policy", "all")["result"]
        self.assertEqual(doc["trace"]["format"], "tokens")
        self.assertEqual(doc["trace"]["block_tokens"], 16)
        for r in doc["records"]:
            self.assertEqual(r["hit_tokens"], 16 + 16, r["policy"])  # the system block, twice
            self.assertEqual(r["prompt_tokens"], 19 + 18 + 20 + 17)
        # a block of 4 tokens: the third request reuses 16 + 3 tokens of the first (its partial last block differs)
        doc = run_lite_json("cache-sim", trace, "--sizes", "100", "--block-tokens", "4")["result"]
        self.assertEqual(doc["records"][0]["hit_tokens"], 16 + 16)


class Targets(PrefixTestCase):
    def test_target_met_and_missed(self):
        trace = self.require_mooncake()
        code, doc, err = lite_json_result("cache-sim", trace, "--sizes", "1Mtok,10Mtok,100Mtok",
                                          "--target-hit-ratio", "0.3")
        self.assertEqual(code, 0, err)
        rec = doc["result"]["recommendation"]
        self.assertTrue(rec["met"])
        self.assertEqual(rec["record"]["capacity_tokens"], 195312 * 512)  # 10M tokens reach 0.29 only
        code, doc, err = lite_json_result("cache-sim", trace, "--sizes", "1Mtok", "--target-hit-ratio", "0.9")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["result"]["gates"]["failed"], ["target"])
        r = run_lite("cache-sim", trace, "--sizes", "1Mtok", "--prefill-ms-per-token", "0.05",
                     "--target-ttft-p99", "1e9")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("smallest capacity reaching TTFT p99", r.stdout)


class BadInput(PrefixTestCase):
    def test_bad_lines_name_the_line_and_field(self):
        good = mooncake_line(0, 1024, [1, 2])
        cases = [
            ([good, json.dumps({"timestamp": 1, "input_length": 5})], ["bad.jsonl:2", "output_length", "missing"]),
            ([good, mooncake_line(1, "many", [1])], ["bad.jsonl:2", "input_length", "whole number"]),
            ([good, mooncake_line(1, -5, [])], ["bad.jsonl:2", "-5 is negative"]),
            ([good, mooncake_line(1, 1025, [1, 2])], ["bad.jsonl:2", "hash_ids", "needs 3"]),
            ([good, mooncake_line(-1, 512, [1])], ["bad.jsonl:2", "timestamp"]),
            ([mooncake_line(5, 512, [1]), mooncake_line(3, 512, [1])], ["bad.jsonl:2", "earlier than the line before"]),
            ([good, mooncake_line(1, 1024, [3, 2])], ["bad.jsonl:2", "whole prefix"]),
            ([good, "{\"timestamp\": 1, \"hash_ids\": [1"], ["bad.jsonl:2", "hash_ids", "not a list"]),
            ([good, "{\"timestamp\": 1} {}"], ["bad.jsonl:2", "not one JSON object"]),
        ]
        for lines, needles in cases:
            with self.subTest(needles=needles):
                trace = self.write("bad.jsonl", lines)
                self.assert_rejected("cache-sim", trace, needles=needles)
                trace.unlink()

    def test_skip_bad_lines_counts_them(self):
        trace = self.write("some_bad.jsonl", [mooncake_line(0, 1024, [1, 2]), "{\"oops\": 1}",
                                               mooncake_line(1, 1024, [1, 2])])
        doc = run_lite_json("cache-sim", trace, "--format", "mooncake", "--skip-bad-lines", "--sizes", "10")["result"]
        self.assertEqual(doc["trace"]["bad_lines_skipped"], 1)
        self.assertEqual(doc["trace"]["requests"], 2)
        self.assertEqual(doc["records"][0]["hit_tokens"], 1024)

    def test_options_of_the_other_mode_are_refused(self):
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        for flag, value in (("--bytes", None), ("--nodes", "2"), ("--hit-latency", "1"), ("--sample-rate", "0.5")):
            with self.subTest(flag=flag):
                self.assert_rejected("cache-sim", trace, flag, *([value] if value else []),
                                     needles=[flag, "object traces"])
        for flag, value in (("--block-tokens", "16"), ("--kv-layout", "layers=1,kv-heads=1,head-dim=1"),
                            ("--instances", "2"), ("--prefill-ms-per-token", "1")):
            with self.subTest(flag=flag):
                self.assert_rejected("cache-sim", DATA / "inference_requests.csv", flag, value,
                                     needles=[flag, "prefix"])

    def test_prefix_options_checked_before_work(self):
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        cases = [
            (["--sizes", "64GiB"], ["--sizes", "64GiB", "--kv-layout"]),
            (["--kv-dtype", "fp8"], ["--kv-dtype", "--kv-layout"]),
            (["--kv-layout", "layers=80", "--sizes", "1GiB"], ["--kv-layout", "kv-heads"]),
            (["--kv-bytes-per-token", "1000", "--kv-dtype", "fp16,int3", "--sizes", "1GiB"], ["int3"]),
            (["--kv-bytes-per-token", "1000", "--kv-dtype", "fp16,fp8", "--sizes", "100"], ["--kv-dtype", "bytes"]),
            (["--sizes", "100tok"], ["--sizes", "100tok", "one block"]),
            (["--policy", "radix-lur"], ["radix-lru"]),
            (["--policy", "s3fifo"], ["s3fifo", "prefix"]),
            (["--instances", "4"], ["--instances", "--prefill"]),
            (["--target-ttft-p99", "100"], ["--target-ttft-p99", "--prefill"]),
            (["--prefill-cost", "a=1,e=2"], ["--prefill-cost", "e=2"]),
            (["--prefill-cost", "b=0.01,d=-1"], ["--prefill", "-1"]),
            (["--prefill-ms-per-token", "-1"], ["--prefill"]),
        ]
        for args, needles in cases:
            with self.subTest(args=args):
                self.assert_rejected("cache-sim", trace, *args, needles=needles)

    def test_json_lines_that_are_no_prefix_trace(self):
        other = self.write("other.jsonl", ["{\"a\": 1}"])
        self.assert_rejected("cache-sim", other, needles=["other.jsonl", "JSON lines"])
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        self.assert_rejected("cache-sim", "-", stdin=trace.read_text(), needles=["--format mooncake"])


def comparable(doc):
    """A prefix study's --json result without what a re-run changes: timing, threads, the --results-dir count and
    note, the rows' seconds."""
    r = json.loads(json.dumps(doc["result"]))
    for key in ("read_seconds", "simulate_seconds", "threads", "reused_records", "options"):
        r.pop(key, None)
    recommended = r.get("recommendation") or {}
    for row in r["records"] + ([recommended["record"]] if recommended.get("record") else []):
        row.pop("seconds")
    r["notes"] = [n for n in r["notes"] if not n.startswith("--results-dir")]
    return r


class ResultsDir(PrefixTestCase):
    """--results-dir: each job's row kept as one file, reused by a re-run with the same trace and options."""

    def small_chat(self, name="small.jsonl"):
        """8 conversations of 4 turns behind a shared system block, 4 tokens a block (prompts of 4k tokens, so
        5-token blocks read the same hash_ids)."""
        lines, t = [], 0
        for turn in range(1, 5):
            for conv in range(8):
                lines.append(mooncake_line(t, 4 * turn, [900] + [100 * conv + i for i in range(1, turn)], n_out=3))
                t += 7
        return self.write(name, lines)

    def study(self, trace, results, *args):
        return run_lite_json("cache-sim", trace, "--block-tokens", "4", "--results-dir", results, *args)

    def test_rerun_reuses_every_row_and_says_so(self):
        trace, results = self.small_chat(), self.tmp / "results"
        args = ("--policy", "lru,radix-lru,radix-reference", "--sizes", "2,4,8", "--prefill-ms-per-token", "0.01",
                "--mrc", "--target-hit-ratio", "0.3")
        first = self.study(trace, results, *args)
        self.assertEqual(first["result"]["reused_records"], 0)
        self.assertEqual(len(list(results.glob("record-*.json"))), 9)
        again = self.study(trace, results, *args)
        self.assertEqual(again["result"]["reused_records"], 9)
        self.assertEqual(comparable(again), comparable(first))
        self.assertIn(f"--results-dir {results}: 9 records reused, 0 replayed and written there",
                      again["result"]["notes"])
        # more sizes: the rows already there are reused, the new ones replayed
        more = self.study(trace, results, *args[:3], "2,4,8,16", *args[4:])
        self.assertEqual(more["result"]["reused_records"], 9)
        self.assertEqual(len(more["result"]["records"]), 12)
        text = run_lite("cache-sim", trace, "--block-tokens", "4", "--results-dir", results, *args, "-q")
        self.assertIn(text.returncode, (0, 1), text.stderr)
        self.assertIn("9 records reused", text.stdout)

    def test_a_changed_option_reuses_nothing(self):
        trace, results = self.small_chat(), self.tmp / "results"
        table = self.tmp / "prefill.csv"
        table.write_text("new_tokens,cached_tokens,ms\n4,0,1\n8,0,2\n16,4,4.5\n")
        base = {"--block-tokens": "4", "--policy": "lru,radix-lru", "--sizes": "2,8", "--prefill-ms-per-token": "0.01"}

        def run(trace, changes):
            """The base study with options changed (flag_name=value; None drops it, "" gives it alone)."""
            options = dict(base, **{"--" + k.replace("_", "-"): v for k, v in changes.items()})
            args = [a for flag, v in options.items() if v is not None for a in ([flag] if v == "" else [flag, v])]
            return run_lite_json("cache-sim", trace, "--results-dir", results, *args)["result"]

        def study(trace=trace, **changes):
            return run(trace, changes)["reused_records"]

        self.assertEqual(study(), 0)
        fp16 = "layers=1,kv-heads=1,head-dim=64,dtype=fp16"  # 256 bytes a token
        variations = {
            "--block-tokens": dict(block_tokens="5"),
            "--skip-bad-lines": dict(skip_bad_lines=""),
            "--prefill-ms-per-token": dict(prefill_ms_per_token="0.02"),
            "--prefill-cost": dict(prefill_ms_per_token=None, prefill_cost="a=1,b=0.01"),
            "--prefill-cost-from": dict(prefill_ms_per_token=None, prefill_cost_from=table),
            "--instances": dict(instances="2"),
            "--kv-bytes-per-token": dict(kv_bytes_per_token="256"),
            "--kv-layout": dict(kv_layout="layers=1,kv-heads=1,head-dim=128,dtype=int8"),  # 256 bytes in int8
            "--kv-dtype": dict(kv_layout=fp16, kv_dtype="int8", sizes="1KiB,4KiB"),  # 2 and 8 blocks of 512 bytes
            "--tiers": dict(sizes=None, tiers="hbm=2,dram=8"),
            "--route": dict(instances="2", route="round-robin"),
            "--engine": dict(policy=None, engine="vllm"),
        }
        for name, changes in variations.items():
            with self.subTest(option=name):
                self.assertEqual(study(**changes), 0)
                again = run(trace, changes)
                self.assertEqual(again["reused_records"], len(again["records"]))
        self.assertEqual(study(policy=None, engine="vllm:decode-ms=5"), 0)
        # a changed table fits other coefficients: its rows are the new fit's
        table.write_text("new_tokens,cached_tokens,ms\n4,0,1\n8,0,2.5\n16,4,6\n")
        self.assertEqual(study(prefill_ms_per_token=None, prefill_cost_from=table), 0)
        other = self.small_chat("other.jsonl")
        other.write_text(other.read_text().replace("[900]", "[901]", 1))
        self.assertEqual(study(trace=other), 0)
        self.assertEqual(study(), 4)

    def test_a_damaged_row_is_replayed_and_rewritten(self):
        trace, results = self.small_chat(), self.tmp / "results"
        args = ("--policy", "lru,radix-lru", "--sizes", "2,8")
        first = self.study(trace, results, *args)
        files = sorted(results.glob("record-*.json"))
        self.assertEqual(len(files), 4)
        files[0].write_text(files[0].read_text()[:40])  # cut short
        stored = json.loads(files[1].read_text())
        stored["record"]["hit_tokens"] += 1
        stored["key"]["capacity_blocks"] += 1  # another job's key: not trusted for this one
        files[1].write_text(json.dumps(stored))
        again = self.study(trace, results, *args)
        self.assertEqual(again["result"]["reused_records"], 2)
        self.assertEqual(comparable(again), comparable(first))
        self.assertEqual(self.study(trace, results, *args)["result"]["reused_records"], 4)

    def test_a_results_dir_that_is_an_input_a_file_or_a_stream_is_refused(self):
        trace = self.small_chat()
        a_file = self.write("a_file", ["x"])
        plot = self.tmp / "p.svg"
        for results, needles in [(trace, ["--results-dir", "input TRACE"]),
                                 (a_file, ["--results-dir", "a file"]),
                                 (trace / "under", ["--results-dir", "not a folder"]),
                                 (plot, ["--results-dir", "--plot"])]:
            with self.subTest(results=results.name):
                self.assert_rejected("cache-sim", trace, "--block-tokens", "4", "--plot", plot, "--results-dir",
                                     results, needles=needles)
        self.assert_rejected("cache-sim", "-", "--format", "mooncake", "--block-tokens", "4", "--results-dir",
                             self.tmp / "r", stdin=trace.read_text(), needles=["--results-dir", "stream"])
        bad = self.write("bad.jsonl", [mooncake_line(0, 1024, [1, 2]), "{\"oops\": 1}"])
        self.assert_rejected("cache-sim", bad, "--results-dir", self.tmp / "r", needles=["bad.jsonl:2"])
        self.assertFalse((self.tmp / "r").exists())


class Tiers(PrefixTestCase):
    def tiered(self, bandwidth):
        # r1 repeats r0's two blocks; hbm holds one block, so r0's tail (block 2) is demoted to dram
        trace = self.write("repeat.jsonl", [mooncake_line(0, 1024, [1, 2]), mooncake_line(1, 1024, [1, 2])])
        return run_lite_json("cache-sim", trace, "--tiers", f"hbm=1,dram=4@{bandwidth}", "--kv-bytes-per-token",
                             "1000", "--prefill-ms-per-token", "1", "--policy", "lru")["result"]["records"][0]

    def test_hits_per_tier_and_load_against_recompute(self):
        # block 2 from dram at 10 MB/s: 512 tokens x 1000 bytes load in 51.2 ms, recomputing them takes 512 ms
        row = self.tiered("10MB/s")
        self.assertEqual([(t["name"], t["hit_tokens"]) for t in row["tiers"]], [("hbm", 512), ("dram", 512)])
        self.assertEqual(row["hit_tokens"], 1024)
        self.assertEqual(row["recomputed_tokens"], 0)
        self.assertEqual(row["capacity_blocks"], 5)
        self.assertAlmostEqual(row["ttft_mean_ms"], (1024 + 51.2) / 2)
        self.assertEqual(row["tiers"][1]["bytes_per_second"], 1e7)
        # at 0.5 MB/s the load would take 1024 ms: block 2 is recomputed (512 ms)
        row = self.tiered("0.5MB/s")
        self.assertEqual(row["tiers"][1]["hit_tokens"], 0)
        self.assertEqual(row["recomputed_tokens"], 512)
        self.assertAlmostEqual(row["ttft_mean_ms"], (1024 + 512) / 2)

    def test_two_lru_tiers_are_one_lru_of_their_total(self):
        trace = self.require_mooncake()
        one = run_lite_json("cache-sim", trace, "--sizes", "97656", "--policy", "lru")["result"]["records"][0]
        doc = run_lite_json("cache-sim", trace, "--tiers", "hbm=3Mtok,dram=91797", "--policy", "lru")["result"]
        two = doc["records"][0]
        self.assertEqual(two["capacity_blocks"], 97656)
        self.assertEqual(two["hit_tokens"], one["hit_tokens"])
        self.assertEqual(sum(t["hit_tokens"] for t in two["tiers"]), two["hit_tokens"])
        self.assertGreater(two["tiers"][1]["hit_tokens"], two["tiers"][0]["hit_tokens"])  # Figure 9: DRAM matters
        r = run_lite("cache-sim", trace, "--tiers", "hbm=3Mtok,dram=47Mtok@50GB/s", "--policy", "lru")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--kv-layout", r.stderr)

    def test_tier_rules_are_checked_before_work(self):
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        cases = [
            (["--tiers", "hbm=10", "--sizes", "10"], ["--sizes", "--tiers"]),
            (["--tiers", "hbm=10", "--mrc"], ["--mrc", "--tiers"]),
            (["--tiers", "hbm=10,dram=64GiB"], ["--tiers", "dram", "--kv-layout"]),
            (["--tiers", "hbm=10,dram=100@fast"], ["--tiers", "fast", "bandwidth"]),
            (["--tiers", "10"], ["--tiers", "NAME="]),
        ]
        for args, needles in cases:
            with self.subTest(args=args):
                self.assert_rejected("cache-sim", trace, *args, needles=needles)
        self.assert_rejected("cache-sim", DATA / "inference_requests.csv", "--tiers", "hbm=10",
                             needles=["--tiers", "prefix"])


class Cluster(PrefixTestCase):
    def test_local_pools_behind_each_route_against_the_global_pool(self):
        # two conversations interleaved (A = blocks 1,2; B = 3,4), two instances of 2 blocks each
        trace = self.write("two.jsonl", [mooncake_line(t, 1024, ids) for t, ids in
                                         ((0, [1, 2]), (1, [3, 4]), (2, [1, 2]), (3, [3, 4]))])
        doc = run_lite_json("cache-sim", trace, "--sizes", "4", "--instances", "2", "--route", "all", "--policy",
                            "lru")["result"]
        rows = {r["route"]: r for r in doc["records"]}
        self.assertEqual(list(rows), ["global", "random", "round-robin", "least-loaded", "session", "prefix-affinity"])
        self.assertEqual(rows["global"]["hit_tokens"], 2048)
        self.assertEqual(rows["prefix-affinity"]["hit_tokens"], 2048)
        self.assertEqual(rows["least-loaded"]["hit_tokens"], 1024)  # r3 goes to the tie's instance 0, not B's
        self.assertEqual([i["requests"] for i in rows["least-loaded"]["instances"]], [3, 1])
        self.assertAlmostEqual(rows["least-loaded"]["request_imbalance"], 1.5)
        self.assertAlmostEqual(rows["least-loaded"]["prefill_imbalance"], 2048 / 1536)
        for r in doc["records"]:
            self.assertEqual(sum(i["hit_tokens"] for i in r["instances"]), r["hit_tokens"])

    def test_mooncake_trace_routes_and_global_pooling(self):
        trace = self.require_mooncake()
        doc = run_lite_json("cache-sim", trace, "--sizes", "50Mtok", "--instances", "4", "--route", "all",
                            "--policy", "lru")["result"]
        rows = {r["route"]: r for r in doc["records"]}
        self.assertEqual(len(rows), 6)
        glob = rows["global"]["token_hit_ratio"]
        for route, r in rows.items():
            self.assertEqual(len(r["instances"]), 4)
            self.assertEqual(sum(i["requests"] for i in r["instances"]), 12031)
            self.assertLessEqual(r["token_hit_ratio"], glob + 1e-9, route)  # local pools never beat the global one
        self.assertLess(rows["round-robin"]["token_hit_ratio"], 0.6 * glob)  # a quarter of the pool each
        self.assertAlmostEqual(rows["round-robin"]["request_imbalance"], 1.0, delta=0.01)  # 3,008 of 3,007.75
        # with a TTFT model the same study queues each instance's prefills
        doc = run_lite_json("cache-sim", trace, "--sizes", "50Mtok", "--instances", "4", "--route", "prefix-affinity",
                            "--prefill-ms-per-token", "0.05", "--policy", "lru")["result"]
        self.assertTrue(all("ttft_p99_ms" in r for r in doc["records"]))

    def test_each_mode_refuses_the_others_routes(self):
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        self.assert_rejected("cache-sim", trace, "--instances", "2", "--route", "modulo",
                             needles=["--route", "'modulo'", "object trace", "prefix-affinity"])
        self.assert_rejected("cache-sim", trace, "--instances", "2", "--route", "prefix-afinity",
                             needles=["--route", "prefix-affinity"])
        self.assert_rejected("cache-sim", trace, "--route", "session", needles=["--route", "--instances"])
        self.assert_rejected("cache-sim", trace, "--instances", "2", "--route", "session", "--tiers", "hbm=10",
                             needles=["--route", "--tiers"])
        self.assert_rejected("cache-sim", DATA / "inference_requests.csv", "--nodes", "2", "--route",
                             "prefix-affinity", needles=["--route", "'prefix-affinity'", "object trace", "ketama"])


class Engines(PrefixTestCase):
    """--engine vllm / sglang (docs/cache-sim.md "Engine mode"): answers worked out by hand, and Mooncake's trace."""

    # vLLM's design doc walk-through (block size 4, 10 blocks): request 0 decodes 5 tokens, request 1 shares 2
    # blocks with it, request 2 three; at 1 ms a token request 0 ends at 5 and request 1 at 6, before request 2
    WALK_THROUGH = [mooncake_line(0, 15, [1, 2, 3, 4], 5), mooncake_line(4, 14, [1, 2, 5, 6], 2),
                    mooncake_line(7, 29, [1, 2, 3, 7, 8, 9, 10, 11], 1)]

    def engine_run(self, trace, engine, *args):
        return run_lite_json("cache-sim", trace, "--block-tokens", "4", "--engine", engine, *args)["result"]

    def test_walk_through_by_hand(self):
        trace = self.write("walk.jsonl", self.WALK_THROUGH)
        vllm = self.engine_run(trace, "vllm:decode-ms=1", "--sizes", "10")
        self.assertEqual(vllm["engine"], "vllm")
        (row,) = vllm["records"]
        self.assertEqual(row["policy"], "vllm")
        self.assertEqual(row["hit_tokens"], 0 + 8 + 12)
        self.assertEqual(row["prompt_tokens"], 15 + 14 + 29)
        self.assertEqual(row["engine"], {"decode_ms": 1.0, "waited_requests": 0, "wait_mean_ms": 0.0,
                                         "wait_max_ms": 0.0, "too_large_requests": 0, "preemptions": 0,
                                         "evicted_blocks": 1})  # request 0's fourth block, filled by its output
        # sglang: the same hits; request 2 needs 2 of its 5 new blocks freed: leaves go as whole radix nodes,
        # oldest first, so request 0's output block and then request 1's node 5-6: 3 blocks (SGLang's own
        # RadixCache gives the same, scripts/bench/prefix_cache --peer-only)
        (row,) = self.engine_run(trace, "sglang:decode-ms=1", "--sizes", "10")["records"]
        self.assertEqual(row["hit_tokens"], 20)
        self.assertEqual(row["engine"]["evicted_blocks"], 3)

    def test_cap_and_waits_by_hand(self):
        # the same 8-token prompt twice: ideal hits 8 tokens, vllm whole blocks within 7 (4), sglang 7 tokens
        twice = self.write("twice.jsonl", [mooncake_line(0, 8, [1, 2]), mooncake_line(100, 8, [1, 2])])
        hits = {e: self.engine_run(twice, e, "--sizes", "10")["records"][0]["hit_tokens"]
                for e in ("ideal", "vllm", "sglang")}
        self.assertEqual(hits, {"ideal": 8, "vllm": 4, "sglang": 7})
        # 2 blocks; requests 0 and 1 decode until 10 and 11 ms, request 2 (arriving at 2) waits until 10
        busy = self.write("busy.jsonl", [mooncake_line(t, 4, [t + 1]) for t in range(3)])
        for engine in ("vllm", "sglang"):
            with self.subTest(engine=engine):
                doc = self.engine_run(busy, engine + ":decode-ms=10", "--sizes", "2", "--prefill-ms-per-token", "0")
                row = doc["records"][0]
                self.assertEqual(row["engine"]["waited_requests"], 1)
                self.assertAlmostEqual(row["engine"]["wait_mean_ms"], 8)
                self.assertAlmostEqual(row["ttft_p99_ms"], 8, delta=0.5)  # TTFT includes the wait
        out = run_lite("cache-sim", busy, "--block-tokens", "4", "--engine", "vllm", "--sizes", "2")
        self.assertEqual(out.returncode, 0, out.stderr)
        for column in ("waited", "mean wait", "preempted", "too large"):
            self.assertIn(column, out.stdout)

    def test_mooncake_engines_agree_at_large_capacity(self):
        trace = self.require_mooncake()
        ratios = {}
        for engine in ("ideal", "vllm", "sglang"):
            doc = run_lite_json("cache-sim", trace, "--sizes", "50Mtok", "--engine", engine,
                                *(["--policy", "lru"] if engine == "ideal" else []))["result"]
            self.assertEqual(doc["trace"]["requests"], 12031)  # the fixture itself, not a skip, if it changed
            (row,) = doc["records"]
            ratios[engine] = row["token_hit_ratio"]
            if engine != "ideal":
                self.assertEqual(row["engine"]["too_large_requests"], 0)
        self.assertGreater(ratios["ideal"], 0.36)
        # with room for everything the engines lose only partial blocks (vllm), the input_length - 1 cap and
        # blocks of running requests' outputs: a few hundredths of the token hit ratio
        for engine in ("vllm", "sglang"):
            self.assertLessEqual(ratios[engine], ratios["ideal"] + 1e-9, engine)
            self.assertGreater(ratios[engine], ratios["ideal"] - ENGINE_TOLERANCE, engine)

    def test_bad_engines_are_refused(self):
        trace = self.write("ok.jsonl", [mooncake_line(0, 1024, [1, 2])])
        cases = [
            (["--engine", "vlm"], ["--engine", "vllm"]),
            (["--engine", "vllm:decode-ms=fast"], ["--engine", "decode-ms"]),
            (["--engine", "sglang:decode-ms=-2"], ["--engine", "decode-ms"]),
            (["--engine", "ideal:decode-ms=5"], ["--engine", "ideal"]),
            (["--engine", "vllm", "--policy", "lru"], ["--policy", "--engine"]),
            (["--engine", "sglang", "--mrc"], ["--mrc", "--engine"]),
        ]
        for args, needles in cases:
            with self.subTest(args=args):
                self.assert_rejected("cache-sim", trace, *args, needles=needles)
        self.assert_rejected("cache-sim", DATA / "inference_requests.csv", "--engine", "vllm",
                             needles=["--engine", "prefix"])


class Plot(PrefixTestCase):
    """--plot draws Mooncake's Figure 9: token hit ratio against capacity, the one-pass curve and the ceiling."""

    def series(self, svg):
        """Legend label -> the points of its polyline (pixels), in drawing order."""
        ns = {"s": "http://www.w3.org/2000/svg"}
        root = ET.parse(svg).getroot()
        texts = [t.text for t in root.iterfind(".//s:text", ns)]
        lines = [[tuple(map(float, xy.split(","))) for xy in l.get("points").split()]
                 for l in root.iterfind(".//s:polyline", ns)]
        labels = texts[-len(lines):]  # the legend is drawn last, one text per series
        return dict(zip(labels, lines)), texts

    def test_hit_ratio_against_tokens_with_the_curve_and_the_ceiling(self):
        svg = self.tmp / "fig9.svg"
        doc = run_lite_json("cache-sim", self.chat(), "--sizes", "1,4,32", "--policy", "lru,radix-lru", "--mrc",
                            "--plot", svg)
        self.assertIn(f"plot written to {svg}", "\n".join(doc["result"]["notes"]))
        series, texts = self.series(svg)
        self.assertIn("cache size (tokens, log scale)", texts)
        self.assertEqual({"lru", "radix-lru", "tail-first LRU, one-pass exact", "every block kept (unbounded)"},
                         set(series))
        self.assertEqual([len(series[p]) for p in ("lru", "radix-lru")], [3, 3])  # one point per capacity
        ceiling = series["every block kept (unbounded)"][0][1]
        # 32 blocks hold every chain: both policies and the curve reach the ceiling there, and stay under it below
        for name in ("lru", "radix-lru", "tail-first LRU, one-pass exact"):
            self.assertAlmostEqual(series[name][-1][1], ceiling, delta=0.5, msg=name)
            self.assertTrue(all(y >= ceiling - 0.5 for _, y in series[name]), name)  # SVG y grows downwards
        self.assertGreater(series["lru"][0][1], ceiling + 10)  # one block holds far less
        unbounded = doc["result"]["unbounded"]["token_hit_ratio"]
        self.assertAlmostEqual(unbounded, 48 / 80)  # 80 prompt blocks, 48 of them seen before

    def test_bytes_through_a_kv_format_and_the_ttft_panel(self):
        svg = self.tmp / "kv.svg"
        run_lite_json("cache-sim", self.chat(), "--sizes", "1MiB,64MiB", "--kv-bytes-per-token", "1024",
                      "--kv-dtype", "fp16,int4", "--prefill-ms-per-token", "0.1", "--policy", "lru", "--plot", svg)
        series, texts = self.series(svg)
        self.assertIn("cache size (bytes, log scale)", texts)
        self.assertIn("Time to first token (p99 solid, mean dotted)", texts)
        self.assertTrue({"lru fp16", "lru int4", "lru fp16 TTFT p99", "lru int4 TTFT mean"} <= set(series), series)

    def test_a_plot_path_that_is_the_trace_is_refused_and_nothing_is_written(self):
        trace = self.chat()
        self.assert_rejected("cache-sim", trace, "--plot", trace, needles=[str(trace)])  # checks nothing changed
        bad = self.write("bad.jsonl", [mooncake_line(0, 1024, [1, 2]), "{\"oops\": 1}"])
        self.assert_rejected("cache-sim", bad, "--plot", self.tmp / "never.svg", needles=["bad.jsonl:2"])
        self.assertFalse((self.tmp / "never.svg").exists())


class Recipe(PrefixTestCase):
    """A `lite run` recipe's cache gates read the prefix study: min_hit_ratio the token hit ratio, max_cache_p99_ms
    the TTFT p99, both of the best online policy at the largest capacity."""

    def run_recipe(self, gates):
        trace = self.chat()
        recipe = self.tmp / "prefix.json"
        recipe.write_text(json.dumps({
            "lite_recipe": 1, "name": "prefix-sizing", "model": str(DATA / "fmnist_cnn.pt"),
            "steps": [{"cache-sim": {"trace": str(trace), "sizes": "4,32", "prefill_ms_per_token": 0.1,
                                     "policies": ["lru", "radix-lru", "radix-reference"]}}],
            "gates": gates}))
        r = run_lite("run", recipe, "-o", self.tmp / "out.pt", "--json", timeout=600)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        result = json.loads(r.stdout)["result"]
        return r.returncode, {g["gate"]: g for g in result["gates"]}

    def test_gates_read_the_token_hit_ratio_and_ttft(self):
        code, gates = self.run_recipe({"min_hit_ratio": 0.55, "max_cache_p99_ms": 1000})
        self.assertEqual(code, 0, gates)
        hit, p99 = gates["min_hit_ratio"], gates["max_cache_p99_ms"]
        self.assertAlmostEqual(hit["value"], 48 / 80)  # 32 blocks hold every chain: the unbounded ratio (Plot)
        self.assertIn("at 16,384 tokens", hit["detail"])
        self.assertNotIn("radix-reference", hit["detail"])
        self.assertIn("TTFT", p99["detail"])
        self.assertGreater(p99["value"], 0)
        code, gates = self.run_recipe({"min_hit_ratio": 0.7})
        self.assertEqual(code, 1)
        self.assertFalse(gates["min_hit_ratio"]["passed"])
        self.assertAlmostEqual(gates["min_hit_ratio"]["value"], 0.6)


class Listing(PrefixTestCase):
    def test_policy_list_and_dump_config(self):
        r = run_lite("cache-sim", "--policy", "list")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("radix-lru", "radix-lfu", "radix-cost", "radix-reference", "vllm", "sglang"):
            self.assertIn(name, r.stdout)
        r = run_lite("cache-sim", "t.jsonl", "--block-tokens", "16", "--kv-dtype", "fp8,int4", "--engine", "sglang",
                     "--dump-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        config = json.loads(r.stdout)
        self.assertEqual(config["block_tokens"], 16)
        self.assertEqual(config["kv_dtypes"], ["fp8", "int4"])
        self.assertEqual(config["engine"], "sglang")


if __name__ == "__main__":
    unittest.main()
