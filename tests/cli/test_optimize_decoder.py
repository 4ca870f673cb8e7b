"""lite optimize on a decoder with an LLM request trace (issue 36 item 6, docs/optimize.md "Decoders and the prefix
cache"): weight modes x KV formats x prefix-cache sizes against a TTFT target. The decoder comes from
scripts/fixtures/make_decoder.py (tiny llama shape, seeded) and the trace is written here in the token-ids form
(shared system prompts and per-request suffixes within the model's 128 positions); a fixture that fails to build
fails the test."""
import json
import random
import subprocess
import tempfile
import unittest
from pathlib import Path

from litetest import REPO, LiteTestCase, lite_json_result, run_lite

FIXTURES = REPO / "scripts" / "fixtures"
PYTHON = "/usr/bin/python3"


def write_trace(path, requests=240, seed=5):
    """Eight system prompts of 48 tokens shared with a skew, each request adding 8 to 56 tokens of its own."""
    rng = random.Random(seed)
    systems = [[rng.randrange(256) for _ in range(48)] for _ in range(8)]
    lines = []
    for i in range(requests):
        system = systems[min(int(rng.expovariate(0.6)), 7)]
        suffix = [rng.randrange(256) for _ in range(rng.randrange(8, 57))]
        lines.append(json.dumps({"timestamp": i * 50, "tokens": system + suffix, "output_length": 8}))
    path.write_text("\n".join(lines) + "\n")


def write_mooncake_trace(path, requests=200, seed=7, block=4):
    """Mooncake's form with blocks of `block` tokens: three shared system prompts of 12 blocks, each request adding
    1 to 10 blocks of its own (the last one partial), ids numbered as Mooncake's are (one id per prefix)."""
    rng = random.Random(seed)
    systems = [list(range(s * 12, s * 12 + 12)) for s in range(3)]
    next_id, lines = 36, []
    for i in range(requests):
        own = rng.randrange(1, 11)
        ids = systems[min(int(rng.expovariate(0.8)), 2)] + list(range(next_id, next_id + own))
        next_id += own
        tokens = len(ids) * block - rng.randrange(block)
        lines.append(json.dumps({"timestamp": i * 40, "input_length": tokens, "output_length": 8, "hash_ids": ids}))
    path.write_text("\n".join(lines) + "\n")


