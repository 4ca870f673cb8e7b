"""lite run on a decoder (docs/run.md "Decoders"): a recipe whose model's forward takes a KV cache is judged in the
decoder's terms (quality lost, next-token agreement, decode tokens/s over the frozen original, time per output token,
size), its artifact generates in stock PyTorch, a failed gate exits 1 and still writes it, and bad evaluation
options exit 2 before any step. The decoder comes from scripts/fixtures/make_decoder.py (tiny llama shape, seeded);
a fixture that fails to build fails the test."""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from decoder_helpers import PYTHON, build_decoder, provenance, python_greedy
from litetest import LiteTestCase, lite_json_result, run_lite

GATES = {"max_size": "3MiB", "max_accuracy_drop": 5.0, "min_agreement": 50.0, "min_speedup": 0.05,
         "max_p99_ms": 5000}


class RunDecoder(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.dir.name)
        cls.model = build_decoder(cls.folder, "llama", "kv-list", "script", seed=4, threads=1)
        cls.tokens = cls.folder / "heldout.pt"
        code = ("import torch; g = torch.Generator().manual_seed(9); "
                f"torch.save(torch.randint(0, 256, (6, 24), generator=g), '{cls.tokens}')")
        subprocess.run([PYTHON, "-c", code], check=True, timeout=120)
        cls.prompt = cls.folder / "prompt.pt"
        subprocess.run([PYTHON, "-c", f"import torch; torch.save(torch.arange(8).view(1, 8) + 3, '{cls.prompt}')"],
                       check=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def recipe(self, gates, evaluate=None):
        doc = {"lite_recipe": 1, "name": "lm-int8", "model": str(self.model), "data": {"eval": str(self.tokens)},
               "steps": [{"quantize": {"mode": "weight-int8", "eval": "@data.eval", "duration_s": 0.3,
                                       "threads": 1, "allow_slower": True}}],
               "evaluate": evaluate or {"threads": 1, "duration_s": 0.6, "prompt_tokens": 16, "generate": 8},
               "gates": gates}
        path = self.tmp / "recipe.json"
        path.write_text(json.dumps(doc))
        return path

    def test_a_decoder_recipe_is_judged_in_the_decoders_terms_and_its_artifact_generates(self):
        out = self.tmp / "lm.int8.pt"
        code, doc, err = lite_json_result("run", self.recipe(GATES), "-o", out)
        self.assertEqual(code, 0, err)
        r = doc["result"]
        self.assertTrue(r["passed"], r["gates"])
        ev = r["evaluation"]
        self.assertEqual((ev["kind"], ev["prompt_tokens"], ev["generated_tokens"], ev["threads"]),
                         ("decoder", 16, 8, 1))
        self.assertEqual(ev["scored_tokens"], 6 * 23)
        self.assertTrue(ev["real_tokens"])  # an eval file of token ids: perplexity is measured
        for side in ("original", "final"):
            self.assertGreater(ev[side]["decode_tokens_per_s"], 0, ev)
            self.assertGreater(ev[side]["perplexity"], 1, ev)
        self.assertLess(ev["final"]["file_bytes"], ev["original"]["file_bytes"])  # int8 weights
        self.assertAlmostEqual(ev["decode_speedup"],
                               ev["final"]["decode_tokens_per_s"] / ev["original"]["decode_tokens_per_s"], places=6)
        gates = {g["gate"]: g for g in r["gates"]}
        self.assertEqual(set(gates), set(GATES))
        self.assertAlmostEqual(gates["min_speedup"]["value"], ev["decode_speedup"], places=6)
        self.assertAlmostEqual(gates["min_agreement"]["value"], 100 * ev["final"]["next_token_agreement"], places=6)
        self.assertAlmostEqual(gates["max_accuracy_drop"]["value"],
                               100 * (ev["final"]["perplexity"] / ev["original"]["perplexity"] - 1), places=6)
        self.assertAlmostEqual(gates["max_p99_ms"]["value"], ev["final"]["tpot_p99_ms"], places=6)
        self.assertIn("perplexity", gates["max_accuracy_drop"]["detail"])
        meta = provenance(out)
        self.assertEqual((meta["transform"], meta["details"]["status"]), ("run", "passed"))
        ran = python_greedy(out, self.prompt, generate=4)
        self.assertEqual(len(ran["tokens"]), 4, ran)

    def test_a_failed_gate_exits_1_and_still_writes_the_artifact(self):
        out = self.tmp / "lm.int8.pt"
        code, doc, err = lite_json_result("run", self.recipe({"max_size": "1KiB", "min_speedup": 1000}), "-o", out)
        self.assertEqual(code, 1, err)
        self.assertEqual(set(doc["result"]["failed_gates"]), {"max_size", "min_speedup"})
        self.assertTrue(out.exists())
        self.assertEqual(provenance(out)["details"]["status"], "failed")

    def test_bad_evaluation_options_exit_2_before_any_step(self):
        for evaluate, needles in (({"generate": 0}, ["evaluate.generate"]),
                                  ({"duration_s": 0}, ["evaluate.duration_s"]),
                                  ({"promt_tokens": 8}, ["evaluate.promt_tokens", "prompt_tokens"])):
            with self.subTest(evaluate=evaluate):
                recipe = self.recipe({"max_size": "3MiB"}, evaluate)
                before = set(self.tmp.iterdir())
                r = run_lite("run", recipe, "-o", self.tmp / "x.pt")
                self.assert_bad_input(r, *needles)
                self.assertEqual(set(self.tmp.iterdir()), before)


if __name__ == "__main__":
    unittest.main()
