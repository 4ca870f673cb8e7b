"""End-to-end tests of `lite quantize` on the constructs of real-size models (issue 13): eval specialization
(a stochastic-depth branch that PyTorch's own quantize_jit rejects), data-dependent branches kept float, the
agreement floor of explicit modes, and the time budget of measurement (lite quantize --budget and lite
profile --budget) on a model made deliberately slow.

Every model is scripted here by Debian's /usr/bin/python3 (which runs this file) and artifacts are loaded
back in this process. No test asserts a machine-dependent timing outcome: the budget tests check what the
report says (the time breakdown, the notes) and bound the wall time only loosely.
"""
from typing import Dict, NamedTuple

import torch
import torch.nn as nn
from torchvision.ops import StochasticDepth

from litetest import LiteTestCase, chosen_candidate as chosen, lite_json_result as lite_json, run_lite

torch.backends.quantized.engine = "onednn"
# What these tests judge is the artifact, not its speed: a slower or busy-machine timing is not a failure here.
QUICK = ("--allow-slower", "--allow-noisy", "--batch", "1", "--iterations", "3", "--warmup", "2")


class Outputs(NamedTuple):
    logits: torch.Tensor
    features: torch.Tensor


class Block(nn.Module):
    """A residual block with stochastic depth, as in torchvision's EfficientNet (MBConv)."""

    def __init__(self, c):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.SiLU())
        self.stochastic_depth = StochasticDepth(0.2, "row")

    def forward(self, x):
        return self.stochastic_depth(self.conv(x)) + x


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16), Block(16))
        self.dropout = nn.Dropout(0.3)
        self.head = nn.Linear(16 * 8 * 8, 64)
        self.fc = nn.Linear(64, 10)

    def forward(self, x) -> Outputs:
        f = self.blocks(self.stem(x)).flatten(1)
        h = self.head(self.dropout(f))
        return Outputs(self.fc(h), h)


class DictNet(DepthNet):
    def forward(self, x) -> Dict[str, torch.Tensor]:
        f = self.blocks(self.stem(x)).flatten(1)
        return {"logits": self.fc(self.head(f))}


def jitter(x):
    """An `if` on the data, in a function (where InsertObservers rejects it, like torchvision's stochastic
    depth): eval specialization cannot remove it."""
    if bool(x.mean() > 0):
        return x
    return x * torch.full_like(x, 0.5)


class Gate(nn.Module):
    def forward(self, x):
        return jitter(x)


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.gate = Gate()
        self.c2 = nn.Conv2d(16, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 8 * 8, 64)

    def forward(self, x):
        return self.fc(self.c2(self.gate(self.c1(x))).flatten(1))


