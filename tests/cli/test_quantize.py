"""End-to-end tests of `lite quantize`: every mode on the bundled CNN and on torchvision resnet18 and
mobilenet_v2 (random weights), artifacts loaded back with stock PyTorch, accuracy on the full
Fashion-MNIST test set, the gates (speed, tolerance), calibration reuse, and bad input.

Runs under Debian's /usr/bin/python3, which has torch: artifacts are loaded in this process.
Latency is measured with few iterations (--iterations 3) to keep the suite short; the benchmark
(scripts/bench/quantize_vs_pytorch) measures properly.
"""
import json
import math
import pathlib
import shutil
import tempfile
import unittest

import torch

from litetest import DATA, LiteTestCase, run_lite, run_lite_on_terminal

FMNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")
MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
# Three timed calls: a tiny model's float median can be inflated by a busy CI runner into an "implausible" speedup
# that fails the speed gate; the tests that use FAST judge other things, so they accept such a timing.
FAST = ["--batch", "1", "--iterations", "3", "--warmup", "1", "--allow-noisy"]

# Least top-1 agreement with the float CNN on 200 evaluation samples, per mode. A mode added to the
# table without an entry here fails test_every_mode_on_the_cnn until its tolerance is stated.
CNN_AGREEMENT = {"static": 0.97, "dynamic": 0.99, "fp16": 0.995, "bf16": 0.98, "weight-int8": 0.99,
                 "weight-int4": 0.95}
# Largest relative output error ||q - f|| / ||f|| on the random-weight torchvision models, per mode
# (measured: static 0.05/0.015, dynamic 0.009/0.010, fp16 0.001/0.0003, bf16 0.013/0.004,
# weight-int8 0.030/0.009, weight-int4 0.42/0.17 for resnet18/mobilenet_v2; a value quantized with a
# wrong scale gives 0.5 and more).
TORCHVISION_REL_ERROR = {"static": 0.15, "dynamic": 0.05, "fp16": 0.01, "bf16": 0.06, "weight-int8": 0.1,
                         "weight-int4": 0.8}

torch.backends.quantized.engine = "onednn"


def lite_json(*args):
    """Runs lite quantize ... --json; returns (exit code, parsed JSON or None, stderr)."""
    r = run_lite("quantize", *map(str, args), "--json")
    doc = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, doc, r.stderr


def provenance(path):
    extra = {"lite.json": ""}
    module = torch.jit.load(str(path), _extra_files=extra)
    return module, json.loads(extra["lite.json"])


def chosen(doc):
    return next(c for c in doc["result"]["candidates"] if c["chosen"])


def emulated_here(candidate):
    """auto leaves bf16 aside on a CPU that runs it emulated (issue 42): not built, with the reason."""
    return candidate["mode"] == "bf16" and "runs emulated" in (candidate.get("problem") or "")


def modes_from_table():
    """The modes lite plans for the CNN: every entry of its mode table (auto's dry run lists them, bf16 among the
    candidates auto did not try when this CPU emulates it)."""
    code, doc, err = lite_json(MODEL, "--calib", EVAL, "--dry-run")
    assert code == 0, err
    return [p["mode"] for p in doc["result"]["plans"]] + [c["mode"] for c in doc["result"]["candidates"]
                                                          if emulated_here(c)]


