"""lite profile on decoders (issue 36, docs/llm.md): every form lite drives, scripted and traced, generates the
tokens PyTorch's own greedy loop generates over the same file; the KV bytes per token equal the shapes' formula;
the prefill-cost table profile writes is what cache-sim reads; what is not a decoder, or cannot hold the context,
exits 2 with one line and writes nothing. Fixtures are built here by scripts/fixtures/make_decoder.py (tiny
shapes, seeded weights); a fixture that fails to build fails the test."""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from decoder_helpers import build_decoder, python_greedy
from litetest import DATA, LiteTestCase, run_lite, run_lite_json

PYTHON = "/usr/bin/python3"


def write_prompts(path, rows=2, tokens=12, vocab=256, seed=5):
    code = (f"import torch; g = torch.Generator().manual_seed({seed}); "
            f"torch.save(torch.randint(0, {vocab}, ({rows}, {tokens}), generator=g), '{path}')")
    subprocess.run([PYTHON, "-c", code], check=True, timeout=120)
    return path


class DecoderProfile(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.dir.name)
        cls.prompts = write_prompts(cls.folder / "prompts.pt")
        # llama: grouped-query attention (4 heads, 2 KV heads), so the KV formula is not the attention width's
        cls.models = {(form, export): build_decoder(cls.folder, "llama", form, export)
                      for form in ("stateless", "kv-list", "kv-pairs") for export in ("script", "trace")}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def profile(self, model, *args):
        return run_lite_json("profile", str(model), "--prompts", str(self.prompts), "--generate", "8",
                             "--iterations", "2", "--warmup", "1", *args)["result"]

    def test_every_form_generates_the_tokens_of_pytorchs_own_loop(self):
        for (form, export), model in self.models.items():
            with self.subTest(form=form, export=export):
                ref = python_greedy(model, self.prompts, 8)
                got = self.profile(model)["decoder"]
                self.assertEqual(got["form"], form)
                self.assertEqual(got["tokens"], ref["tokens"])
                self.assertGreater(len(set(ref["tokens"])), 1, "a fixture that repeats one token tests nothing")
                self.assertEqual(got["prompt_tokens"], 12)
                self.assertEqual(got["runs"], 2)
                self.assertEqual(got["max_positions"], ref["max_positions"])

    def test_kv_bytes_per_token_equal_the_formula_and_grow_with_the_context(self):
        doc = self.profile(self.models[("kv-pairs", "trace")])["decoder"]
        kv = doc["kv_cache"]
        self.assertEqual((kv["layers"], kv["kv_heads"], kv["head_dim"], kv["dtype"]), (2, 2, 16, "float32"))
        self.assertEqual(kv["bytes_per_token"], 2 * 2 * 16 * 2 * 4)
        self.assertEqual(kv["formula_bytes_per_token"], kv["bytes_per_token"])
        self.assertEqual(kv["bytes_after_prefill"], 12 * 512)       # one prompt row (batch 1)
        self.assertEqual(kv["bytes_at_end"], (12 + 8 - 1) * 512)   # the last token is never fed back
        self.assertFalse(kv["preallocated"])
        self.assertNotIn("kv_cache", self.profile(self.models[("stateless", "script")])["decoder"])

    def test_ttft_and_time_per_token_are_reported_with_warmup_apart(self):
        r = run_lite("profile", str(self.models[("kv-list", "script")]), "--generate", "6", "--prompt-tokens", "16",
                     "--iterations", "3", "--warmup", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ("time to first token (ms)", "time per output token (ms)", "decode tokens/s",
                       "warm-up TTFT, in order", "KV bytes per token (measured)", "2 layers x 2 KV heads x 16 head dim"):
            self.assertIn(needle, r.stdout)
        doc = run_lite_json("profile", str(self.models[("kv-list", "script")]), "--generate", "6", "--iterations", "3",
                            "--warmup", "2")["result"]["decoder"]
        self.assertEqual(len(doc["warmup"]["ttft_ms"]), 2)
        self.assertEqual(doc["tpot_ms"]["count"], 3 * 5)
        self.assertEqual(doc["ttft_ms"]["count"], 3)
        # the defaults (128 prompt + 32 generated) shrink to fit the fixture's 128 positions
        self.assertLessEqual(doc["prompt_tokens"] + doc["generated_tokens"] - 1, doc["max_positions"])

    def test_a_dynamic_int8_decoder_is_told_to_warm_the_decode_shape_first(self):
        """oneDNN's dynamic int8 linear keeps its kernel for the first call's shape (docs/llm.md "Warm-up"): profile
        says so, with the fix, for a decoder quantized dynamic, and not for its float original."""
        model = self.models[("kv-list", "script")]
        int8 = self.folder / "dynamic.pt"
        r = run_lite("quantize", str(model), "--mode", "dynamic", "-o", str(int8), "--generate", "4", "--iterations",
                     "2", "--warmup", "1", "--allow-slower", "--no-kv-what-if")
        self.assertIn(r.returncode, (0, 1), r.stderr)  # 1: the quality gate on random weights; the file is written
        self.assertTrue(int8.exists(), r.stderr)

        def first_shape_findings(path):
            doc = run_lite_json("profile", str(path), "--prompts", str(self.prompts), "--generate", "4",
                                "--iterations", "2", "--warmup", "1", "--qengine", "onednn")
            return [f for f in doc["findings"] if "first input shape" in f["what"]]
        (finding,) = first_shape_findings(int8)
        self.assertEqual(finding["severity"], "info")
        self.assertIn("one token per row", finding["advice"])
        self.assertEqual(first_shape_findings(model), [])

    def test_the_prefill_cost_table_is_what_cache_sim_reads(self):
        table = self.folder / "prefill.csv"
        doc = self.profile(self.models[("kv-list", "script")], "--prefill-cost-out", str(table))
        self.assertTrue(table.exists())
        lines = [l for l in table.read_text().splitlines() if not l.startswith("#")]
        self.assertEqual(lines[0], "new_tokens,cached_tokens,ms")
        self.assertEqual(doc["prefill_cost"]["points"], len(lines) - 1)
        self.assertGreaterEqual(len(lines) - 1, 5)
        trace = self.folder / "requests.jsonl"
        trace.write_text("".join(json.dumps({"timestamp": i, "input_length": 64, "output_length": 4,
                                             "hash_ids": [0, 1, 2, i + 3]}) + "\n" for i in range(20)))
        result = run_lite_json("cache-sim", str(trace), "--block-tokens", "16", "--sizes", "8",
                               "--prefill-cost-from", str(table))["result"]
        fit = doc["prefill_cost"]["fit"]
        for key in ("a_ms", "b_ms_per_token", "c_ms_per_token2", "d_ms_per_cached_token"):  # the same file, the same fit
            self.assertAlmostEqual(result["prefill_model"][key], fit[key], places=12)
        self.assertIn("fitted to", result["prefill_model"]["source"])
        self.assertIsNotNone(result["records"][0]["ttft_p99_ms"])

    def test_what_lite_cannot_drive_exits_2_with_one_line_and_writes_nothing(self):
        out = self.folder / "never.csv"
        floats = self.folder / "floats.npy"
        subprocess.run([PYTHON, "-c", f"import numpy; numpy.save('{floats}', numpy.zeros((2, 3), 'float32'))"],
                       check=True)
        kv = str(self.models[("kv-list", "script")])
        cases = [
            (["profile", str(DATA / "fmnist_cnn.pt"), "--generate", "4", "--prefill-cost-out", str(out)],
             ["fmnist_cnn.pt", "token ids", "docs/llm.md"]),
            (["profile", kv, "--prompt-tokens", "200", "--generate", "4"], ["holds 128 positions", "need 203"]),
            (["profile", kv, "--prompts", str(floats)], ["floats.npy", "int64 token ids"]),
            (["profile", kv, "--prefill-cost-out", kv], ["would overwrite the input"]),
            (["profile", kv, "--ops"], ["--ops", "profiled by generation"]),
            (["profile", kv, "--prompt-tokens", "0"], ["--prompt-tokens"]),
        ]
        for args, needles in cases:
            with self.subTest(args=args[2:]):
                self.assert_bad_input(run_lite(*args), *needles)
        self.assertFalse(out.exists())


if __name__ == "__main__":
    unittest.main()
