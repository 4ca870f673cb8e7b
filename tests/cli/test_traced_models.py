"""The models users bring, traced as well as scripted (issue 24): torch.jit.trace records convolutions as
aten::_convolution, which lite reads as the conv1d/conv2d/conv3d a scripted copy holds (lib/lite/model/
traced_ops.hpp). A traced and a scripted copy of one model give the same layer list, plan and figures in quantize,
prune and profile. The fixtures are made here by /usr/bin/python3: a 2-D CNN with a grouped convolution, a 1-D
convolutional keyword spotter, and a small U-Net block with a transposed convolution."""
import json
import subprocess
import unittest

from litetest import PYTHON, LiteTestCase, run_lite

FIXTURES = r'''
import torch, torch.nn as nn
torch.manual_seed(0)
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1, groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d(7))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(1568, 64), nn.ReLU(), nn.Linear(64, 10))
    def forward(self, x): return self.classifier(self.features(x))
class KWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(40, 64, 5, stride=2), nn.ReLU(), nn.Conv1d(64, 64, 3, dilation=2),
                                 nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 12))
    def forward(self, x): return self.net(x)
class UNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 3, 2, stride=2)
    def forward(self, x): return self.up(torch.relu(self.down(x))) + x
for name, model, x in (("cnn", CNN(), torch.randn(2, 1, 28, 28)), ("kws", KWS(), torch.randn(2, 40, 101)),
                       ("unet", UNetBlock(), torch.randn(2, 3, 32, 32))):
    model.eval()
    torch.jit.script(model).save(name + "_script.pt")
    torch.jit.trace(model, x).save(name + "_trace.pt")
    torch.save({"x": torch.randn(32, *x.shape[1:])}, name + "_calib.pt")
'''

SHAPES = {"cnn": "1x1x28x28", "kws": "1x40x101", "unet": "1x3x32x32"}
FAST = ["--warmup", "1", "--iterations", "3"]


class TracedModels(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import tempfile, pathlib
        cls.fixtures_dir = tempfile.TemporaryDirectory(prefix="lite_traced_")
        cls.dir = pathlib.Path(cls.fixtures_dir.name)
        (cls.dir / "make.py").write_text(FIXTURES)
        subprocess.run([PYTHON, "make.py"], cwd=cls.dir, check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.fixtures_dir.cleanup()
        super().tearDownClass()

    def json_of(self, *args):
        r = run_lite(*args, "--json")
        self.assertIn(r.returncode, (0, 1), r.stderr)  # 1: a gate (speed on a loaded machine), artifact written
        return json.loads(r.stdout)["result"]

    def pair(self, name, *args):
        """(scripted, traced) results of `lite ARGS` on both copies of fixture `name`."""
        out = []
        for kind in ("script", "trace"):
            model = self.dir / f"{name}_{kind}.pt"
            out.append(self.json_of(*[a.format(model=model, out=self.tmp / f"{name}_{kind}.out.pt") for a in args]))
        return out

    def test_quantize_lists_the_same_layers_and_its_artifact_reloads(self):
        for name in ("cnn", "kws"):
            with self.subTest(name):
                calib = str(self.dir / f"{name}_calib.pt")
                scripted, traced = self.pair(name, "quantize", "{model}", "--calib", calib, "--mode", "static",
                                             "-o", "{out}", *FAST)
                self.assertEqual(traced["layers"], scripted["layers"])
                self.assertIn(scripted["layers"][0]["kind"], ("Conv1d", "Conv2d"))
                check = ("import torch\n"
                         f"m = torch.jit.load({str(self.tmp / (name + '_trace.out.pt'))!r})\n"
                         f"print(tuple(m(torch.load({calib!r})['x'][:2]).shape))\n")
                r = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.strip(), "(2, 10)" if name == "cnn" else "(2, 12)")
        # the U-Net block: one Conv2d, the transposed conv not quantizable dynamically, said alike for both copies
        for kind in ("script", "trace"):
            self.assert_rejected("quantize", self.dir / f"unet_{kind}.pt", "--input", SHAPES["unet"], "--mode",
                                 "dynamic", needles=["--mode", "nothing to quantize", "down (Conv2d)"])

    def test_prune_makes_the_same_plan(self):
        for name in ("cnn", "kws", "unet"):
            with self.subTest(name):
                scripted, traced = self.pair(name, "prune", "{model}", "--ratio", "0.3", "--input", SHAPES[name],
                                             "-o", "{out}", *FAST)
                plan = lambda r: [(g["name"], g["channels"], g["kept"]) for g in r["groups"]]
                self.assertEqual(plan(traced), plan(scripted))
                pruned = traced["groups"][1 if name == "cnn" else 0]
                self.assertLess(pruned["kept"], pruned["channels"])
                self.assertEqual(traced["after"]["parameters"], scripted["after"]["parameters"])
        # the U-Net's transposed convolution takes the pruned channels as its weight's rows ([in, out, k, k]); its
        # own output is added to the input, so it keeps its 3 channels
        for kind in ("script", "trace"):
            check = ("import torch\n"
                     f"m = torch.jit.load({str(self.tmp / f'unet_{kind}.out.pt')!r})\n"
                     "print(tuple(m.down.weight.shape), tuple(m.up.weight.shape), tuple(m(torch.randn(2, 3, 32, 32)).shape))\n")
            r = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
            self.assertEqual(r.stdout.strip(), "(6, 3, 3, 3) (6, 3, 2, 2) (2, 3, 32, 32)", r.stderr)

    def test_profile_counts_the_same_layers_and_macs(self):
        for name in ("cnn", "kws", "unet"):
            with self.subTest(name):
                scripted, traced = self.pair(name, "profile", "{model}", "--input", SHAPES[name], *FAST)
                layers = lambda r: [(l["module"], l["op"], l["macs"]) for l in r["layers"]]
                self.assertEqual(layers(traced), layers(scripted))
                self.assertEqual(traced["model"]["total_macs"], scripted["model"]["total_macs"])
                self.assertTrue(all(l["op"] != "aten::_convolution" for l in traced["layers"]))


if __name__ == "__main__":
    unittest.main()