class QuantizeCNN(LiteTestCase):
    """The bundled Fashion-MNIST CNN."""

    @classmethod
    def setUpClass(cls):
        data = torch.load(str(EVAL))
        cls.x, cls.y = data["x"][:200], data["y"][:200]
        with torch.no_grad():
            cls.reference = torch.jit.load(str(MODEL)).eval()(cls.x)

    def test_every_mode_on_the_cnn(self):
        modes = modes_from_table()
        self.assertEqual(set(modes), set(CNN_AGREEMENT), "every mode of the table needs a stated tolerance")
        for mode in modes:
            with self.subTest(mode=mode):
                out = self.tmp / f"cnn.{mode}.pt"
                code, doc, err = lite_json(MODEL, "--mode", mode, "--calib", EVAL, "--calib-samples", 64, "--eval",
                                           EVAL, "-o", out, "--allow-slower", *FAST)
                self.assertEqual(code, 0, err)
                self.assertEqual(doc["result"]["mode"], mode)
                self.assertTrue(out.exists())
                module, info = provenance(out)
                with torch.no_grad():
                    y = module(self.x)
                self.assertEqual(tuple(y.shape), (200, 10))
                self.assertEqual(y.dtype, torch.float32)
                agreement = (y.argmax(1) == self.reference.argmax(1)).float().mean().item()
                self.assertGreaterEqual(agreement, CNN_AGREEMENT[mode])
                # Provenance: mode, engine, per-layer scheme, figures, calibration for static.
                details = info["details"]
                self.assertEqual(info["transform"], "quantize")
                self.assertEqual(details["mode"], mode)
                self.assertEqual(details["engine"], "onednn")
                self.assertIn("torch.backends.quantized.engine = 'onednn'", details["consumer_engine_setting"])
                self.assertEqual([l["name"] for l in details["layers"]],
                                 ["features.0", "features.4", "features.8", "classifier.1", "classifier.4"])
                self.assertTrue(any(l["quantized"] for l in details["layers"]))
                for l in details["layers"]:
                    self.assertTrue(l["scheme"])
                figures = info["figures"]
                self.assertEqual(figures["size_bytes"]["before"], MODEL.stat().st_size)
                self.assertLess(figures["size_bytes"]["after"], MODEL.stat().st_size)
                self.assertNotIn("latency_ms", figures)  # timings vary: the report has them, the artifact not
                self.assertNotIn("created_utc", info)
                self.assertEqual(figures["quality"]["metric"], "top-1 accuracy")
                if mode == "static":
                    self.assertEqual(details["calibration"]["method"], "mse")
                    self.assertEqual(details["calibration"]["samples"], 64)
                    self.assertEqual(details["scheme"]["quantized_ops"], 4)
                # The report's own figures agree with what the artifact does here.
                self.assertEqual(doc["result"]["output_bytes"], out.stat().st_size)

    def test_static_keeps_fashion_mnist_accuracy_within_0_3_points(self):
        images = FMNIST / "t10k-images-idx3-ubyte.gz"
        labels = FMNIST / "t10k-labels-idx1-ubyte.gz"
        if not images.exists():
            self.skipTest(f"{images} not installed (dataset-fashion-mnist)")
        out = self.tmp / "cnn.int8.pt"
        code, doc, err = lite_json(MODEL, "--mode", "static", "--calib", EVAL, "--eval", images, "--labels", labels,
                                   "-o", out, *FAST)
        self.assertIn(code, (0, 1), err)
        quality = chosen(doc)["quality"]
        self.assertEqual(quality["samples"], 10000)
        self.assertEqual(quality["metric"], "top-1 accuracy")
        self.assertAlmostEqual(quality["float_percent"], 92.34, places=2)
        self.assertLessEqual(quality["drop_points"], 0.3)
        # Checked again outside lite, with stock PyTorch on the artifact.
        import gzip
        import struct

        def idx(path):
            raw = gzip.open(path, "rb").read()
            ndim = raw[3]
            dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
            return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)

        x = idx(images).float().div_(255).unsqueeze(1)
        y = idx(labels).long()
        quantized = torch.jit.load(str(out))
        with torch.no_grad():
            acc = sum((quantized(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item()
                      for i in range(0, 10000, 1000)) / 100.0
        self.assertGreaterEqual(acc, 92.34 - 0.3)
        self.assertAlmostEqual(acc, quality["percent"], places=2)

    def test_auto_measures_every_mode_and_keeps_the_fastest_that_fits(self):
        out = self.tmp / "auto.pt"
        code, doc, err = lite_json(MODEL, "--calib", EVAL, "--calib-samples", 64, "--eval", EVAL, "-o", out,
                                   "--batch", "1", "--iterations", "30", "--warmup", "5")
        result = doc["result"]
        tried = {c["mode"] for c in result["candidates"]}
        self.assertEqual(tried, set(CNN_AGREEMENT))
        self.assertTrue(all(c["built"] or emulated_here(c) for c in result["candidates"]), result["candidates"])
        # Which mode wins depends on the CPU (static int8 on the machines measured so far): the test checks the
        # rule against the measured numbers, not the outcome of one machine.
        best = chosen(doc)
        self.assertEqual(result["mode"], best["mode"])
        self.assertEqual(code, 1 if result["gates"]["failed"] else 0, err)
        self.assertEqual("speed" in result["gates"]["failed"], best["speed"]["slower"])
        self.assertEqual("tolerance" in result["gates"]["failed"], not result["tolerance_met"])
        # The rule: among candidates that meet the tolerance, those not slower than frozen float first, then the
        # fastest (geometric mean of the ratios at the batch sizes every candidate was timed at). Candidates are
        # evaluated fastest first, so one not evaluated could not have been chosen: slower, or no faster than it.
        common = min(len(c["speed"]["ratio"]) for c in result["candidates"] if c["built"])
        score = lambda c: math.exp(sum(math.log(x) for x in c["speed"]["ratio"][:common]) / common)
        for c in result["candidates"]:
            if c["meets_tolerance"]:
                self.assertLessEqual(best["speed"]["slower"], c["speed"]["slower"])
                if c["speed"]["slower"] == best["speed"]["slower"]:
                    self.assertLessEqual(score(best), score(c) * 1.0001)
            if not c["evaluated"]:
                self.assertFalse(c["meets_tolerance"])
                self.assertTrue(c["speed"]["slower"] >= best["speed"]["slower"], c)
                if c["speed"]["slower"] == best["speed"]["slower"]:
                    self.assertGreaterEqual(score(c), score(best) * 0.9999, c)
        self.assertTrue(out.exists())

    def test_auto_leaves_emulated_bf16_aside_and_an_explicit_mode_still_tries_it(self):
        """Under oneDNN's AVX2 kernels (ONEDNN_MAX_CPU_ISA=AVX2, what an AVX2-only CPU dispatches to) bf16 has no
        native kernels: auto names it not tried, with the ISA, and builds nothing for it. --mode bf16 still tries:
        oneDNN 2.x there has no bf16 convolution at all for this CNN (on a CPU with AVX-512 under the variable), which
        is refused in one line naming the missing kernels and the variable, not oneDNN's primitive message alone."""
        avx2 = {"ONEDNN_MAX_CPU_ISA": "AVX2"}
        r = run_lite("quantize", MODEL, "--calib", EVAL, "--dry-run", "--json", env=avx2)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)["result"]
        (bf16,) = [c for c in doc["candidates"] if c["mode"] == "bf16"]
        self.assertIn("runs emulated here (oneDNN ISA avx2", bf16["problem"])
        self.assertNotIn("bf16", [p["mode"] for p in doc["plans"]])
        out = self.tmp / "bf16_avx2.pt"
        r = run_lite("quantize", MODEL, "--mode", "bf16", "-o", out, "--allow-slower", *FAST, env=avx2)
        self.assert_bf16_written_or_refused_for_kernels(r, out)

    def test_auto_judges_fastest_first_on_every_sample_it_can_afford(self):
        # The CNN costs microseconds a sample: every evaluated candidate is judged on all 1000 samples (or stopped
        # early), with a 95% interval around its drop; --eval-samples 100 judges on the first 100 and says so.
        code, doc, err = lite_json(MODEL, "--calib", EVAL, "--calib-samples", 64, "--eval", EVAL, "-o",
                                   self.tmp / "all.pt", *FAST)
        self.assertIn(code, (0, 1), err)
        evaluated = [c for c in doc["result"]["candidates"] if c["built"] and c["evaluated"]]
        self.assertTrue(evaluated)
        for c in evaluated:
            q = c["quality"]
            self.assertEqual(q["available_samples"], 1000)
            self.assertEqual(q["samples"] == 1000, not q["stopped_early"], q)
            low, high = q["drop_interval_95"]
            self.assertLessEqual(low, q["drop_points"] + 1e-9)
            self.assertGreaterEqual(high, q["drop_points"] - 1e-9)
        code, doc, err = lite_json(MODEL, "--calib", EVAL, "--calib-samples", 64, "--eval", EVAL, "--eval-samples",
                                   100, "-o", self.tmp / "some.pt", *FAST)
        self.assertIn(code, (0, 1), err)
        evaluated = [c for c in doc["result"]["candidates"] if c["built"] and c["evaluated"]]
        self.assertTrue(evaluated)
        for c in evaluated:
            self.assertLessEqual(c["quality"]["samples"], 100)
            self.assertEqual(c["quality"]["available_samples"], 1000)
        self.assertTrue(any("judged on the first 100 of the 1000 samples" in n for n in doc["result"]["notes"]),
                        doc["result"]["notes"])
        # Fewer than the first chunk's 16 samples, in an explicit mode too.
        code, doc, err = lite_json(MODEL, "--mode", "fp16", "--eval", EVAL, "--eval-samples", 5, "-o",
                                   self.tmp / "five.pt", "--allow-slower", *FAST)
        self.assertIn(code, (0, 1), err)
        self.assertEqual(chosen(doc)["quality"]["samples"], 5)
        self.assert_rejected("quantize", MODEL, "--eval", EVAL, "--eval-samples", 0, needles=["--eval-samples"])

    def test_the_plan_and_its_time_are_announced_on_a_terminal_only(self):
        r = run_lite_on_terminal("quantize", MODEL, "--calib", EVAL, "--calib-samples", 64, "--eval", EVAL, "-o",
                                 self.tmp / "plan.pt", *FAST)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertRegex(r.stderr, r"lite quantize: 6 modes to build and time at batch 1, then quality judged on "
                                   r"1000 samples, fastest mode first; about \d+ s plus the builds")
        piped = run_lite("quantize", MODEL, "--calib", EVAL, "--calib-samples", 64, "--eval", EVAL, "-o",
                         self.tmp / "piped.pt", *FAST)
        self.assertNotIn("to build and time", piped.stderr + piped.stdout)

    def test_default_output_name_and_calibration_json_round_trip(self):
        model = self.tmp / "cnn.pt"
        shutil.copy(MODEL, model)
        code, doc, err = lite_json(model, "--mode", "static", "--calib", EVAL, "--calib-samples", 64, *FAST)
        self.assertIn(code, (0, 1), err)
        artifact, stats = self.tmp / "cnn.int8.pt", self.tmp / "cnn.int8.calib.json"
        self.assertTrue(artifact.exists())
        calib = json.loads(stats.read_text())
        self.assertEqual(calib["format"], "lite-calibration")
        self.assertEqual(calib["method"], "mse")
        self.assertEqual(calib["samples"], 64)
        self.assertGreaterEqual(len(calib["values"]), 5)
        for v in calib["values"].values():
            self.assertLessEqual(v["range"][0], v["range"][1])
            self.assertGreater(v["scale"], 0)
        # Passing it back skips calibration (no --calib at all) and gives the same model.
        again = self.tmp / "again.pt"
        code, doc, err = lite_json(model, "--mode", "static", "--calib-stats", stats, "-o", again, "--eval", EVAL,
                                   *FAST)
        self.assertIn(code, (0, 1), err)
        self.assertTrue(doc["result"]["calibration"]["reused"])
        with torch.no_grad():
            a = torch.jit.load(str(artifact))(self.x)
            b = torch.jit.load(str(again))(self.x)
        self.assertTrue(torch.equal(a, b))

    def test_tolerance_search_keeps_sensitive_layers_float(self):
        # weight-int4 loses 0.4 points on the evaluation split; --tolerance 0 makes lite keep the most
        # sensitive layers float until nothing is lost.
        out = self.tmp / "tol.pt"
        code, doc, err = lite_json(MODEL, "--mode", "weight-int4", "--eval", EVAL, "--tolerance", 0, "-o", out,
                                   "--allow-slower", *FAST)
        self.assertEqual(code, 0, err)
        result, c = doc["result"], chosen(doc)
        self.assertTrue(result["tolerance_met"])
        search = c["tolerance_search"]
        self.assertEqual(search["steps"][0]["float_layers"], [])
        self.assertGreater(search["steps"][0]["drop_points"], 0)
        self.assertTrue(search["met"])
        self.assertLessEqual(c["quality"]["drop_points"], 0)
        self.assertGreaterEqual(len(search["float_layers"]), 1)
        _, info = provenance(out)
        kept = {l["name"] for l in info["details"]["layers"] if "sensitive" in l["reason"]}
        self.assertEqual(kept, set(search["float_layers"]))
        self.assertIn("tolerance_search", info["details"])

    def test_tolerance_not_met_writes_the_best_effort_and_exits_1(self):
        # Only two layers may be quantized and neither alone keeps the accuracy: the search cannot fit.
        out = self.tmp / "best.pt"
        r = run_lite("quantize", MODEL, "--mode", "weight-int4", "--only", "features.[04]", "--eval", EVAL,
                     "--tolerance", 0, "-o", out, "--allow-slower", *FAST)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(out.exists())
        self.assertIn("tolerance search", r.stdout)
        self.assertIn("--tolerance 0.00 points", r.stdout)

    def test_skip_and_only_choose_layers(self):
        out = self.tmp / "skip.pt"
        code, doc, err = lite_json(MODEL, "--mode", "static", "--calib", EVAL, "--calib-samples", 32, "--skip",
                                   "features.*", "-o", out, "--allow-slower", *FAST)
        self.assertEqual(code, 0, err)
        _, info = provenance(out)
        layers = {l["name"]: l for l in info["details"]["layers"]}
        for name in ("features.0", "features.4", "features.8"):
            self.assertFalse(layers[name]["quantized"])
            self.assertEqual(layers[name]["reason"], "skip features.*")  # provenance names the option by its key
        self.assertTrue(layers["classifier.1"]["quantized"])
        out = self.tmp / "only.pt"
        code, doc, err = lite_json(MODEL, "--mode", "weight-int8", "--only", "classifier.1", "-o", out,
                                   "--allow-slower", *FAST)
        self.assertEqual(code, 0, err)
        _, info = provenance(out)
        self.assertEqual([l["name"] for l in info["details"]["layers"] if l["quantized"]], ["classifier.1"])

    def test_slower_than_frozen_float_exits_1_unless_allowed(self):
        # fp16 keeps float32 compute on plain aten convolutions: slower than the frozen float model on the
        # machines measured so far, but not necessarily on every CPU. The exit code must follow the measured
        # speed gate either way, and the artifact is written whatever the gate says.
        out = self.tmp / "fp16.pt"
        # --allow-noisy: a timing on a busy machine fails the same gate, and this test is about slower only.
        code, doc, err = lite_json(MODEL, "--mode", "fp16", "-o", out, "--batch", "1", "--iterations", "40",
                                   "--warmup", "3", "--allow-noisy")
        slower = chosen(doc)["speed"]["slower"]
        self.assertEqual(code, 1 if slower else 0, err)
        self.assertEqual(doc["result"]["gates"]["failed"], ["speed"] if slower else [])
        self.assertTrue(out.exists(), "a failed gate still writes the artifact")
        # The text run measures again, and on a busy machine may judge differently from the JSON run: its message
        # must agree with its own exit code, not with the first run's.
        text = run_lite("quantize", MODEL, "--mode", "fp16", "-o", self.tmp / "fp16t.pt", "--batch", "1",
                        "--iterations", "40", "--warmup", "3", "--allow-noisy")
        self.assertIn(text.returncode, (0, 1), text.stderr)
        if text.returncode == 1:
            self.assertIn("slower than the frozen float model", text.stdout)
        else:
            self.assertNotIn("slower than the frozen float model", text.stdout)
        r = run_lite("quantize", MODEL, "--mode", "fp16", "-o", self.tmp / "fp16b.pt", "--batch", "1", "--iterations",
                     "40", "--warmup", "3", "--allow-slower", "--allow-noisy")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_dry_run_prints_the_plan_and_writes_nothing(self):
        model = self.tmp / "cnn.pt"
        shutil.copy(MODEL, model)
        before = sorted(p.name for p in self.tmp.iterdir())
        r = run_lite("quantize", model, "--mode", "weight-int4", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("features.0", "features.4", "features.8", "classifier.1", "classifier.4"):
            self.assertIn(name, r.stdout)
        self.assertIn("int4 weights", r.stdout)
        self.assertIn("nothing was calibrated, measured or written", r.stdout)
        code, doc, err = lite_json(model, "--mode", "static", "--calib", EVAL, "--dry-run")
        self.assertEqual(code, 0, err)
        plan = doc["result"]["plans"][0]
        self.assertEqual(plan["mode"], "static")
        self.assertLess(plan["expected_file_bytes"], 0.3 * model.stat().st_size)
        self.assert_no_new_files(self.tmp, before)

    def test_same_command_same_artifact_bytes(self):
        """Static quantization with calibration, run twice: the artifacts are bit-identical."""
        out = self.tmp / "twice.pt"
        self.assert_same_artifact_twice("quantize", MODEL, "--mode", "static", "--calib", EVAL, "--calib-samples", 64,
                                        "-o", out, "--allow-slower", *FAST, output=out)
        torch.jit.load(str(out))

    def test_qnnpack_engine(self):
        out = self.tmp / "qnnpack.pt"
        code, doc, err = lite_json(MODEL, "--mode", "static", "--qengine", "qnnpack", "--calib", EVAL,
                                   "--calib-samples", 32, "-o", out, "--allow-slower", *FAST)
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["result"]["engine"], "qnnpack")
        try:
            torch.backends.quantized.engine = "qnnpack"
            module, info = provenance(out)
            self.assertEqual(info["details"]["engine"], "qnnpack")
            with torch.no_grad():
                y = module(self.x)
            self.assertGreaterEqual((y.argmax(1) == self.reference.argmax(1)).float().mean().item(), 0.97)
        finally:
            torch.backends.quantized.engine = "onednn"


class QuantizeBadInput(LiteTestCase):
    """Each a one-line error naming the file and the problem, exit 2, nothing written."""

    def setUp(self):
        super().setUp()
        self.model = self.tmp / "cnn.pt"
        shutil.copy(MODEL, self.model)

    def test_calibration_data_with_nan(self):
        x = torch.rand(10, 1, 28, 28)
        x[3, 0, 5, 5] = float("nan")
        torch.save(x, str(self.tmp / "nan.pt"))
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib", self.tmp / "nan.pt",
                             needles=["nan.pt", "NaN"])

    def test_calibration_data_of_the_wrong_shape(self):
        torch.save(torch.rand(10, 3, 28, 28), str(self.tmp / "rgb.pt"))
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib", self.tmp / "rgb.pt",
                             needles=["rgb.pt", "do not fit", "[10, 3, 28, 28]"])

    def test_empty_calibration_file(self):
        (self.tmp / "empty.pt").write_bytes(b"")
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib", self.tmp / "empty.pt",
                             needles=["empty.pt", "empty"])
        torch.save(torch.rand(0, 1, 28, 28), str(self.tmp / "none.pt"))
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib", self.tmp / "none.pt",
                             needles=["none.pt", "no samples"])

    def test_model_with_no_quantizable_layers(self):
        plain = torch.jit.script(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Flatten()))
        torch.jit.save(plain, str(self.tmp / "plain.pt"))
        for mode in ("auto", "static", "dynamic", "fp16"):
            with self.subTest(mode=mode):
                self.assert_rejected("quantize", self.tmp / "plain.pt", "--mode", mode, "--calib", EVAL,
                                     needles=["plain.pt", "no quantizable layers"])

    def test_unknown_mode_suggests_the_closest(self):
        self.assert_rejected("quantize", self.model, "--mode", "statc",
                             needles=["unknown mode 'statc'", "did you mean 'static'"])
        self.assert_rejected("quantize", self.model, "--calib-method", "entropi", needles=["did you mean 'entropy'"])

    def test_output_path_equal_to_the_input(self):
        self.assert_rejected("quantize", self.model, "-o", self.model, needles=["cnn.pt", "overwrite the input"])
        self.assert_rejected("quantize", self.model, "-o", self.tmp / "." / "cnn.pt", "--mode", "fp16",
                             needles=["overwrite the input"])

    def test_outputs_may_not_overwrite_any_input(self):
        calib = self.tmp / "calib.pt"
        shutil.copy(EVAL, calib)
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib", calib, "-o", calib,
                             needles=["-o", "calib.pt", "would overwrite the input"], watch=[self.tmp])
        self.assert_rejected("quantize", self.model, "--mode", "fp16", "--eval", calib, "-o", calib,
                             needles=["-o", "would overwrite the input"], watch=[self.tmp])
        # the calibration JSON written beside the artifact may not replace a --calib-stats input
        stats = self.tmp / "x.calib.json"
        stats.write_text("{}")
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib-stats", stats,
                             "-o", self.tmp / "x.pt", needles=["x.calib.json", "would overwrite the input"],
                             watch=[self.tmp])

    def test_static_without_calibration_data(self):
        self.assert_rejected("quantize", self.model, "--mode", "static", needles=["needs calibration data", "--calib"])

    def test_bad_numbers(self):
        self.assert_rejected("quantize", self.model, "--tolerance", "-1", needles=["--tolerance: must be between 0 and 100"])
        self.assert_rejected("quantize", self.model, "--tolerance", "nan", needles=["--tolerance: must be a finite"])
        self.assert_rejected("quantize", self.model, "--batch", "1,0", needles=["--batch: must be at least 1"])
        self.assert_rejected("quantize", self.model, "--calib-samples", "0",
                             needles=["--calib-samples: must be at least 1"])
        self.assert_rejected("quantize", self.model, "--qengine", "fbgemm",
                             needles=["unknown quantized engine 'fbgemm'"])

    def test_a_skip_pattern_that_matches_nothing(self):
        self.assert_rejected("quantize", self.model, "--skip", "decoder.*",
                             needles=["--skip: 'decoder.*' matches no layer", "features.0"])

    def test_bad_timing_and_evaluation_numbers(self):
        cases = [
            (["--eval-batch", "0"], "--eval-batch", "at least 1"),
            (["--warmup", "-1"], "--warmup", "at least 0"),
            (["--iterations", "-1"], "--iterations", "between 1 and"),
            (["--iterations", "0"], "--iterations", "between 1 and"),
            (["--duration", "0"], "--duration", "more than 0"),
            (["--duration", "inf"], "--duration", "more than 0"),
            (["--iterations", "5", "--duration", "1"], "--iterations: cannot be combined with --duration"),
            (["--threads", "-1"], "--threads", "between 0 (the default) and"),
            (["--threads", "100000"], "--threads", "between 0 (the default) and"),
        ]
        for args, *needles in cases:
            with self.subTest(args=args):
                self.assert_rejected("quantize", self.model, "--mode", "fp16", *args, needles=needles)

    def test_flag_combinations_and_patterns(self):
        self.assert_rejected("quantize", self.model, "--labels", EVAL, needles=["--labels", "--eval"])
        self.assert_rejected("quantize", self.model, "--only", "decoder.*",
                             needles=["--only: 'decoder.*' matches no layer", "features.0"])
        self.assert_rejected("quantize", self.model, "--input", "1x3xfoo", needles=["--input", "1x3xfoo"])
        self.assert_rejected("quantize", self.model, "--json", "--csv", needles=["--json", "--csv", "choose one"])
        self.assert_rejected("quantize", self.model, "--output-format", "jsn",
                             needles=["--output-format", "did you mean 'json'"])

    def test_bad_files(self):
        garbage = self.tmp / "garbage.json"
        garbage.write_text("{ not json")
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib-stats", garbage,
                             needles=["garbage.json", "not valid JSON"])
        other = self.tmp / "other.json"
        other.write_text(json.dumps({"format": "something else"}))
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib-stats", other,
                             needles=["other.json", "not a lite calibration file"])
        self.assert_rejected("quantize", self.model, "--mode", "static", "--calib-stats", self.tmp / "none.json",
                             needles=["none.json", "cannot open"])
        bad_eval = self.tmp / "eval.bin"
        bad_eval.write_bytes(b"\x00\x01garbage")
        self.assert_rejected("quantize", self.model, "--mode", "fp16", "--eval", bad_eval,
                             needles=["eval.bin", "unknown data format"])
        self.assert_rejected("quantize", self.tmp / "nope.pt", needles=["nope.pt", "no such file"])

    def test_output_into_a_missing_folder(self):
        self.assert_rejected("quantize", self.model, "--mode", "fp16", "-o", self.tmp / "no" / "cnn.fp16.pt",
                             needles=["cnn.fp16.pt", "folder does not exist"])


