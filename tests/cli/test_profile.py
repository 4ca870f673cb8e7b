"""lite profile end to end: the bundled model, a torchvision model scripted here, compare mode, and
every bad-input path (exit 2, one line naming the file and the problem, nothing written)."""
import json
import pathlib
import shutil
import subprocess
import unittest

from litetest import DATA, PYTHON, LiteTestCase, run_lite, run_lite_json, signal_lite_on_terminal

MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
QUICK = ["--warmup", "3", "--iterations", "30", "--threads", "1"]


def python(code, cwd):
    subprocess.run([PYTHON, "-c", code], cwd=cwd, check=True, capture_output=True, text=True)


class ProfileBundledModel(LiteTestCase):
    def test_json_reports_every_documented_field(self):
        doc = run_lite_json("profile", MODEL, *QUICK, "--eval", EVAL, "--ops", "--op-iterations", "3",
                            "--qps", "300", "--requests", "30")
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(doc["command"], "profile")
        env = doc["environment"]
        for key in ["cpu_model", "cpu_features", "logical_cores", "intra_op_threads", "libtorch_version",
                    "quantized_engine", "onednn_isa", "build_type", "lite_version"]:
            self.assertIn(key, env)
        # Detected here, on this run: the features /proc/cpuinfo lists (of those lite reports).
        flags = pathlib.Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n", 1)[0].split()
        self.assertEqual(env["cpu_features"], [f for f in ["amx_int8", "amx_bf16", "avx512_fp16", "avx512_bf16",
                                                           "avx512_vnni", "avx512f", "avx2"] if f in flags])
        self.assertEqual(env["intra_op_threads"], 1)
        r = doc["result"]
        self.assertEqual(r["model"]["path"], str(MODEL))
        self.assertEqual(r["model"]["parameters"], 390858)
        self.assertEqual(r["model"]["total_macs"], 7748608)
        self.assertEqual(r["inputs"], [{"shape": [1, 1, 28, 28], "dtype": "float32"}])
        for key in ["min", "mean", "std", "cv", "p50", "p90", "p95", "p99", "p999", "max"]:
            self.assertIn(key, r["latency_ms"])
        lat = r["latency_ms"]
        self.assertLessEqual(lat["min"], lat["p50"])
        self.assertLessEqual(lat["p50"], lat["p99"])
        self.assertLessEqual(lat["p99"], lat["max"])
        self.assertEqual(len(r["samples_ms"]), 30)
        self.assertEqual(len(r["warmup_samples_ms"]), 3)
        self.assertGreater(r["throughput_samples_per_s"], 0)
        self.assertGreater(r["cold_start"]["load_ms"], 0)
        self.assertGreater(r["cold_start"]["first_inference_ms"], 0)
        self.assertGreater(r["memory"]["peak_rss_bytes"], 10 << 20)
        self.assertAlmostEqual(r["accuracy"]["percent"], 93.3, delta=0.05)
        ops = r["ops"]["by_op"]
        self.assertTrue(any("conv" in o["name"] for o in ops))
        self.assertAlmostEqual(sum(o["share"] for o in r["ops"]["by_op"]), 1.0, delta=0.35)
        self.assertEqual(r["load"][0]["requests"], 30)
        self.assertEqual([l["module"] for l in r["layers"]],
                         ["features.0", "features.4", "features.8", "classifier.1", "classifier.4"])
        self.assertIn("findings", doc)

    def test_text_table_and_other_printers(self):
        r = run_lite("profile", MODEL, *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ["Latency (ms)", "p99.9", "throughput", "cold: first inference", "MACs per forward"]:
            self.assertIn(needle, r.stdout)
        self.assertEqual(r.stderr, "", "no progress output when stderr is not a terminal")
        csv = run_lite("profile", MODEL, *QUICK, "--csv")
        self.assertEqual(csv.returncode, 0)
        self.assertIn("# Latency", csv.stdout)
        md = run_lite("profile", MODEL, *QUICK, "--markdown")
        self.assertIn("| p50 |", md.stdout)

    def test_batch_and_threads(self):
        doc = run_lite_json("profile", MODEL, "--batch", "16", "--threads", "2", "--warmup", "2", "--iterations", "5")
        self.assertEqual(doc["result"]["inputs"][0]["shape"], [16, 1, 28, 28])
        self.assertEqual(doc["environment"]["intra_op_threads"], 2)
        self.assertEqual(doc["result"]["model"]["total_macs"], 16 * 7748608)

    def test_duration_mode(self):
        doc = run_lite_json("profile", MODEL, "--warmup", "2", "--duration", "0.3")
        self.assertGreaterEqual(len(doc["result"]["samples_ms"]), 20)

    def test_chrome_trace(self):
        trace = self.tmp / "trace.json"
        r = run_lite("profile", MODEL, *QUICK, "--ops", "--op-iterations", "2", "--chrome-trace", trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        events = json.loads(trace.read_text())["traceEvents"]
        self.assertTrue(any(e["name"] == "aten::conv2d" and e["ph"] == "X" for e in events))

    def test_trace_is_the_old_name_of_chrome_trace(self):
        # --trace is a request trace in optimize: profile's Chrome trace is --chrome-trace, the old name warns
        trace = self.tmp / "old.json"
        r = run_lite("profile", MODEL, *QUICK, "--ops", "--op-iterations", "2", "--trace", trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--trace is renamed --chrome-trace", r.stderr)
        self.assertIn("traceEvents", trace.read_text())

    def test_input_file(self):
        python(f"import torch; torch.save(torch.zeros(4, 1, 28, 28), 'x.pt')", self.tmp)
        doc = run_lite_json("profile", MODEL, "--input-file", self.tmp / "x.pt", "--warmup", "1", "--iterations", "3")
        self.assertEqual(doc["result"]["inputs"][0]["shape"], [4, 1, 28, 28])


class LoadRunPlan(LiteTestCase):
    def test_a_long_load_run_says_how_long_up_front(self):
        """Issue 38 item 4: --qps 0.001 --requests 3 starts a ~50-minute run; the terminal is told so before it
        begins (as quantize and prune announce their timing), and SIGINT then ends it with 130."""
        import signal
        code, _, text = signal_lite_on_terminal(
            ["profile", MODEL, "--qps", "0.001", "--requests", "3", "--seed", "1"], b"until the last arrival",
            signal.SIGINT)
        self.assertRegex(text, r"lite profile: load test: 3 requests at 0\.001 req/s \(Poisson arrivals\): \d+ min "
                               r"until the last arrival", text)
        self.assertEqual(code, 130)


class ProfileCompare(LiteTestCase):
    def test_compare_reports_the_speedup_interval_and_agreement(self):
        frozen = self.tmp / "frozen.pt"
        python(f"import torch; m = torch.jit.load('{MODEL}').eval(); torch.jit.freeze(m).save('{frozen}')", self.tmp)
        doc = run_lite_json("profile", MODEL, frozen, "--warmup", "20", "--iterations", "100", "--threads", "1",
                            "--batch", "16", "--eval", EVAL)
        r = doc["result"]
        self.assertEqual(len(r["models"]), 2)
        self.assertFalse(r["models"][0]["model"]["frozen"])
        self.assertTrue(r["models"][1]["model"]["frozen"])
        c = r["comparison"]
        self.assertLessEqual(c["speedup_ci_low"], c["speedup_b_over_a"])
        self.assertLessEqual(c["speedup_b_over_a"], c["speedup_ci_high"])
        self.assertLess(c["agreement"]["max_abs_error"], 1e-3)
        self.assertEqual(c["agreement"]["top1_agreement"], 1.0)
        self.assertLess(c["agreement"]["kl_divergence"], 1e-6)
        self.assertEqual(r["models"][0]["accuracy"]["correct"], r["models"][1]["accuracy"]["correct"])
        text = run_lite("profile", MODEL, frozen, *QUICK)
        self.assertIn("speedup (median A / median B)", text.stdout)


class ProfileTorchvision(LiteTestCase):
    def test_scripted_mobilenet_v2(self):
        path = self.tmp / "mobilenet_v2.pt"
        python("import torch, torchvision; torch.manual_seed(0); "
               "m = torchvision.models.mobilenet_v2(num_classes=10).eval(); "
               f"torch.jit.script(m).save('{path}')", self.tmp)
        # No declared shape: inferred from the first convolution (test_user_inputs.py has the other layer kinds).
        inferred = run_lite_json("profile", path, "--warmup", "1", "--iterations", "1")
        self.assertEqual(inferred["result"]["inputs"][0]["shape"], [1, 3, 224, 224])
        self.assertIn("inferred from features.0.0 (Conv2d with 3 input channels)", " ".join(inferred["result"]["notes"]))
        doc = run_lite_json("profile", path, "--input", "1x3x96x96", "--warmup", "2", "--iterations", "5")
        res = doc["result"]
        self.assertEqual(res["inputs"][0]["shape"], [1, 3, 96, 96])
        self.assertEqual(len([l for l in res["layers"] if "conv" in l["op"]]), 52)
        self.assertGreater(res["model"]["total_macs"], 50_000_000)

    def test_convnext_macs_equal_the_layers_own_count(self):
        # ConvNeXt's `layer_scale * block(x)`: from a method's second call on, this libtorch records the block's
        # ops with their inputs one stack slot too low, which once read the depthwise conv as [C, 1, 1] x
        # [1, C, H, W] and counted a sixth of the model's MACs.
        path, count = self.tmp / "convnext.pt", self.tmp / "macs.json"
        python("import json, torch\n"
               "from torchvision.models.convnext import CNBlockConfig, ConvNeXt\n"
               "torch.manual_seed(0)\n"
               "m = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10).eval()\n"
               "macs = []\n"
               "def hook(layer, inputs, out):\n"
               "    macs.append(out.numel() * layer.weight[0].numel())\n"  # conv: Cin/g*k*k; linear: in
               "hooks = [layer.register_forward_hook(hook) for layer in m.modules()\n"
               "         if isinstance(layer, (torch.nn.Conv2d, torch.nn.Linear))]\n"
               "m(torch.rand(1, 3, 32, 32))\n"
               "for h in hooks: h.remove()\n"
               f"json.dump(sum(macs), open('{count}', 'w'))\n"
               f"torch.jit.script(m).save('{path}')\n", self.tmp)
        doc = run_lite_json("profile", path, "--input", "1x3x32x32", "--warmup", "2", "--iterations", "5")
        self.assertEqual(doc["result"]["model"]["total_macs"], json.loads(count.read_text()))

    def test_convs_in_a_loop_of_method_calls_count_once_per_trip(self):
        # FeaturePyramidNetwork's pattern: the interpreter hands the observer its whole stack, the caller's live
        # values below the conv's own, which once read every conv of a scripted FPN as 0 MACs (1.82 of 4.37 G).
        fixture = pathlib.Path(__file__).with_name("loop_macs_fixture.py")
        subprocess.run([PYTHON, str(fixture), str(self.tmp)], check=True, capture_output=True, text=True)
        expected = 4 * 16 * 16 * 3 * 9 + 3 * (4 * 16 * 16 * 4 * 9)  # stem + one trip per block, hand-counted
        for name in ["loop_script.pt", "loop_trace.pt"]:
            with self.subTest(name):
                doc = run_lite_json("profile", self.tmp / name, "--input", "1x3x16x16", "--warmup", "1",
                                    "--iterations", "1")
                self.assertEqual(doc["result"]["model"]["total_macs"], expected)
                self.assertEqual([l["macs"] for l in doc["result"]["layers"]], [27648, 36864, 36864, 36864])


class ProfileBadInput(LiteTestCase):
    """Each a one-line error naming the file or flag and the problem, exit 2, nothing written."""

    def test_missing_file(self):
        self.assert_rejected("profile", self.tmp / "nope.pt", needles=["nope.pt", "no such file"])

    def test_not_an_archive(self):
        f = self.tmp / "notes.pt"
        f.write_text("this is not a model")
        self.assert_rejected("profile", f, needles=[str(f), "not a TorchScript archive"])

    def test_truncated_archive(self):
        f = self.tmp / "cut.pt"
        data = MODEL.read_bytes()
        f.write_bytes(data[: len(data) // 3])
        self.assert_rejected("profile", f, needles=[str(f), "truncated"])

    def test_state_dict(self):
        python("import torch; m = torch.nn.Linear(4, 2); torch.save(m.state_dict(), 'sd.pt')", self.tmp)
        self.assert_rejected("profile", self.tmp / "sd.pt", needles=["sd.pt", "state_dict", "torch.jit.save"])

    def test_pickled_module(self):
        python("import torch; torch.save(torch.nn.Sequential(torch.nn.Linear(4, 2)), 'mod.pt')", self.tmp)
        self.assert_rejected("profile", self.tmp / "mod.pt", needles=["mod.pt", "pickled nn.Module", "script or trace"])

    def test_optimize_for_inference_file(self):
        python(f"import torch; m = torch.jit.load('{MODEL}').eval(); "
               "torch.jit.optimize_for_inference(torch.jit.freeze(m)).save('opt.pt')", self.tmp)
        self.assert_rejected("profile", self.tmp / "opt.pt",
                             needles=["opt.pt", "optimize_for_inference", "torch.jit.freeze"])

    def test_wrong_input_shape(self):
        self.assert_rejected("profile", MODEL, "--input", "1x3x28x28", "--iterations", "3",
                             needles=[str(MODEL), "forward failed on input 1x3x28x28", "channels"])

    def test_bad_input_spec(self):
        self.assert_rejected("profile", MODEL, "--input", "1x3xfoo", needles=["--input", "1x3xfoo"])

    def test_bad_input_file(self):
        garbage = self.tmp / "x.bin"
        garbage.write_bytes(b"\x00\x01garbage")
        self.assert_rejected("profile", MODEL, "--input-file", garbage, "--iterations", "3", needles=[str(garbage)])
        self.assert_rejected("profile", MODEL, "--input-file", self.tmp / "none.pt", "--iterations", "3",
                             needles=["none.pt"])

    def test_bad_eval_file(self):
        f = self.tmp / "eval.bin"
        f.write_bytes(b"\x00\x01garbage")
        self.assert_rejected("profile", MODEL, "--eval", f, "--iterations", "3",
                             needles=[str(f), "unknown data format"])

    def test_bad_numbers(self):
        cases = [
            (["--batch", "-1"], "--batch", "at least 1"),
            (["--batch", "0"], "--batch", "at least 1"),
            (["--threads", "-1"], "--threads", "between 0 (the default) and"),
            (["--threads", "100000"], "--threads", "between 0 (the default) and"),
            (["--ops", "--top", "0"], "--top", "at least 1"),
            (["--ops", "--op-iterations", "0"], "--op-iterations", "between 1 and 10000"),
            (["--eval", EVAL, "--eval-batch", "0"], "--eval-batch", "at least 1"),
            (["--warmup", "-1"], "--warmup", "at least 0"),
            (["--iterations", "-1"], "--iterations", "between 1 and"),
            (["--iterations", "0"], "--iterations", "between 1 and"),
            (["--duration", "0"], "--duration", "more than 0"),
            (["--duration", "inf"], "--duration", "finite"),
            (["--duration", "nan"], "--duration", "finite"),
            (["--qps", "0", "--requests", "10"], "--qps", "above 0"),
            (["--qps", "inf", "--requests", "10"], "--qps", "finite"),
            (["--input", "1x1x99999999999999999999x28"], "--input", "out of range"),
            (["--input", "1x1x100000x100000"], "--input", "needs", "memory"),
            (["--input", "1x1x28x28", "--batch", "99999999999999"], "--batch", "needs", "memory"),
        ]
        for args, *needles in cases:
            with self.subTest(args=args):
                self.assert_rejected("profile", MODEL, *args, needles=needles)

    def test_flag_combinations(self):
        self.assert_rejected("profile", MODEL, "--chrome-trace", self.tmp / "t.json", needles=["--chrome-trace: needs", "--ops"])
        self.assert_rejected("profile", MODEL, "--qps", "100", needles=["--requests"])
        self.assert_rejected("profile", MODEL, "--requests", "10", needles=["--requests: needs", "--qps"])
        self.assert_rejected("profile", MODEL, "--labels", EVAL, needles=["--labels: gives the labels of the evaluation data", "--eval"])
        self.assert_rejected("profile", MODEL, "--qengine", "fbgem",
                             needles=["unknown quantized engine 'fbgem'", "onednn"])
        self.assert_rejected("profile", MODEL, MODEL, MODEL, needles=["lite profile", "run 'lite profile --help'"])
        self.assert_rejected("profile", MODEL, "--iterations", "5", "--duration", "1",
                             needles=["--iterations: cannot be combined with --duration"])

    def test_trace_into_a_missing_folder_fails_before_profiling(self):
        self.assert_rejected("profile", MODEL, "--ops", "--chrome-trace", self.tmp / "no" / "t.json", *QUICK,
                             needles=["t.json", "folder does not exist", "--chrome-trace"])

    def test_trace_may_not_overwrite_an_input(self):
        model = self.tmp / "m.pt"
        shutil.copy(MODEL, model)
        self.assert_rejected("profile", model, "--ops", "--chrome-trace", model, *QUICK,
                             needles=["--chrome-trace", "m.pt", "would overwrite the input"], watch=[self.tmp])

    def test_output_format_flags(self):
        self.assert_rejected("profile", MODEL, "--output-format", "jsn",
                             needles=["--output-format", "did you mean 'json'"])
        self.assert_rejected("profile", MODEL, "--json", "--csv", needles=["--json", "--csv", "choose one"])


class ProfileDocumentation(LiteTestCase):
    def test_verb_page_documents_every_flag(self):
        self.assert_verb_page_documents_every_flag("profile")


if __name__ == "__main__":
    unittest.main()