class Slow(nn.Module):
    """About 20 chained 640x640 matrix products per call whatever the batch (0.1-0.5 s here): slow at every
    batch size, with one small Linear to quantize."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(640, 640) / 640 ** 0.5, requires_grad=False)
        self.fc = nn.Linear(256, 10)
        self.k = 20

    def forward(self, x):
        h = self.w * x.mean()
        for _ in range(self.k):
            h = torch.tanh(torch.mm(h, self.w))
        return self.fc(x) + h.mean()


class RealModelsCase(LiteTestCase):
    def script(self, module, name):
        torch.manual_seed(0)
        path = self.tmp / name
        torch.jit.script(module.eval()).save(str(path))
        return path

    def calib(self, shape, n=16):
        torch.manual_seed(1)
        path = self.tmp / "calib.pt"
        torch.save({"x": torch.randn(n, *shape), "y": torch.zeros(n, dtype=torch.long)}, str(path))
        return path


class EvalSpecialization(RealModelsCase):
    def test_stochastic_depth_quantizes_statically_and_keeps_the_named_tuple(self):
        torch.manual_seed(0)
        model = self.script(DepthNet(), "depth.pt")
        calib = self.calib((3, 8, 8))
        out = self.tmp / "depth.int8.pt"
        code, doc, err = lite_json("quantize", model, "--mode", "static", "--calib", calib, "-o", out, *QUICK)
        self.assertEqual(code, 0, err)
        c = chosen(doc)
        self.assertEqual(c["mode"], "static")
        self.assertEqual([l["layer"]["name"] for l in c["plan"]["layers"] if l["quantized"]],
                         ["stem.0", "blocks.0.conv.0", "blocks.1.conv.0", "head"])
        q = torch.jit.load(str(out))
        self.assertEqual(q.forward.schema.returns[0].type.annotation_str,
                         torch.jit.load(str(model)).forward.schema.returns[0].type.annotation_str)
        x = torch.randn(4, 3, 8, 8)
        with torch.no_grad():
            got, ref = q(x), torch.jit.load(str(model)).eval()(x)
        self.assertEqual(type(got).__name__, "Outputs")
        self.assertEqual(got.logits.shape, (4, 10))
        rel = (got.logits - ref.logits).norm() / ref.logits.norm()
        self.assertLess(rel.item(), 0.2)
        graph = str(q.inlined_graph)
        self.assertNotIn("bernoulli", graph)
        self.assertIn("quantized::conv2d", graph)

    def test_dict_output_keeps_its_type(self):
        model = self.script(DictNet(), "dict.pt")
        out = self.tmp / "dict.int8.pt"
        code, doc, err = lite_json("quantize", model, "--mode", "static", "--calib", self.calib((3, 8, 8)), "-o",
                                   out, *QUICK)
        self.assertEqual(code, 0, err)
        q = torch.jit.load(str(out))
        self.assertEqual(q.forward.schema.returns[0].type.annotation_str, "Dict[str, Tensor]")
        with torch.no_grad():
            self.assertEqual(q(torch.randn(2, 3, 8, 8))["logits"].shape, (2, 10))

    def test_a_branch_on_data_keeps_its_module_float(self):
        model = self.script(GatedNet(), "gated.pt")
        out = self.tmp / "gated.int8.pt"
        code, doc, err = lite_json("quantize", model, "--mode", "static", "--calib", self.calib((3, 8, 8)), "-o",
                                   out, *QUICK)
        self.assertEqual(code, 0, err)
        plan = chosen(doc)["plan"]
        self.assertEqual([r["module"] for r in plan["float_regions"]], ["gate"])
        self.assertIn("an `if` on data", plan["float_regions"][0]["construct"])
        self.assertIn("test_quantize_real.py", plan["float_regions"][0]["construct"])
        quantized = [l["layer"]["name"] for l in plan["layers"] if l["quantized"]]
        self.assertEqual(quantized, ["c1", "c2", "fc"])
        with torch.no_grad():
            self.assertEqual(torch.jit.load(str(out))(torch.randn(2, 3, 8, 8)).shape, (2, 64))


class AgreementFloor(RealModelsCase):
    def degenerate(self):
        """One Linear whose 10 outputs differ by 1e-4 relative: int8 weights make them equal, so the
        quantized model's top-1 agrees with float's on about a tenth of the inputs."""
        torch.manual_seed(0)
        lin = nn.Linear(256, 10, bias=False)
        with torch.no_grad():
            lin.weight.copy_(1 + 1e-4 * torch.randn(10, 256))
        return self.script(nn.Sequential(lin), "degenerate.pt")

    def test_an_explicit_mode_that_loses_agreement_exits_1_with_the_artifact_written(self):
        model = self.degenerate()
        out = self.tmp / "d.pt"
        code, doc, err = lite_json("quantize", model, "--mode", "weight-int8", "--input", "1x256", "-o", out, *QUICK)
        self.assertEqual(code, 1, err)
        self.assertTrue(out.exists())
        self.assertEqual(doc["result"]["gates"]["failed"], ["agreement"])
        self.assertTrue(doc["result"]["agreement_floor_applied"])
        finding = next(f for f in doc["findings"] if "--agreement-floor 5.00 points" in f["threshold"])
        self.assertIn("--tolerance", finding["advice"])
        self.assertIn("--skip", finding["advice"])
        self.assertIn("--mode", finding["advice"])

    def test_a_lower_floor_or_a_tolerance_replaces_the_floor(self):
        model = self.degenerate()
        code, doc, err = lite_json("quantize", model, "--mode", "weight-int8", "--input", "1x256", "-o",
                                   self.tmp / "a.pt", "--agreement-floor", "100", *QUICK)
        self.assertEqual(code, 0, err)
        code, doc, err = lite_json("quantize", model, "--mode", "weight-int8", "--input", "1x256", "-o",
                                   self.tmp / "b.pt", "--tolerance", "100", *QUICK)
        self.assertEqual(code, 0, err)
        self.assertFalse(doc["result"]["agreement_floor_applied"])

    def test_bad_floor_and_budget_values(self):
        model = self.degenerate()
        for flag, value in [("--agreement-floor", "-1"), ("--agreement-floor", "101"), ("--budget", "0"),
                            ("--budget", "nan")]:
            with self.subTest(flag=flag, value=value):
                self.assert_rejected("quantize", model, "--input", "1x256", flag, value, needles=(flag,))


class TimeBudget(RealModelsCase):
    def test_budget_bounds_a_slow_model_and_the_report_says_where_the_time_went(self):
        model = self.script(Slow(), "slow.pt")
        # Without a budget, --duration 30 alone would take at least 2 minutes (30 s per measurement).
        code, doc, err = lite_json("quantize", model, "--mode", "dynamic", "--input", "1x256", "-o",
                                   self.tmp / "s.pt", "--batch", "1,64", "--duration", "30", "--budget", "10",
                                   "--allow-slower")
        self.assertIn(code, (0, 1), err)
        r = doc["result"]
        self.assertEqual(r["budget_s"], 10)
        self.assertLess(r["wall_s"], 60, "the budget must bound the run (10 s asked, 60 s tolerated)")
        stages = {(t["stage"], t["mode"]) for t in r["time"]}
        for stage in [("load", ""), ("evaluation", "float"), ("timing", "float"), ("build", "dynamic"),
                      ("evaluation", "dynamic"), ("timing", "dynamic"), ("write", "")]:
            self.assertIn(stage, stages)
        self.assertLessEqual(sum(t["seconds"] for t in r["time"]), r["wall_s"] + 0.01)
        notes = "\n".join(r["notes"])
        self.assertIn("batch 64 was not measured", notes)
        self.assertIn("warm-up", notes)
        self.assertEqual([l["batch"] for l in chosen(doc)["speed"]["candidate"]], [1])
        text = run_lite("quantize", model, "--mode", "dynamic", "--input", "1x256", "-o", self.tmp / "t.pt",
                        "--batch", "1", "--budget", "5", "--allow-slower", "--quiet").stdout
        self.assertIn("of a 5 s budget", text)
        self.assertRegex(text, r"timing +dynamic +[0-9.]+ +[0-9]+%")

    def test_profile_gives_a_slow_model_fewer_calls_and_says_so(self):
        model = self.script(Slow(), "slow.pt")
        code, doc, err = lite_json("profile", model, "--input", "1x256", "--budget", "1")
        self.assertEqual(code, 0, err)
        m = doc["result"]
        self.assertGreaterEqual(len(m["warmup_samples_ms"]), 2)
        self.assertGreaterEqual(len(m["samples_ms"]), 3)
        self.assertLess(len(m["warmup_samples_ms"]), 20)
        self.assertTrue(any("warm-up" in f["what"] and "--budget" in f["advice"] for f in doc["findings"]),
                        doc["findings"])