class QuantizeJudging(LiteTestCase):
    """A model whose top-1 is a coin toss under any quantization: one 512->64 linear layer whose first two rows
    differ by 1e-6, every other row far below them. Auto stops judging each candidate after its first chunk, and
    an explicit mode is judged on every sample."""

    @classmethod
    def setUpClass(cls):
        cls.dir = pathlib.Path(tempfile.mkdtemp(prefix="lite_judging_"))
        torch.manual_seed(0)
        layer = torch.nn.Linear(512, 64)
        with torch.no_grad():
            base = torch.randn(512) * 0.05
            layer.weight.copy_(torch.randn(64, 512) * 0.05)
            layer.weight[0] = base
            layer.weight[1] = base + torch.randn(512) * 1e-6
            layer.bias.fill_(-100.0)
            layer.bias[:2] = 0.0
        torch.jit.save(torch.jit.script(torch.nn.Sequential(layer).eval()), str(cls.dir / "tied.pt"))
        torch.save(torch.randn(256, 512), str(cls.dir / "eval.pt"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_auto_stops_judging_a_candidate_that_cannot_fit(self):
        code, doc, err = lite_json(self.dir / "tied.pt", "--eval", self.dir / "eval.pt", "--calib",
                                   self.dir / "eval.pt", "-o", self.tmp / "tied.q.pt", *FAST)
        self.assertEqual(code, 1, err)  # no candidate keeps the top-1: the tolerance gate fails
        result = doc["result"]
        self.assertIn("tolerance", result["gates"]["failed"])
        evaluated = [c for c in result["candidates"] if c["built"] and c["evaluated"]]
        self.assertGreaterEqual(len(evaluated), 2, result["candidates"])
        stopped = [c for c in evaluated if c["quality"]["stopped_early"]]
        self.assertTrue(stopped, [c["quality"] for c in evaluated])
        for c in stopped:
            self.assertLess(c["quality"]["samples"], 256)
            self.assertFalse(c["meets_tolerance"])
            self.assertGreater(c["quality"]["drop_points"], 1.0)
        self.assertTrue(any("evaluation stopped after" in n for n in result["notes"]), result["notes"])
        self.assertTrue((self.tmp / "tied.q.pt").exists())  # the best effort is still written

    def test_an_explicit_mode_is_judged_on_every_sample(self):
        code, doc, err = lite_json(self.dir / "tied.pt", "--mode", "weight-int8", "--eval", self.dir / "eval.pt",
                                   "-o", self.tmp / "tied.w8.pt", "--allow-slower", "--agreement-floor", 100, *FAST)
        self.assertEqual(code, 0, err)
        q = chosen(doc)["quality"]
        self.assertEqual((q["samples"], q["available_samples"], q["stopped_early"]), (256, 256, False))


class QuantizeDocumentation(LiteTestCase):
    def test_verb_page_documents_every_flag(self):
        self.assert_verb_page_documents_every_flag("quantize")


class QuantizeTorchvision(LiteTestCase):
    """torchvision resnet18 and mobilenet_v2 with random weights (batch-norm statistics gathered on random
    images so activations neither vanish nor explode), 64x64 inputs to keep the suite short."""

    @classmethod
    def setUpClass(cls):
        import torchvision

        cls.dir = pathlib.Path(tempfile.mkdtemp(prefix="lite_tv_"))
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(1)
        for name in ("resnet18", "mobilenet_v2"):
            net = getattr(torchvision.models, name)(num_classes=100)
            net.train()
            with torch.no_grad():
                for _ in range(4):
                    net(torch.rand(16, 3, 64, 64, generator=gen))
            net.eval()
            torch.jit.save(torch.jit.script(net), str(cls.dir / f"{name}.pt"))
        torch.save(torch.rand(8, 3, 64, 64, generator=gen), str(cls.dir / "calib.pt"))
        cls.x = torch.rand(16, 3, 64, 64, generator=gen)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def check_every_mode(self, name):
        src = self.dir / f"{name}.pt"
        with torch.no_grad():
            reference = torch.jit.load(str(src)).eval()(self.x)
        for mode in CNN_AGREEMENT:
            with self.subTest(model=name, mode=mode):
                out = self.tmp / f"{name}.{mode}.pt"
                # Random weights and random inputs: top-1 agreement is noise here (the agreement floor would
                # fail the gate); the relative output error below is what this test holds each mode to.
                code, doc, err = lite_json(src, "--mode", mode, "--calib", self.dir / "calib.pt", "--input",
                                           "1x3x64x64", "-o", out, "--allow-slower", "--agreement-floor", 100,
                                           *FAST)
                self.assertEqual(code, 0, err)
                module, info = provenance(out)
                with torch.no_grad():
                    y = module(self.x)
                self.assertEqual(tuple(y.shape), (16, 100))
                rel = ((y - reference).norm() / reference.norm()).item()
                self.assertLess(rel, TORCHVISION_REL_ERROR[mode])
                self.assertEqual(info["details"]["mode"], mode)
                self.assertEqual(info["inputs"][0]["shape"], [1, 3, 64, 64])
                quantized = [l for l in info["details"]["layers"] if l["quantized"]]
                self.assertGreater(len(quantized), 0)
                if mode == "static":
                    # Every conv and the classifier become quantized ops (resnet18: 20 convs + fc).
                    self.assertEqual(info["details"]["scheme"]["quantized_ops"], len(quantized))

    def test_resnet18_every_mode(self):
        self.check_every_mode("resnet18")

    def test_mobilenet_v2_every_mode(self):
        self.check_every_mode("mobilenet_v2")


if __name__ == "__main__":
    unittest.main()
