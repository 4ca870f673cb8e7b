"""End-to-end tests of data files for models whose forward takes several inputs (issue 37 item 2): a calibration,
evaluation or training file holds one tensor per input, keyed by the names of forward's arguments (a dict or an
.npz) or in their order (a tuple or list, the labels last). The models are made here by Debian's /usr/bin/python3,
scripted and traced: a siamese encoder forward(a, b), a decoder forward(tgt, memory), a recommender
forward(dense, sparse) with int64 ids through an EmbeddingBag. Every artifact is loaded back with stock PyTorch
and run on its inputs; a file that binds to no argument, or whose inputs differ in sample count, is refused with
exit 2 and one line naming what forward expected. No run may end in exit 3.
"""
import numpy as np
import torch
import torch.nn as nn

from litetest import LiteTestCase, chosen_candidate as chosen, lite_json_result as lite_json, run_lite

torch.backends.quantized.engine = "onednn"

# Random weights and data: top-1 agreement with float is noise, so the floor is lifted; few timed calls.
QUICK = ("--allow-slower", "--allow-noisy", "--agreement-floor", "100", "--batch", "1", "--iterations", "3",
         "--warmup", "1")
SAMPLES = 32


class Siamese(nn.Module):
    """One encoder for both inputs (Linears large enough to be quantized: 16384 weights or more)."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 128))
        self.head = nn.Linear(256, 10)

    def forward(self, a, b):
        return self.head(torch.cat([self.encoder(a), self.encoder(b)], 1))


class MemoryDecoder(nn.Module):
    """A decoder step: the target attends to nothing but is mixed with the encoder's memory."""

    def __init__(self):
        super().__init__()
        self.tgt_proj = nn.Linear(32, 256)
        self.memory_proj = nn.Linear(96, 256)
        self.out = nn.Linear(256, 10)

    def forward(self, tgt, memory):
        return self.out(torch.relu(self.tgt_proj(tgt) + self.memory_proj(memory)))


