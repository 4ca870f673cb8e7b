"""lite quantize on decoders (issue 36, docs/quantize.md "Decoders"): every weight mode writes an artifact that stock
PyTorch loads and generates with, judged by next-token agreement and perplexity against frozen float and timed as
time to first token and per token; auto chooses among them; what a decoder's run cannot do exits 2 with one line.
Fixtures come from scripts/fixtures/make_decoder.py (tiny llama shape, seeded); a fixture that fails to build fails
the test."""
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from decoder_helpers import build_decoder, provenance, python_greedy
from litetest import LiteTestCase, run_lite, lite_json_result, run_lite_on_terminal

PYTHON = "/usr/bin/python3"
MODES = ["dynamic", "weight-int8", "weight-int4", "fp16", "bf16"]


class QuantizeDecoder(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.dir.name)
        cls.model = build_decoder(cls.folder, "llama", "kv-list", "script", seed=4)
        cls.tokens = cls.folder / "heldout.pt"
        code = ("import torch; g = torch.Generator().manual_seed(9); "
                f"torch.save(torch.randint(0, 256, (6, 24), generator=g), '{cls.tokens}')")
        subprocess.run([PYTHON, "-c", code], check=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def quantize(self, *args):
        return lite_json_result("quantize", self.model, "--eval", self.tokens, "--iterations", "2", "--warmup", "1",
                                "--generate", "4", "--allow-slower", *args)

    def test_every_mode_writes_an_artifact_pytorch_generates_with(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                out = self.folder / f"q_{mode}.pt"
                code, doc, err = self.quantize("--mode", mode, "-o", out)
                self.assertEqual(code, 0, err)
                d = doc["result"]["decoder"]
                self.assertEqual(d["form"], "kv-list")
                self.assertEqual(d["scored_tokens"], 6 * 23)
                (cand,) = d["candidates"]
                self.assertTrue(cand["chosen"])
                self.assertEqual(cand["mode"], mode)
                self.assertGreater(cand["next_token_agreement"], 0.5)
                self.assertIsNotNone(cand["perplexity"])
                self.assertGreater(cand["tpot_p50_ms"], 0)
                self.assertEqual(provenance(out)["details"]["mode"], mode)
                self.assertEqual(len(python_greedy(out, self.tokens)["tokens"]), 6)
                if mode in ("weight-int8", "weight-int4"):
                    self.assertLess(out.stat().st_size, 0.6 * self.model.stat().st_size)
                if mode == "dynamic":
                    self.assert_scales_after_kernel(out, provenance(out)["details"]["scheme"])

    def assert_scales_after_kernel(self, artifact, scheme):
        """Every int8 linear of a decoder's dynamic artifact runs int8 values of scale 1 and applies its per-channel
        scales after the kernel (docs/quantize.md "Decoders"), as stock PyTorch reads the file."""
        code = ("import json, sys, torch\n"
                "torch.backends.quantized.engine = 'onednn'\n"
                "m = torch.jit.load(sys.argv[1])\n"
                "g = m.forward.graph\n"
                "linears = [n for n in g.findAllNodes('quantized::linear_dynamic')]\n"
                "scales = []\n"
                "for n in linears:\n"
                "    name = n.inputsAt(1).node().s('name')\n"
                "    w = torch.ops.quantized.linear_unpack(getattr(m, name))[0]\n"
                "    scales.append([str(w.qscheme()), w.q_scale()])\n"
                "print(json.dumps({'linears': len(linears), 'scales': scales, "
                "'muls': len(g.findAllNodes('aten::mul_'))}))\n")
        r = subprocess.run([PYTHON, "-c", code, str(artifact)], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        found = json.loads(r.stdout)
        self.assertGreater(found["linears"], 0)
        self.assertEqual(scheme["linears_scales_after_kernel"], found["linears"])
        self.assertEqual(found["scales"], [["torch.per_tensor_affine", 1.0]] * found["linears"])
        self.assertEqual(found["muls"], found["linears"])

    def test_auto_keeps_the_fastest_mode_within_the_tolerance(self):
        out = self.folder / "auto.pt"
        code, doc, err = self.quantize("-o", out, "--tolerance", "50")
        self.assertIn(code, (0, 1), err)
        d = doc["result"]["decoder"]
        by_mode = {c["mode"]: c for c in d["candidates"]}
        self.assertIn("needs activation calibration", by_mode["static"]["problem"])
        judged = [c for c in d["candidates"] if not c["problem"]]
        emulated = {c["mode"] for c in d["candidates"] if "runs emulated" in c["problem"]}  # bf16 on some CPUs
        self.assertLessEqual(emulated, {"bf16"})
        self.assertEqual({c["mode"] for c in judged} | emulated, set(MODES))
        (chosen,) = [c for c in judged if c["chosen"]]
        within = [c for c in judged if c["meets_tolerance"]]
        self.assertTrue(chosen["meets_tolerance"])
        self.assertEqual(chosen["decode_tokens_per_s"], max(c["decode_tokens_per_s"] for c in within))
        self.assertEqual(doc["result"]["mode"], chosen["mode"])
        self.assertTrue(out.exists())
        r = run_lite("quantize", str(self.model), "--eval", str(self.tokens), "--iterations", "2", "--warmup", "1",
                     "--generate", "4", "--allow-slower", "--tolerance", "50", "-o", str(self.folder / "auto2.pt"))
        self.assertIn("next-token agreement", r.stdout)
        self.assertIn("float32 (frozen)", r.stdout)

    def test_kv_cache_what_if_prices_int8_and_fp8_caches(self):
        """The written mode's cache quantized between decode steps: bytes per token by the formula (one fp16 scale per
        head and token), outputs that change, a table beside the modes' and a hint for cache-sim; none for a
        stateless decoder, which has no cache."""
        config = json.loads(self.model.with_suffix(".json").read_text())
        code, doc, err = self.quantize("--mode", "weight-int8", "--dry-run")
        self.assertEqual(code, 0, err)
        kv = doc["result"]["decoder"]["kv_cache_what_if"]
        self.assertEqual(kv["judged_on"], "weight-int8")
        self.assertEqual(kv["bytes_per_token"], config["kv_bytes_per_token"])
        self.assertEqual((kv["layers"], kv["kv_heads"], kv["head_dim"]),
                         (config["layers"], config["kv_heads"], config["head_dim"]))
        self.assertEqual((kv["sequences"], kv["prefill_tokens"], kv["scored_tokens"]), (6, 12, 6 * 12))
        self.assertTrue(kv["real_tokens"])
        per_token = config["layers"] * config["kv_heads"] * 2 * (config["head_dim"] + 2)
        self.assertEqual([f["format"] for f in kv["formats"]], ["int8", "fp8"])
        for f in kv["formats"]:
            with self.subTest(format=f["format"]):
                self.assertEqual(f["bytes_per_token"], per_token)
                self.assertAlmostEqual(f["bytes_ratio"], per_token / config["kv_bytes_per_token"])
                self.assertNotEqual(f["perplexity"], kv["perplexity"], "the quantized cache changed nothing")
                self.assertLess(abs(f["perplexity_change_pct"]), 5)
                self.assertGreater(f["next_token_agreement"], 0.8)
        r = run_lite("quantize", str(self.model), "--eval", str(self.tokens), "--iterations", "2", "--warmup", "1",
                     "--generate", "4", "--allow-slower", "--mode", "fp16", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("KV-cache what-if on fp16", r.stdout)
        self.assertIn("float32 (as returned)", r.stdout)
        self.assertIn(f"--kv-bytes-per-token {per_token}", r.stdout)

        stateless = build_decoder(self.folder, "llama", "stateless", "script", seed=4)
        code, doc, err = lite_json_result("quantize", stateless, "--eval", self.tokens, "--iterations", "2",
                                          "--warmup", "1", "--generate", "4", "--allow-slower", "--mode",
                                          "weight-int8", "--dry-run")
        self.assertEqual(code, 0, err)
        self.assertIsNone(doc["result"]["decoder"]["kv_cache_what_if"])
        self.assertTrue(any("stateless" in n for n in doc["result"]["notes"]), doc["result"]["notes"])

    def test_no_kv_what_if_skips_it_and_still_reports_the_cache_bytes(self):
        """--no-kv-what-if: no format decoded, the cache's bytes per token from one prefill, said in the table."""
        config = json.loads(self.model.with_suffix(".json").read_text())
        code, doc, err = self.quantize("--mode", "weight-int8", "--dry-run", "--no-kv-what-if")
        self.assertEqual(code, 0, err)
        d = doc["result"]["decoder"]
        kv = d["kv_cache_what_if"]
        self.assertTrue(kv["skipped"])
        self.assertEqual(kv["formats"], [])
        self.assertEqual(kv["bytes_per_token"], config["kv_bytes_per_token"])
        self.assertIsNone(d["kv_cache_what_if_bound"])
        self.assertNotIn("KV-cache what-if", {t["stage"] for t in doc["result"]["time"]})
        r = run_lite("quantize", str(self.model), "--eval", str(self.tokens), "--iterations", "2", "--warmup", "1",
                     "--generate", "4", "--allow-slower", "--mode", "weight-int8", "--dry-run", "--no-kv-what-if")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("KV-cache what-if on weight-int8: skipped (--no-kv-what-if)", r.stdout)
        self.assertIn("float32 (as returned)", r.stdout)
        self.assertNotIn("fp8", r.stdout)

    def test_kv_what_if_is_bounded_and_judges_every_format_on_the_same_rows(self):
        """A limit of 0 s runs one block (4 of the 6 rows) for the first few decode steps, every format on them; under
        --budget the limit is at most half of what is left; the time table books the what-if."""
        code, doc, err = self.quantize("--mode", "weight-int8", "--dry-run", "--kv-what-if-seconds", "0")
        self.assertEqual(code, 0, err)
        kv = doc["result"]["decoder"]["kv_cache_what_if"]
        bound = doc["result"]["decoder"]["kv_cache_what_if_bound"]
        self.assertEqual((bound["limit_s"], bound["limit_from"]), (0, "kv_what_if_seconds"))
        self.assertTrue(bound["cut"] and bound["cut_by_time"])
        self.assertFalse(bound["cut_by_steps"])
        self.assertEqual((bound["sequences_offered"], bound["decode_steps_offered"]), (6, 11))
        self.assertEqual((kv["sequences"], bound["sequences"], bound["decode_steps"]), (4, 4, 4))
        self.assertEqual(kv["scored_tokens"], 4 * (1 + 4))
        self.assertEqual(len(kv["formats"]), 2)
        for f in kv["formats"]:
            self.assertEqual((f["sequences"], f["scored_tokens"]), (kv["sequences"], kv["scored_tokens"]))
        stages = {(t["stage"], t["mode"]) for t in doc["result"]["time"]}
        self.assertIn(("KV-cache what-if", "weight-int8"), stages)
        self.assertIn(("evaluation", "weight-int8"), stages)

        code, doc, err = self.quantize("--mode", "weight-int8", "--dry-run", "--budget", "10")
        self.assertEqual(code, 0, err)
        kv = doc["result"]["decoder"]["kv_cache_what_if"]
        bound = doc["result"]["decoder"]["kv_cache_what_if_bound"]
        self.assertEqual(bound["limit_from"], "budget_s")
        self.assertLessEqual(bound["limit_s"], 5)
        self.assertGreaterEqual(kv["sequences"], 1)
        self.assertEqual({f["sequences"] for f in kv["formats"]}, {kv["sequences"]})
        self.assertEqual(bound["cut"], kv["sequences"] < 6 or bound["decode_steps"] < 11)

        r = run_lite_on_terminal("quantize", self.model, "--eval", self.tokens, "--iterations", "2", "--warmup", "1",
                                 "--generate", "4", "--allow-slower", "--mode", "weight-int8", "--dry-run",
                                 "--kv-what-if-seconds", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("KV-cache what-if on weight-int8: 6 sequences", r.stderr)  # announced, on the terminal
        self.assertIn("up to about 0 s", r.stderr)
        self.assertIn("KV-cache what-if: 4 of 6 sequences, 4 of the 11 decode steps", r.stdout)
        self.assertIn("cut by its 0 s limit (--kv-what-if-seconds raises it)", r.stdout)

    def test_a_bad_kv_what_if_limit_exits_2_and_writes_nothing(self):
        out_dir = self.folder / "bad_limit"
        out_dir.mkdir()
        for value in ("-1", "abc", "1e9"):
            with self.subTest(value=value):
                r = run_lite("quantize", self.model, "--eval", self.tokens, "--kv-what-if-seconds", value,
                             "-o", out_dir / "q.pt")
                self.assert_bad_input(r, "--kv-what-if-seconds")
                self.assert_no_new_files(out_dir, [])

    def test_what_a_decoder_run_cannot_do_exits_2_with_one_line(self):
        traced = build_decoder(self.folder, "llama", "kv-list", "trace", seed=4)
        floats = self.folder / "floats.npy"
        subprocess.run([PYTHON, "-c", f"import numpy; numpy.save('{floats}', numpy.zeros((2, 8), 'float32'))"],
                       check=True)
        cases = [
            (["--mode", "static"], ["--mode", "static int8"]),
            (["--calib", str(self.tokens)], ["--calib", "decoder"]),
            ([], ["prefill method"]),  # the traced model, below
            (["--eval", str(floats)], ["floats.npy", "int64 token ids"]),
        ]
        for i, (args, needles) in enumerate(cases):
            model = traced if i == 2 else self.model
            with self.subTest(args=args):
                out = self.folder / f"never{i}.pt"
                self.assert_bad_input(run_lite("quantize", str(model), "-o", str(out), *args), *needles)
                self.assertFalse(out.exists())

    def test_bf16_asked_where_onednn_has_no_bf16_kernels_names_them(self):
        """Under ONEDNN_MAX_CPU_ISA=AVX2 oneDNN has no bf16 kernels; on a CPU with AVX-512 ATen still sends bf16
        linear layers to it, and the decoder's first forward fails. The error names the missing kernels and the
        variable (not oneDNN's primitive message and a fix about token ids); where bf16 runs emulated, it works."""
        out = self.folder / "bf16_avx2.pt"
        r = run_lite("quantize", self.model, "--mode", "bf16", "--generate", "4", "--iterations", "2", "--warmup",
                     "1", "--allow-slower", "-o", out, env={"ONEDNN_MAX_CPU_ISA": "AVX2"})
        self.assert_bf16_written_or_refused_for_kernels(r, out)


if __name__ == "__main__":
    unittest.main()
