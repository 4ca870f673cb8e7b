"""Windowed attention prunes (issue 37 item 3): a small torchvision SwinTransformer (two stages of two blocks,
24 channels, 2 and 4 heads, 4x4 windows, random weights), scripted and traced. Its attention (qkv's columns and
q's, k's and v's rows, the projection) prunes with the residual width of its stage, the heads keeping their count
(each head narrower, keeping the same channels of its own; the relative-position bias table [(2W-1)^2, heads] as it
was, num_heads with it); the artifact runs at another input size. No exit 3, no attention or residual left alone."""
import json
import pathlib
import subprocess
import tempfile
import unittest

import torch

from litetest import PYTHON, LiteTestCase, run_lite

FAST = ["--iterations", "3", "--warmup", "1", "--batch", "1"]

FIXTURE = '''
import torch
from torchvision.models.swin_transformer import SwinTransformer

torch.manual_seed(0)
net = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                      num_classes=10).eval()
with torch.no_grad():  # torchvision starts every bias at zero: distinct values tell the kept rows apart
    for m in net.modules():
        if isinstance(m, torch.nn.Linear) and m.bias is not None:
            m.bias.uniform_(-0.5, 0.5)
torch.jit.save(torch.jit.script(net), "swin_script.pt")
with torch.no_grad():
    torch.jit.save(torch.jit.trace(net, torch.rand(1, 3, 64, 64)), "swin_trace.pt")
'''

HEADS = {"1": 2, "3": 4}  # features index of each stage -> its head count
WINDOW_TABLE_ROWS = (2 * 4 - 1) ** 2


class PruneWindowedAttention(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.fixtures = tempfile.TemporaryDirectory(prefix="lite_swin_")
        cls.dir = pathlib.Path(cls.fixtures.name)
        (cls.dir / "make.py").write_text(FIXTURE)
        subprocess.run([PYTHON, "make.py"], cwd=cls.dir, check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.fixtures.cleanup()
        super().tearDownClass()

    def prune(self, kind):
        out = self.tmp / f"swin_{kind}.pruned.pt"
        r = run_lite("prune", self.dir / f"swin_{kind}.pt", "--ratio", "0.3", "--input", "1x3x64x64", "-o", out,
                     *FAST, "--json")
        self.assertIn(r.returncode, (0, 1), r.stderr)  # 1: the agreement gate only (no recovery here)
        doc = json.loads(r.stdout)["result"]
        self.assertEqual(doc["gates"]["failed"], ["agreement"] if r.returncode == 1 else [], r.stderr)
        return doc, torch.jit.load(str(out)).eval()

    def check_heads_keep_their_channels(self, original, pruned, heads):
        """Each of q's, k's and v's heads keeps the same local channels of its own (found by qkv's bias values)."""
        before, after = original.qkv.bias.tolist(), pruned.qkv.bias.tolist()
        width, width_after = len(before) // 3, len(after) // 3
        rows = [before.index(v) for v in after]
        for part in range(3):
            local = None
            for h in range(heads):
                size = width_after // heads
                kept = rows[part * width_after + h * size:part * width_after + (h + 1) * size]
                start = part * width + h * (width // heads)
                self.assertTrue(all(start <= r < start + width // heads for r in kept), kept)
                local = local or [r - start for r in kept]
                self.assertEqual([r - start for r in kept], local)

    def check_blocks(self, module, kind):
        original = torch.jit.load(str(self.dir / f"swin_{kind}.pt"))
        for stage, heads in HEADS.items():
            for block in ("0", "1"):
                attn = getattr(getattr(module.features, stage), block).attn
                width = attn.proj.weight.shape[0]
                with self.subTest(kind=kind, stage=stage, block=block):
                    self.check_heads_keep_their_channels(getattr(getattr(original.features, stage), block).attn,
                                                         attn, heads)
                    self.assertEqual(tuple(attn.qkv.weight.shape), (3 * width, width))
                    self.assertEqual(tuple(attn.proj.weight.shape), (width, width))
                    self.assertEqual(width % heads, 0)
                    self.assertEqual(tuple(attn.relative_position_bias_table.shape), (WINDOW_TABLE_ROWS, heads))
                    if kind == "script":  # a trace keeps no int attributes
                        self.assertEqual(attn.num_heads, heads)
                    norm = getattr(getattr(module.features, stage), block).norm1
                    self.assertEqual(tuple(norm.weight.shape), (width,))

    def test_attention_and_residual_width_prune_scripted_and_traced(self):
        for kind in ("script", "trace"):
            doc, module = self.prune(kind)
            with self.subTest(kind=kind):
                reasons = {g["name"]: g["skipped"] for g in doc["groups"]}
                pruned = {g["name"] for g in doc["groups"] if g["kept"] < g["channels"]}
                self.assertIn("features.0.0", pruned, reasons)   # stage 1's residual width, its attention with it
                self.assertIn("features.2.reduction", pruned, reasons)  # stage 2's, from the patch merging
                for name, why in reasons.items():
                    self.assertNotIn("another layout", why, name)
                    self.assertNotIn("different channel layouts", why, name)
                self.assertLess(doc["after"]["macs"], 0.75 * doc["before"]["macs"])
                self.check_blocks(module, kind)
                stem = getattr(module.features, "0")
                self.assertLess(getattr(stem, "0").weight.shape[0], 24)
                for size in (64, 96):
                    with torch.no_grad():
                        y = module(torch.rand(2, 3, size, size))
                    self.assertEqual(tuple(y.shape), (2, 10))


if __name__ == "__main__":
    unittest.main()