class Recommender(nn.Module):
    """Dense float features and sparse int64 ids (an Embedding summed over 4 ids per sample). An EmbeddingBag in
    its place is refused by static mode in one line (graph mode quantizes its int64 ids: "Quantize only works on
    Float Tensor"), a limit of the int8 build, not of the data."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(1000, 64)
        self.dense_proj = nn.Linear(16, 256)
        self.top = nn.Sequential(nn.Linear(320, 128), nn.ReLU(), nn.Linear(128, 2))

    def forward(self, dense, sparse):
        return self.top(torch.cat([torch.relu(self.dense_proj(dense)), self.embedding(sparse).sum(1)], 1))


def siamese_inputs(n=SAMPLES):
    return torch.randn(n, 64), torch.randn(n, 64)


def decoder_inputs(n=SAMPLES):
    return torch.randn(n, 32), torch.randn(n, 96)


def recommender_inputs(n=SAMPLES):
    return torch.randn(n, 16), torch.randint(0, 1000, (n, 4))


class MultiInputCase(LiteTestCase):
    def model(self, module, name, inputs, traced=False):
        torch.manual_seed(0)
        module = module.eval()
        saved = torch.jit.trace(module, inputs) if traced else torch.jit.script(module)
        path = self.tmp / name
        saved.save(str(path))
        return path

    def data(self, name, obj):
        path = self.tmp / name
        torch.save(obj, str(path))
        return path

    def quantize(self, model, *args):
        out = self.tmp / (model.stem + ".int8.pt")
        code, doc, err = lite_json("quantize", model, "--mode", "static", "-o", out, *QUICK, *args)
        self.assertEqual(code, 0, err)
        return doc, out

    def assert_runs_like_float(self, model, out, inputs):
        self.assertIn("quantized::linear", str(torch.jit.load(str(out)).inlined_graph))
        with torch.no_grad():
            got, ref = torch.jit.load(str(out))(*inputs), torch.jit.load(str(model))(*inputs)
        self.assertEqual(got.shape, ref.shape)
        self.assertLess(((got - ref).norm() / ref.norm()).item(), 0.2)


class Calibration(MultiInputCase):
    def test_static_int8_of_a_scripted_siamese_model_calibrated_by_argument_names(self):
        torch.manual_seed(1)
        model = self.model(Siamese(), "siamese.pt", siamese_inputs(2))
        a, b = siamese_inputs()
        doc, out = self.quantize(model, "--calib", self.data("pair.pt", {"a": a, "b": b}))
        self.assertEqual(chosen(doc)["mode"], "static")
        self.assert_runs_like_float(model, out, siamese_inputs(4))

    def test_static_int8_of_a_traced_siamese_model_calibrated_by_a_tuple_in_forward_order(self):
        torch.manual_seed(2)
        model = self.model(Siamese(), "siamese_traced.pt", siamese_inputs(2), traced=True)
        doc, out = self.quantize(model, "--calib", self.data("pair.pt", siamese_inputs()))
        self.assertEqual(chosen(doc)["mode"], "static")
        self.assert_runs_like_float(model, out, siamese_inputs(4))

    def test_an_npz_keyed_by_argument_names_calibrates_a_decoder_with_memory(self):
        torch.manual_seed(3)
        model = self.model(MemoryDecoder(), "decoder.pt", decoder_inputs(2))
        tgt, memory = decoder_inputs()
        calib = self.tmp / "decoder.npz"
        np.savez(calib, memory=memory.numpy(), tgt=tgt.numpy())  # the keys' order does not matter
        doc, out = self.quantize(model, "--calib", calib)
        self.assert_runs_like_float(model, out, decoder_inputs(4))

    def test_a_traced_recommender_with_int64_ids_and_labels_reports_accuracy(self):
        torch.manual_seed(4)
        model = self.model(Recommender(), "recommender.pt", recommender_inputs(2), traced=True)
        dense, sparse = recommender_inputs()
        labels = torch.randint(0, 2, (SAMPLES,))
        doc, out = self.quantize(model, "--calib", self.data("calib.pt", (dense, sparse)),
                                 "--eval", self.data("eval.pt", (dense, sparse, labels)))
        quality = chosen(doc)["quality"]
        self.assertEqual(quality["metric"], "top-1 accuracy")
        self.assertEqual(quality["samples"], SAMPLES)
        self.assert_runs_like_float(model, out, recommender_inputs(4))

    def test_eval_without_labels_reports_agreement_on_both_inputs(self):
        torch.manual_seed(5)
        model = self.model(Siamese(), "siamese.pt", siamese_inputs(2))
        a, b = siamese_inputs()
        doc, out = self.quantize(model, "--calib", self.data("pair.pt", {"a": a, "b": b}),
                                 "--eval", self.data("eval.pt", {"b": b, "a": a}))
        quality = chosen(doc)["quality"]
        self.assertNotEqual(quality["metric"], "top-1 accuracy")
        self.assertEqual(quality["samples"], SAMPLES)


class Refusals(MultiInputCase):
    def setUp(self):
        super().setUp()
        self.siamese = self.model(Siamese(), "siamese.pt", siamese_inputs(2))

    def test_a_dict_under_other_names_is_refused_naming_forwards_arguments(self):
        a, b = siamese_inputs()
        calib = self.data("pair.pt", {"left": a, "right": b})
        self.assert_rejected("quantize", self.siamese, "--mode", "static", "--calib", calib,
                             needles=[str(calib), "'left', 'right'", "a, b"])

    def test_inputs_with_different_sample_counts_are_refused_naming_the_argument(self):
        calib = self.data("pair.pt", {"a": torch.randn(8, 64), "b": torch.randn(6, 64)})
        self.assert_rejected("quantize", self.siamese, "--mode", "static", "--calib", calib,
                             needles=[str(calib), "'b' holds 6 samples", "'a' holds 8"])

    def test_one_tensor_for_two_inputs_is_refused(self):
        calib = self.data("one.pt", torch.randn(8, 64))
        self.assert_rejected("quantize", self.siamese, "--mode", "static", "--calib", calib,
                             needles=[str(calib), "takes 2 (a, b)"])

    def test_a_tuple_of_the_wrong_length_is_refused(self):
        calib = self.data("three.pt", (torch.randn(8, 64), torch.randn(8, 64), torch.randn(8, 64), torch.randn(8, 64)))
        self.assert_rejected("quantize", self.siamese, "--mode", "static", "--calib", calib,
                             needles=[str(calib), "4 items", "(a, b)"])

    def test_distill_refuses_a_teacher_with_two_inputs_in_one_line(self):
        data = self.data("pair.pt", {"a": torch.randn(8, 64), "b": torch.randn(8, 64), "y": torch.zeros(8).long()})
        self.assert_rejected("distill", "--teacher", self.siamese, "--student", self.siamese, "--data", data,
                             "-o", self.tmp / "out.pt", needles=[str(self.siamese), "a, b", "one input"])


class OtherVerbs(MultiInputCase):
    def test_profile_with_two_input_shapes_and_with_eval_data(self):
        model = self.model(MemoryDecoder(), "decoder.pt", decoder_inputs(2), traced=True)
        code, doc, err = lite_json("profile", model, "--input", "4x32", "--input", "4x96", "--iterations", "5",
                                   "--warmup", "1")
        self.assertEqual(code, 0, err)
        self.assertEqual([i["shape"] for i in doc["result"]["inputs"]], [[4, 32], [4, 96]])
        tgt, memory = decoder_inputs()
        labels = torch.randint(0, 10, (SAMPLES,))
        data = self.data("eval.pt", {"tgt": tgt, "memory": memory, "y": labels})
        code, doc, err = lite_json("profile", model, "--eval", data, "--iterations", "5", "--warmup", "1")
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["result"]["accuracy"]["total"], SAMPLES)

    def test_prune_with_taylor_gradients_and_eval_on_two_inputs(self):
        model = self.model(MemoryDecoder(), "decoder.pt", decoder_inputs(2))
        tgt, memory = decoder_inputs()
        data = self.data("data.pt", (tgt, memory, torch.randint(0, 10, (SAMPLES,))))
        out = self.tmp / "pruned.pt"
        code, doc, err = lite_json("prune", model, "--ratio", "0.5", "--criterion", "taylor", "--data", data,
                                   "--eval", data, "-o", out, "--iterations", "3", "--warmup", "1", "--batch", "1")
        self.assertIn(code, (0, 1), err)
        pruned = torch.jit.load(str(out))
        with torch.no_grad():
            self.assertEqual(tuple(pruned(*decoder_inputs(3)).shape), (3, 10))
