"""`lite prune` on models whose features reach the head through a dict (issue 37 item 1): torchvision's
segmentation models build one with IntermediateLayerGetter and read it back by key. A small stand-in (a
two-stage backbone under torchvision's own IntermediateLayerGetter, an LRASPP-like head reading the "low" and
"out" features, a dict as the result) and a detection backbone (the same stages under torchvision's own
BackboneWithFPN: a FeaturePyramidNetwork over the list of the features; again with ResNet blocks normalized by
torchvision's FrozenBatchNorm2d, as resnet_fpn_backbone builds them), scripted and traced, prune with exit 0:
the backbone's width through the dict when scripted and through the tuple a trace makes of it, whatever is not
followed left alone with its reason, the artifact's outputs the same keys and shapes as the original's. No exit 3
(internal error) anywhere. torchvision's segmentation models themselves take minutes here: checked by hand, not in the suite."""
import json
import shutil
import tempfile
import pathlib
import unittest
from collections import OrderedDict
from typing import Dict

import torch
import torch.nn.functional as F

from litetest import LiteTestCase, run_lite

FAST = ["--iterations", "2", "--warmup", "1", "--batch", "1"]


def conv_bn_relu(cin, cout, stride):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout),
                               torch.nn.ReLU())


class Head(torch.nn.Module):
    """LRASPP's shape in small: the high features projected and upsampled to the low ones, each classified."""

    def __init__(self, low, high, inter, classes):
        super().__init__()
        self.cbr = torch.nn.Sequential(torch.nn.Conv2d(high, inter, 1, bias=False), torch.nn.BatchNorm2d(inter),
                                       torch.nn.ReLU())
        self.low_classifier = torch.nn.Conv2d(low, classes, 1)
        self.high_classifier = torch.nn.Conv2d(inter, classes, 1)

    def forward(self, features: Dict[str, torch.Tensor]) -> torch.Tensor:
        low, high = features["low"], features["out"]
        x = F.interpolate(self.cbr(high), size=low.shape[-2:], mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


class Segmenter(torch.nn.Module):
    """torchvision's _SimpleSegmentationModel in small: a dict of features in, a dict of results out."""

    def __init__(self):
        super().__init__()
        from torchvision.models._utils import IntermediateLayerGetter

        stages = torch.nn.Sequential(OrderedDict([
            ("stem", conv_bn_relu(3, 16, 2)), ("stage1", conv_bn_relu(16, 24, 2)), ("stage2", conv_bn_relu(24, 32, 2))]))
        self.backbone = IntermediateLayerGetter(stages, return_layers={"stage1": "low", "stage2": "out"})
        self.classifier = Head(24, 32, 16, 5)

    def forward(self, x):
        input_shape = x.shape[-2:]
        result = OrderedDict()
        y = self.classifier(self.backbone(x))
        result["out"] = F.interpolate(y, size=input_shape, mode="bilinear", align_corners=False)
        return result


class Detector(torch.nn.Module):
    """A detection backbone in small: torchvision's own BackboneWithFPN (IntermediateLayerGetter, then a
    FeaturePyramidNetwork over the list of its features, with a max-pool level), a dict of pyramid levels out."""

    def __init__(self):
        super().__init__()
        from torchvision.models.detection.backbone_utils import BackboneWithFPN

        stages = torch.nn.Sequential(OrderedDict([
            ("stem", conv_bn_relu(3, 16, 2)), ("stage1", conv_bn_relu(16, 24, 2)), ("stage2", conv_bn_relu(24, 32, 2))]))
        self.body = BackboneWithFPN(stages, return_layers={"stage1": "0", "stage2": "1"}, in_channels_list=[24, 32],
                                    out_channels=16)

    def forward(self, x):
        return self.body(x)


class FrozenDetector(torch.nn.Module):
    """What resnet_fpn_backbone builds, in small: ResNet basic blocks normalized by torchvision's FrozenBatchNorm2d
    (per-channel buffers), three stages under BackboneWithFPN, whose scripted FeaturePyramidNetwork walks
    list(features.values()) in a loop over their count."""

    def __init__(self):
        super().__init__()
        from torchvision.models.detection.backbone_utils import BackboneWithFPN
        from torchvision.models.resnet import BasicBlock
        from torchvision.ops.misc import FrozenBatchNorm2d

        def stage(cin, cout, stride):
            down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), FrozenBatchNorm2d(cout))
            return BasicBlock(cin, cout, stride, down, norm_layer=FrozenBatchNorm2d)

        stages = torch.nn.Sequential(OrderedDict([
            ("stem", torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1, bias=False), FrozenBatchNorm2d(16),
                                         torch.nn.ReLU())),
            ("layer1", stage(16, 16, 1)), ("layer2", stage(16, 24, 2)), ("layer3", stage(24, 32, 2))]))
        for m in stages.modules():  # frozen statistics as a trained backbone has them, not the identity
            if isinstance(m, FrozenBatchNorm2d):
                m.weight.uniform_(0.5, 1.5), m.bias.normal_(0, 0.1)
                m.running_mean.normal_(0, 0.1), m.running_var.uniform_(0.5, 1.5)
        self.body = BackboneWithFPN(stages, return_layers={"layer1": "0", "layer2": "1", "layer3": "2"},
                                    in_channels_list=[16, 24, 32], out_channels=16)

    def forward(self, x):
        return self.body(x)


def settle(net, size):
    """Batch-norm statistics from random images, then eval mode."""
    gen = torch.Generator().manual_seed(1)
    net.train()
    with torch.no_grad():
        for _ in range(2):
            net(torch.rand(4, 3, size, size, generator=gen))
    return net.eval()