class OptimizeDecoder(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.dir.name)
        cls.model = cls.folder / "llama.pt"
        r = subprocess.run([PYTHON, str(FIXTURES / "make_decoder.py"), "--shape", "llama", "--size", "tiny", "--form",
                            "kv-list", "--export", "script", "--seed", "4", "--out", str(cls.model)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise AssertionError(f"make_decoder.py failed:\n{r.stdout}\n{r.stderr}")
        cls.tokens = cls.folder / "heldout.pt"
        code = ("import torch; g = torch.Generator().manual_seed(9); "
                f"torch.save(torch.randint(0, 256, (6, 24), generator=g), '{cls.tokens}')")
        subprocess.run([PYTHON, "-c", code], check=True, timeout=120)
        cls.trace = cls.folder / "chats.jsonl"
        write_trace(cls.trace)
        cls.mooncake = cls.folder / "mooncake_blocks4.jsonl"
        write_mooncake_trace(cls.mooncake)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def optimize(self, *args):
        return lite_json_result("optimize", self.model, "--trace", self.trace, "--eval", self.tokens, "--duration",
                                "0.3", "--modes", "float,weight-int8,fp16", *args)

    def test_the_smallest_cache_meeting_ttft_wins_and_cache_sim_agrees(self):
        out = self.folder / "chosen.pt"
        code, doc, err = self.optimize("--target-p99", "1000", "-o", out)
        self.assertEqual(code, 0, err)
        d = doc["result"]["decoder"]
        self.assertEqual((d["trace_format"], d["block_tokens"], d["requests"]), ("tokens", 16, 240))
        self.assertEqual([w["mode"] for w in d["weights"]], ["float", "weight-int8", "fp16"])
        for w in d["weights"]:
            self.assertEqual(w["status"], "measured", w)
            self.assertGreater(w["decode_tokens_per_s"], 0)
            self.assertGreater(w["prefill_model"]["b_ms_per_token"] + w["prefill_model"]["a_ms"], 0)
        pairs = d["pairs"]
        self.assertEqual(len(pairs), 3 * 3)  # each mode: the cache as returned, int8, fp8
        by_key = {(p["mode"], p["kv_format"]): p for p in pairs}
        as_returned, int8 = by_key[("float", "float32")], by_key[("float", "int8")]
        self.assertEqual(as_returned["kv_bytes_per_token"], 512)
        self.assertEqual(int8["kv_bytes_per_token"], 2 * 2 * 2 * (16 + 2))
        feasible = [p for p in pairs if p["feasible"]]
        self.assertTrue(feasible)
        for p in feasible:
            self.assertEqual(p["status"], "met")
            self.assertLessEqual(p["ttft_p99_ms"], 1000)
            self.assertLessEqual(p["quality_loss_pct"], 1.0)
        (chosen,) = [p for p in pairs if p["chosen"]]
        self.assertEqual(chosen, d["chosen"])
        self.assertEqual(chosen["cache_bytes"], min(p["cache_bytes"] for p in feasible))
        speed = {w["mode"]: w["decode_tokens_per_s"] for w in d["weights"]}
        same_size = [p for p in feasible if p["cache_bytes"] == chosen["cache_bytes"]]
        self.assertEqual(speed[chosen["mode"]], max(speed[p["mode"]] for p in same_size))
        # the same bytes hold more tokens in a lighter KV format
        if as_returned["cache_bytes"] == int8["cache_bytes"]:
            self.assertGreaterEqual(int8["capacity_tokens"], 3 * as_returned["capacity_tokens"])  # 3.5x, whole blocks
        # cache-sim replays the chosen pair to the same TTFT from the weights' fitted prefill model
        model = next(w for w in d["weights"] if w["mode"] == chosen["mode"])["prefill_model"]
        blocks = chosen["capacity_tokens"] // 16
        sim = lite_json_result("cache-sim", self.trace, "--sizes", str(blocks), "--policy", chosen["policy"],
                               "--prefill-cost", f"a={model['a_ms']!r},b={model['b_ms_per_token']!r},"
                                                 f"c={model['c_ms_per_token2']!r},d={model['d_ms_per_cached_token']!r}")
        self.assertEqual(sim[0], 0, sim[2])
        self.assertAlmostEqual(sim[1]["result"]["records"][0]["ttft_p99_ms"], chosen["ttft_p99_ms"], places=6)
        # the artifact: stock PyTorch loads it and it records the search
        r = subprocess.run([PYTHON, "-c", "import sys, torch; m = torch.jit.load(sys.argv[1]); "
                            "logits, cache = m(torch.zeros(1, 4, dtype=torch.long), []); print(tuple(logits.shape))",
                            str(out)], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(1, 4, 256)", r.stdout)
        text = run_lite("optimize", str(self.model), "--trace", str(self.trace), "--eval", str(self.tokens),
                        "--duration", "0.3", "--modes", "weight-int8", "--target-p99", "1000", "-o",
                        str(self.folder / "again.pt")).stdout
        self.assertIn("Weights x KV format", text)
        self.assertIn("chosen: weight-int8 weights", text)

    def test_the_search_screens_what_the_exhaustive_grid_measures_fully(self):
        """The default search: short decode timings, half the prefill grid timed once, KV-format losses predicted from
        float's what-if, each settled only where it decides the choice; --exhaustive measures every mode fully. Both
        on a Mooncake-form trace with 4-token blocks (--block-tokens, as a trace scaled to a small model's context)."""
        runs = {}
        for kind, extra in (("search", []), ("grid", ["--exhaustive"])):
            code, doc, err = lite_json_result("optimize", self.model, "--trace", self.mooncake, "--block-tokens", "4",
                                              "--eval", self.tokens, "--duration", "0.6", "--screen-duration", "0.2",
                                              "--modes", "float,weight-int8,fp16", "--target-p99", "1000", "-o",
                                              self.folder / f"{kind}.pt", *extra)
            self.assertEqual(code, 0, err)
            runs[kind] = doc["result"]["decoder"]
        search, grid = runs["search"], runs["grid"]
        for d in (search, grid):
            self.assertEqual((d["trace_format"], d["block_tokens"], d["requests"]), ("mooncake", 4, 200))
        full_points = {w["mode"]: w["prefill_points"] for w in grid["weights"]}
        for w in grid["weights"]:
            self.assertEqual((w["timing"], w["prefill_grid"], w["prefill_passes"]), ("full", "full", 5), w)
        self.assertTrue(all(not p["quality_predicted"] for p in grid["pairs"]))
        self.assertEqual((grid["race"], grid["refitted"]), (None, []))
        raced = set(search["race"]["modes"]) if search["race"] else set()
        for w in search["weights"]:
            self.assertEqual(w["timing"], "raced" if w["mode"] in raced else "screened", w)
            self.assertEqual(w["prefill_grid"], "full" if w["mode"] in search["refitted"] else "screen", w)
            if w["prefill_grid"] == "screen":  # every other point of the same grid, enough for three coefficients
                self.assertTrue(3 <= w["prefill_points"] < full_points[w["mode"]], (w, full_points))
                self.assertEqual(w["prefill_passes"], 1, w)
            else:  # a refit ends from its second pass on, once settled beyond its margin
                self.assertTrue(2 <= w["prefill_passes"] <= 5, w)
        predicted = [p for p in search["pairs"] if p["quality_predicted"]]
        self.assertTrue(predicted)  # the quantized modes' int8 and fp8 pairs, until chosen
        self.assertTrue(all(p["mode"] != "float" and p["kv_format"] in ("int8", "fp8") for p in predicted), predicted)
        self.assertFalse(search["chosen"]["quality_predicted"])
        if search["race"]:
            r = search["race"]
            self.assertIn(r["ended"], ("one left", "settled", "duration spent"))
            self.assertTrue(1 <= r["turns"] <= 2 and set(r["dropped"]) < raced, r)
        # a target every pair meets: both choose the smallest size, and the search the fastest as it timed them
        self.assertEqual(search["chosen"]["cache_bytes"], grid["chosen"]["cache_bytes"])
        self.assertEqual(search["chosen"]["cache_bytes"], search["cache_bytes"][0])

    def test_the_default_modes_leave_out_bf16_where_it_would_run_emulated(self):
        """Under oneDNN's AVX2 kernels (no native bf16, as on an AVX2-only CPU) the default --modes skip bf16 with the
        reason, before building it (quantize's rule for auto); an explicit --modes bf16 is built regardless."""
        avx2 = {"ONEDNN_MAX_CPU_ISA": "AVX2"}
        code, doc, err = lite_json_result("optimize", self.model, "--trace", self.trace, "--eval", self.tokens,
                                          "--duration", "0.3", "--target-p99", "1000", "-o", self.folder / "d.pt",
                                          env=avx2)
        self.assertEqual(code, 0, err)
        status = {w["mode"]: (w["status"], w["reason"]) for w in doc["result"]["decoder"]["weights"]}
        self.assertEqual(status["bf16"][0], "skipped", status)
        self.assertIn("emulated", status["bf16"][1])
        self.assertEqual(status["fp16"][0], "measured", status)
        code, doc, err = lite_json_result("optimize", self.model, "--trace", self.trace, "--eval", self.tokens,
                                          "--duration", "0.3", "--target-p99", "1000", "--modes", "float,bf16", "-o",
                                          self.folder / "e.pt", env=avx2)
        self.assertEqual(code, 0, err)
        bf16 = next(w for w in doc["result"]["decoder"]["weights"] if w["mode"] == "bf16")
        self.assertNotEqual(bf16["status"], "skipped", bf16)

    def test_the_emitted_recipe_rebuilds_the_choice_and_lite_run_gates_it_on_the_same_ttft(self):
        """--emit-recipe writes the chosen mode as a quantize step and a cache-sim step at the chosen policy and size
        with that mode's fitted prefill cost; lite run replays it and gets the search's own TTFT p99 (the replay is
        deterministic), judged against the same target, and the quality budget on the final decoder."""
        recipe, out = self.folder / "emitted.json", self.folder / "emitted.pt"
        # weight-int8 alone (float's pairs are left out when --modes does not name it): the recipe has a model step
        code, doc, err = lite_json_result("optimize", self.model, "--trace", self.trace, "--eval", self.tokens,
                                          "--duration", "0.3", "--modes", "weight-int8", "--target-p99", "1000",
                                          "-o", out, "--emit-recipe", recipe)
        self.assertEqual(code, 0, err)
        d = doc["result"]["decoder"]
        self.assertEqual(doc["result"]["emitted_recipe"], str(recipe))
        emitted = json.loads(recipe.read_text())
        self.assertEqual(d["chosen"]["mode"], "weight-int8")
        self.assertEqual([next(iter(step)) for step in emitted["steps"]], ["quantize", "cache-sim"])
        self.assertEqual(emitted["gates"]["max_cache_p99_ms"], 1000)
        code, ran, err = lite_json_result("run", recipe, "-o", self.folder / "rebuilt.pt")
        self.assertEqual(code, 0, err)
        gates = {g["gate"]: g for g in ran["result"]["gates"]}
        self.assertEqual(set(gates), {"max_accuracy_drop", "max_cache_p99_ms", "min_hit_ratio"})
        self.assertTrue(all(g["passed"] for g in gates.values()), gates)
        self.assertAlmostEqual(gates["max_cache_p99_ms"]["value"], d["chosen"]["ttft_p99_ms"], places=6)
        self.assertEqual(ran["result"]["evaluation"]["kind"], "decoder")

    def test_an_unreachable_target_exits_1_and_writes_nothing(self):
        out = self.folder / "never.pt"
        code, doc, err = self.optimize("--target-p99", "0.0001", "-o", out)
        self.assertEqual(code, 1, err)
        d = doc["result"]["decoder"]
        self.assertIsNone(d["chosen"])
        self.assertTrue(all(p["status"] in ("not reached", "over budget") for p in d["pairs"]), d["pairs"])
        self.assertFalse(out.exists())

    def test_what_a_decoder_search_cannot_do_exits_2_with_one_line(self):
        classifier = self.folder / "mlp.pt"
        subprocess.run([PYTHON, "-c", "import torch; torch.jit.save(torch.jit.script(torch.nn.Linear(4, 2)), "
                        f"'{classifier}')"], check=True, timeout=120)
        traced = self.folder / "traced.pt"  # prefills through a prefill method: quantize cannot rewrite it
        r = subprocess.run([PYTHON, str(FIXTURES / "make_decoder.py"), "--shape", "llama", "--size", "tiny", "--form",
                            "kv-list", "--export", "trace", "--seed", "4", "--out", str(traced)],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        base = ["optimize", str(self.model), "--trace", str(self.trace)]
        cases = [
            (["optimize", str(traced), "--trace", str(self.trace), "--target-p99", "100"],
             ["traced.pt", "prefill method", "export the decoder scripted"]),
            (base + ["--target-speedup", "2"], ["--target-speedup", "time-to-first-token"]),
            (base + ["--target-p99", "100", "--hit-latency", "0.1"], ["--hit-latency", "prefill"]),
            (base + ["--target-p99", "100", "--prune-ratios", "0.5"], ["--prune-ratios"]),
            (base + ["--target-p99", "100", "--plot", str(self.folder / "p.svg")], ["--plot"]),
            # 4-token blocks read as 8: hash_ids cannot match input_length (the fix names no flag optimize lacks)
            (base + ["--target-p99", "100", "--block-tokens", "-3"], ["--block-tokens", "whole number of tokens"]),
            (["optimize", str(self.model), "--trace", str(self.mooncake), "--block-tokens", "8", "--target-p99", "100"],
             ["mooncake_blocks4.jsonl:1", "hash_ids", "at 8 tokens a block", "every line of the trace"]),
            (["optimize", str(classifier), "--trace", str(REPO / "data" / "inference_requests.csv"), "--hit-latency",
              "0.1", "--target-p99", "100", "--block-tokens", "4"], ["--block-tokens", "LLM request trace"]),
            (["optimize", str(classifier), "--trace", str(self.trace), "--target-p99", "100"],
             ["mlp.pt", "KV cache"]),
        ]
        for args, needles in cases:
            with self.subTest(args=args[3:]):
                out = self.folder / "refused.pt"
                r = run_lite(*args, "-o", str(out))
                self.assert_bad_input(r, *needles)
                self.assertNotIn("skip-bad-lines", r.stderr)
                self.assertFalse(out.exists())
                self.assertFalse(Path(str(out) + ".work").exists(), "no work folder made")


if __name__ == "__main__":
    unittest.main()
