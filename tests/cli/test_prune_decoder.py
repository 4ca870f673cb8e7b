"""lite prune on decoders (issue 36 item 5, docs/prune.md "Decoders"): KV heads (each with its query group) and MLP
width cut from GPT-2- and Llama-shaped fixtures, scripted and traced, in the forms lite drives; the artifact loads in
stock PyTorch and generates; the KV bytes per token it returns equal the formula with the new kv_heads; the report
gives the decoder's figures before and after; what a decoder's run cannot do exits 2 with one line. Fixtures come
from scripts/fixtures/make_decoder.py (tiny, seeded); a fixture that fails to build fails the test."""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from decoder_helpers import build_decoder, provenance, python_greedy
from litetest import DATA, LiteTestCase, lite_json_result, run_lite

PYTHON = "/usr/bin/python3"
FAST = ["--iterations", "2", "--warmup", "1", "--prompt-tokens", "8", "--generate", "4", "--agreement-floor", "100"]
CASES = [("gpt2", "kv-list", "script"), ("gpt2", "kv-list", "trace"), ("llama", "kv-list", "script"),
         ("llama", "kv-list", "trace"), ("llama", "kv-pairs", "script"), ("llama", "kv-pairs", "trace"),
         ("gpt2", "kv-pairs", "trace"), ("llama", "stateless", "trace")]


class PruneDecoder(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.dir.name)
        cls.models = {case: build_decoder(cls.folder, *case, threads=1) for case in CASES}
        cls.tokens = cls.folder / "heldout.pt"
        code = ("import torch; g = torch.Generator().manual_seed(9); "
                f"torch.save(torch.randint(0, 256, (4, 24), generator=g), '{cls.tokens}')")
        subprocess.run([PYTHON, "-c", code], check=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def prune(self, model, *args):
        return lite_json_result("prune", model, "--eval", self.tokens, *FAST, *args)

    def test_heads_and_mlp_width_every_fixture_form(self):
        for case, model in self.models.items():
            with self.subTest(case=case):
                meta = json.loads(model.with_suffix(".json").read_text())
                out = self.folder / f"pruned_{'_'.join(case)}.pt"
                code, doc, err = self.prune(model, "--heads", "0.5", "--ratio", "0.25", "-o", out)
                self.assertEqual(code, 0, err)
                d = doc["result"]["decoder"]
                self.assertEqual(d["form"], case[1])
                kept = meta["kv_heads"] // 2
                self.assertEqual(d["before"]["kv_heads"], meta["layers"] * meta["kv_heads"])
                self.assertEqual(d["after"]["kv_heads"], meta["layers"] * kept)
                self.assertEqual(d["after"]["heads"], meta["layers"] * meta["heads"] // 2)
                self.assertEqual(d["after"]["mlp_width"], meta["layers"] * (meta["ffn"] - meta["ffn"] // 4))
                for cut in d["attention"]:
                    self.assertEqual(cut["head_dim"], meta["head_dim"])  # rotary's dims untouched
                    self.assertEqual(cut["counts_in"], "attributes" if case[2] == "script" else "graph constants")
                self.assertLess(d["after"]["parameters"], d["before"]["parameters"])
                self.assertLess(d["after"]["file_bytes"], d["before"]["file_bytes"])
                self.assertGreater(d["after"]["tpot_p50_ms"], 0)
                self.assertGreater(d["after"]["next_token_agreement"], 0)
                self.assertIsNotNone(d["after"]["perplexity"])
                ran = python_greedy(out, self.tokens)
                self.assertEqual(len(ran["tokens"]), 6)
                if case[1] == "stateless":
                    self.assertEqual(d["after"]["kv_bytes_per_token"], 0)
                    continue
                formula = meta["layers"] * kept * meta["head_dim"] * 2 * 4
                self.assertEqual(d["before"]["kv_bytes_per_token"], meta["kv_bytes_per_token"])
                self.assertEqual(d["after"]["kv_bytes_per_token"], formula)
                self.assertEqual(d["after"]["kv_formula_bytes_per_token"], formula)
                self.assertEqual(ran["kv_bytes_per_token"], formula)  # PyTorch measures the same cache
                self.assertEqual(provenance(out)["details"]["decoder"]["form"], case[1])

    def test_mlp_width_alone_keeps_the_cache(self):
        model = self.models[("llama", "kv-list", "script")]
        out = self.folder / "mlp_only.pt"
        code, doc, err = self.prune(model, "--ratio", "0.5", "-o", out)
        self.assertEqual(code, 0, err)
        d = doc["result"]["decoder"]
        self.assertEqual(d["after"]["kv_bytes_per_token"], d["before"]["kv_bytes_per_token"])
        self.assertEqual(d["after"]["heads"], d["before"]["heads"])
        self.assertEqual(d["after"]["mlp_width"] * 2, d["before"]["mlp_width"])

    def test_text_report_has_the_figures_before_and_after(self):
        model = self.models[("gpt2", "kv-list", "script")]
        r = run_lite("prune", model, *FAST, "--heads", "0.25", "-o", self.folder / "text.pt")
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ("time to first token", "time per token", "KV bytes per token", "next-token agreement",
                       "parameters", "file size", "KV heads / heads"):
            self.assertIn(needle, r.stdout)

    def test_dry_run_plans_and_writes_nothing(self):
        model = self.models[("llama", "kv-list", "trace")]
        out = self.folder / "dry.pt"
        code, doc, err = lite_json_result("prune", model, "--heads", "0.5", "--dry-run", "-o", out)
        self.assertEqual(code, 0, err)
        self.assertFalse(out.exists())
        self.assertTrue(all(c["kv_heads_kept"] == 1 for c in doc["result"]["decoder"]["attention"]))
        self.assertGreater(doc["result"]["planned_parameters"], 0)

    def test_agreement_floor_gate(self):
        model = self.models[("gpt2", "kv-list", "script")]
        code, doc, err = lite_json_result("prune", model, *FAST[:-2], "--heads", "0.75", "--ratio", "0.75",
                                          "--agreement-floor", "0", "-o", self.folder / "gate.pt")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["result"]["gates"]["failed"], ["agreement"])

    def test_what_a_decoder_run_cannot_do_exits_2(self):
        model = self.models[("gpt2", "kv-list", "script")]
        out = self.tmp / "x.pt"
        self.assert_rejected("prune", model, "--heads", "0.5", "--global", "-o", out, needles=["--global"])
        self.assert_rejected("prune", model, "--heads", "0.5", "--criterion", "taylor", "--data", self.tokens,
                             "-o", out, needles=["--data"])
        self.assert_rejected("prune", model, "--heads", "1", "-o", out, needles=["--heads"])
        self.assert_rejected("prune", model, "--heads", "0.5", "--sparsity", "0.5", "-o", out, needles=["--heads"])
        self.assert_rejected("prune", DATA / "fmnist_cnn.pt", "--heads", "0.5", "-o", out, needles=["fmnist_cnn.pt"])


if __name__ == "__main__":
    unittest.main()