def prune(model, out, *args):
    r = run_lite("prune", model, "--ratio", "0.3", "-o", out, *FAST, *args, "--json")
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr


class PruneDictRouted(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = pathlib.Path(tempfile.mkdtemp(prefix="lite_prune_routed_"))
        torch.manual_seed(0)
        cls.save_forms(settle(Segmenter(), 32), "")
        cls.save_forms(settle(Detector(), 32), "fpn_")
        cls.save_forms(FrozenDetector().eval(), "frozen_fpn_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @staticmethod
    def save_forms(net, stem):
        torch.jit.save(torch.jit.script(net), str(PruneDictRouted.dir / f"{stem}scripted.pt"))
        # a traced segmentation model returns a dict: strict=False
        torch.jit.save(torch.jit.trace(net, torch.rand(1, 3, 32, 32), strict=False),
                       str(PruneDictRouted.dir / f"{stem}traced.pt"))

    def assert_same_outputs(self, original, pruned, size):
        x = torch.rand(1, 3, size, size)
        with torch.no_grad():
            want, got = torch.jit.load(str(original))(x), torch.jit.load(str(pruned))(x)
        self.assertEqual(list(got.keys()), list(want.keys()))
        for key in want:
            self.assertEqual(got[key].shape, want[key].shape, key)

    def prune_form(self, form):
        model, out = self.dir / f"{form}.pt", self.tmp / f"{form}.pruned.pt"
        code, doc, err = prune(model, out, "--input", "1x3x32x32")
        # exit 1 only for the agreement gate (random weights, no recovery), as test_prune.py's assert_pruned
        self.assertIn(code, (0, 1), err)
        self.assertEqual(doc["result"]["gates"]["failed"], ["agreement"] if code == 1 else [], err)
        self.assert_same_outputs(model, out, 32)
        self.result = doc["result"]
        return {g["name"]: g for g in doc["result"]["groups"]}

    def test_scripted_prunes_the_backbone_width_through_the_dict(self):
        groups = self.prune_form("scripted")
        # the features stored in the dict and read back by the head are pruned, not left alone
        for name in ("backbone.stage1.0", "backbone.stage2.0"):
            self.assertTrue(groups[name]["prunable"], groups[name])
            self.assertLess(groups[name]["kept"], groups[name]["channels"], groups[name])
        self.assert_same_outputs(self.dir / "scripted.pt", self.tmp / "scripted.pruned.pt", 48)

    def test_traced_prunes_the_backbone_width_through_the_tuple_of_features(self):
        # a trace flattens IntermediateLayerGetter's dict into a tuple built and unpacked in the graph
        groups = self.prune_form("traced")
        for name in ("backbone.stage1.0", "backbone.stage2.0"):
            self.assertLess(groups[name]["kept"], groups[name]["channels"], groups[name])
        self.assert_same_outputs(self.dir / "traced.pt", self.tmp / "traced.pruned.pt", 48)

    def assert_fenced_or_pruned(self, groups):
        """Every group is pruned or left alone with its reason; none reaches the internal error (exit 3)."""
        for g in groups.values():
            if not g["prunable"]:
                self.assertTrue(g["skipped"], g)
        self.assertTrue(any(g["kept"] < g["channels"] for g in groups.values()), groups)

    def test_fpn_over_the_list_of_features_scripted(self):
        groups = self.prune_form("fpn_scripted")
        self.assert_fenced_or_pruned(groups)
        self.assert_same_outputs(self.dir / "fpn_scripted.pt", self.tmp / "fpn_scripted.pruned.pt", 48)

    def test_fpn_over_the_list_of_features_traced(self):
        groups = self.prune_form("fpn_traced")
        self.assert_fenced_or_pruned(groups)
        self.assert_same_outputs(self.dir / "fpn_traced.pt", self.tmp / "fpn_traced.pruned.pt", 48)

    def assert_frozen_backbone_pruned(self, form):
        """The stages normalized by FrozenBatchNorm2d prune through the dict into the FPN's lateral convs, whose
        inner width prunes as well: well below 0.8x of the MACs at ratio 0.3, every FrozenBatchNorm2d's buffers
        cut with its convolution's channels."""
        groups = self.prune_form(form)
        for name in ("body.body.stem.0", "body.body.layer1.conv1", "body.body.layer3.conv1"):
            self.assertTrue(groups[name]["prunable"], groups[name])
            self.assertLess(groups[name]["kept"], groups[name]["channels"], groups[name])
        self.assertLess(self.result["after"]["macs"], 0.8 * self.result["before"]["macs"])
        pruned = torch.jit.load(str(self.tmp / f"{form}.pruned.pt"))
        stem = pruned.body.body.stem
        kept = getattr(stem, "0").weight.shape[0]
        for buffer in ("weight", "bias", "running_mean", "running_var"):
            self.assertEqual(getattr(getattr(stem, "1"), buffer).shape, (kept,), buffer)
        lateral = getattr(getattr(pruned.body.fpn.inner_blocks, "2"), "0")
        self.assertEqual(lateral.weight.shape[1], pruned.body.body.layer3.conv2.weight.shape[0])
        self.assert_same_outputs(self.dir / f"{form}.pt", self.tmp / f"{form}.pruned.pt", 48)

    def test_frozen_batch_norm_backbone_with_fpn_scripted(self):
        # scripted, the FPN's loop over list(x.values()) is unrolled to its count: x[idx] reads a known feature
        self.assert_frozen_backbone_pruned("frozen_fpn_scripted")

    def test_frozen_batch_norm_backbone_with_fpn_traced(self):
        self.assert_frozen_backbone_pruned("frozen_fpn_traced")


if __name__ == "__main__":
    unittest.main()
