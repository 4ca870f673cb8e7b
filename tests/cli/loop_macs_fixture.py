"""Writes loop_script.pt and loop_trace.pt to the folder given: the torchvision FeaturePyramidNetwork pattern,
a conv picked out of a ModuleList by index inside a `for` loop of a method called once per trip of a loop with a
constant trip count. Input 1x3x16x16; MACs = stem 4*16*16*3*9 + 3 blocks of 4*16*16*4*9 = 138240."""
import sys

import torch
from torch import Tensor, nn


class LoopedBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1) for _ in range(3)])

    def run_block(self, x: Tensor, idx: int) -> Tensor:
        # As FeaturePyramidNetwork.get_result_from_inner_blocks: TorchScript cannot index a ModuleList by a
        # variable, so the loop visits every block and runs the one asked for.
        out = x
        for i, module in enumerate(self.blocks):
            if i == idx:
                out = module(x)
        return out

    def forward(self, x: Tensor) -> Tensor:
        x = self.stem(x)
        for idx in range(3):
            x = torch.relu(self.run_block(x, idx))
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    model = LoopedBlocks().eval()
    torch.jit.script(model).save(f"{sys.argv[1]}/loop_script.pt")
    torch.jit.trace(model, torch.randn(1, 3, 16, 16)).save(f"{sys.argv[1]}/loop_trace.pt")
