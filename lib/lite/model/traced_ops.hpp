#pragma once
// Traced models, seen like scripted ones. torch.jit.trace (the most common export) records a convolution as
// aten::_convolution, the op every conv lowers to, where torch.jit.script keeps aten::conv1d/conv2d/conv3d; the
// layer finders of quantize and prune, the MAC counter and the input-shape inference all read the latter.
// Normalising once, where a model is loaded, makes every pass see the same layers in a traced and a scripted
// copy of a model, and artifacts written from it hold the plain ops.
#include <torch/script.h>

namespace lite::model {

// Rewrites aten::_convolution (not transposed, its stride/padding/dilation/groups constant) into
// aten::conv1d/conv2d/conv3d in every method of `module` and its submodules, through libtorch's own pattern
// (graph_rewrite_helper::replaceConvolutionWithAtenConv, which the quantization passes use on traced graphs);
// transposed convolutions become aten::conv_transpose1d/2d. The computation is the same op underneath.
// Returns how many nodes were rewritten; a graph the pattern cannot read is left as it is.
int normalize_traced_convolutions(torch::jit::Module& module);

}  // namespace lite::model
