"""The models users bring (issue 24): recurrent nets, a transformer encoder, a CNN whose flatten->Linear fixes its
input size, a 1-D keyword spotter and a U-Net block with a transposed convolution, each saved scripted and traced
by /usr/bin/python3. Without --input, lite guesses a shape that runs (solved from the Linear's feature count, or
read from the recurrent layer); a quantization mode that breaks the model is dropped with its reason, never
blamed on the input; prune never reports an internal error for a shape it guessed."""
import json
import subprocess
import unittest

from litetest import PYTHON, LiteTestCase, run_lite

FIXTURES = r'''
import torch, torch.nn as nn
torch.manual_seed(0)
class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.rnn = nn.LSTM(16, 24, batch_first=True)
        self.head = nn.Linear(24, 4)
    def forward(self, ids):
        out, _ = self.rnn(self.emb(ids))
        return self.head(out[:, -1])
class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(20, 24, num_layers=2, batch_first=True)
        self.head = nn.Linear(24, 3)
    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])
class Small28(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    def forward(self, x): return self.classifier(self.features(x))
class Spotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(40, 16, 5, stride=2), nn.ReLU(), nn.Conv1d(16, 16, 3), nn.ReLU(),
                                 nn.Flatten(), nn.Linear(16 * 47, 12))
    def forward(self, x): return self.net(x)
class NoSizeFits(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 26, 2)  # 26 values per channel: (s - 2) ** 2 == 26 has no solution
    def forward(self, x): return self.fc(torch.flatten(self.conv(x), 1))
class ExactHead(nn.Module):  # most bytes in an Embedding; a head whose integer weights int8 holds exactly
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(4000, 64)
        self.head = nn.Linear(64, 4)
        with torch.no_grad():
            w = torch.randint(-127, 128, (4, 64)).float()
            w[:, 0] = 127
            self.head.weight.copy_(w)
            self.head.bias.zero_()
    def forward(self, ids): return self.head(self.emb(ids).mean(1))
class Encoder(nn.Module):  # BERT-style: embedding, two nn.TransformerEncoderLayers, mean over tokens
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2)
        for layer in self.encoder.layers:  # deep copies of one layer; trained layers differ (freezing pools equal ones)
            layer.self_attn._reset_parameters(); layer.linear1.reset_parameters(); layer.linear2.reset_parameters()
        self.head = nn.Linear(32, 4)
    def forward(self, ids): return self.head(self.encoder(self.embed(ids)).mean(1))
class Spectral(nn.Module):  # spectrogram features computed in the model: no bfloat16 FFT on CPU
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(201, 12)
    def forward(self, x): return self.head(torch.fft.rfft(x).abs())
class UNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 3, 2, stride=2)
    def forward(self, x): return self.up(torch.relu(self.down(x))) + x
for name, model, x in (("lstm", LSTMClassifier(), torch.randint(0, 100, (2, 12))),
                       ("gru", GRUClassifier(), torch.randn(2, 10, 20)),
                       ("small28", Small28(), torch.randn(2, 1, 28, 28)),
                       ("spotter", Spotter(), torch.randn(2, 40, 101)),
                       ("nosize", NoSizeFits(), None), ("exact", ExactHead(), None),
                       ("unet", UNetBlock(), torch.randn(2, 3, 32, 32)),
                       ("spectral", Spectral(), torch.randn(2, 400)),
                       ("encoder", Encoder(), torch.randint(0, 100, (2, 12)))):
    model.eval()
    torch.jit.script(model).save(name + "_script.pt")
    if x is not None:
        torch.jit.trace(model, x, check_trace=False).save(name + "_trace.pt")
        torch.save({"x": x.repeat(8, *([1] * (x.dim() - 1)))}, name + "_calib.pt")
'''

FAST = ["--warmup", "1", "--iterations", "3", "--batch", "1"]
# quantize fails its speed gate on an implausible speedup (a disturbed float timing); these tests judge the rest.
QUANTIZE_FAST = [*FAST, "--allow-noisy"]
# What each fixture's guessed input must be, and the words of the note that says how it was found.
GUESSES = {"lstm": ([1, 128], "int64", "Embedding"), "gru": ([1, 32, 20], "float32", "GRU with 20 input features"),
           "small28": ([1, 1, 28, 28], "float32", "sized 28x28 by"),
           "spotter": ([1, 40, 101], "float32", "by"),  # any length whose features give the Linear's 752
           }


class UserModels(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import pathlib
        import tempfile
        cls.fixtures_dir = tempfile.TemporaryDirectory(prefix="lite_user_models_")
        cls.dir = pathlib.Path(cls.fixtures_dir.name)
        (cls.dir / "make.py").write_text(FIXTURES)
        subprocess.run([PYTHON, "make.py"], cwd=cls.dir, check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.fixtures_dir.cleanup()
        super().tearDownClass()

    def json_run(self, *args, codes=(0, 1)):
        r = run_lite(*args, "--json")
        self.assertIn(r.returncode, codes, r.stderr)
        doc = json.loads(r.stdout)
        doc["exit_code"] = r.returncode
        return doc

    def python_prints(self, code):
        r = subprocess.run([PYTHON, "-c", "import torch\n" + code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def reloads_in_python(self, artifact, calib):
        check = ("import torch\n"
                 f"m = torch.jit.load({str(artifact)!r})\n"
                 f"x = torch.load({str(calib)!r})['x'][:2]\n"
                 "print(tuple(m(x).shape))\n")
        r = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def test_profile_guesses_a_shape_that_runs(self):
        for name, (shape, dtype, words) in GUESSES.items():
            for kind in ("script", "trace"):
                with self.subTest(name=name, kind=kind):
                    doc = self.json_run("profile", self.dir / f"{name}_{kind}.pt", *FAST, codes=(0,))
                    spec = doc["result"]["inputs"][0]
                    if name == "spotter":  # (L - 5) // 2 + 1 - 2 = 47 holds for 101 and 102
                        self.assertIn(spec["shape"][2], (101, 102))
                        self.assertEqual(spec["shape"][:2], [1, 40])
                    else:
                        self.assertEqual(spec["shape"], shape)
                    self.assertEqual(spec["dtype"], dtype)
                    self.assertTrue(doc["result"]["inputs_guessed"])
                    self.assertTrue(any(words in n for n in doc["result"]["notes"]), doc["result"]["notes"])

    def test_no_size_fits_is_one_line_naming_the_shape_for_every_verb(self):
        model = self.dir / "nosize_script.pt"
        for verb in (["profile", model], ["quantize", model, "--mode", "fp16", "-o", self.tmp / "out.pt"],
                     ["prune", model, "--ratio", "0.3", "-o", self.tmp / "out.pt"]):
            with self.subTest(verb=verb[0]):
                r = run_lite(*verb)
                self.assertEqual(r.returncode, 2, r.stderr)  # never 3: the shape was lite's guess
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertRegex(lines[0], r"forward failed on input \d+x3x224x224")
                self.assertIn("--input", lines[0])
                self.assertFalse((self.tmp / "out.pt").exists())

    def test_prune_runs_on_a_guessed_shape(self):
        for name in ("small28", "spotter"):
            with self.subTest(name):
                out = self.tmp / f"{name}.pruned.pt"
                doc = self.json_run("prune", self.dir / f"{name}_trace.pt", "--ratio", "0.3", "-o", out, *FAST)
                self.assertRegex(doc["result"]["guessed_inputs"], r"^1x(1x28x28|40x10[12])$")
                self.assertEqual(doc["result"]["gates"]["failed"], [] if doc["exit_code"] == 0 else ["agreement"])
                self.assertEqual(self.reloads_in_python(out, self.dir / f"{name}_calib.pt"),
                                 "(2, 10)" if name == "small28" else "(2, 12)")

    def test_prune_reaches_a_transformer_encoder(self):
        # Scripted: the residual width (embedding, layer norms, attention) and both feed-forward pairs; traced:
        # the feed-forward pairs, the width left alone with the reason (a trace bakes attention's head sizes).
        for form, width_pruned in (("script", True), ("trace", False)):
            with self.subTest(form):
                out = self.tmp / f"encoder_{form}.pruned.pt"
                doc = self.json_run("prune", self.dir / f"encoder_{form}.pt", "--ratio", "0.3", "--input", "1x12:int64",
                                    "--agreement-floor", "100", "-o", out, *FAST, codes=(0,))
                groups = {g["name"]: g for g in doc["result"]["groups"]}
                for layer in ("encoder.layers.0.linear1", "encoder.layers.1.linear1"):
                    self.assertEqual((groups[layer]["channels"], groups[layer]["kept"]), (64, 45))
                width = groups["embed"]
                if width_pruned:
                    self.assertEqual((width["kept"], width["multiple_of"]), (24, 4))  # 23 rounded up to whole heads
                else:
                    self.assertEqual(width["kept"], 32)
                    self.assertIn("traced", width["skipped"])
                # In Python: the fused fast path (no_grad) and the unfused layers (grad) agree on the cut weights.
                agree = self.python_prints(f"m = torch.jit.load({str(out)!r})\n"
                                           f"x = torch.load({str(self.dir / 'encoder_calib.pt')!r})['x'][:2]\n"
                                           "with torch.no_grad():\n"
                                           "    fused = m(x)\n"
                                           "print(tuple(fused.shape), bool(torch.allclose(fused, m(x), atol=1e-5)))\n")
                self.assertEqual(agree, "(2, 4) True")

    def test_int8_runs_in_a_transformer_encoders_attention_and_feed_forward(self):
        """Issue 24, item 3: the fused fast paths of nn.TransformerEncoderLayer and nn.MultiheadAttention read the
        float weights (dynamic int8 wrote a file whose outputs were float's, bit for bit), and graph mode cannot
        reach attention's projections. The artifact takes the unfused paths, and the projections become
        quantized::linear_dynamic: in dynamic mode and inside a static model alike, no float linear is left.
        Static also needs nn.TransformerEncoder's masks read as the None its caller passes (eval specialization),
        or its nested-tensor `if` keeps the whole encoder float."""
        encoder = self.dir / "encoder_script.pt"
        calib = self.dir / "encoder_calib.pt"
        attention = ["encoder.layers.0.self_attn", "encoder.layers.0.self_attn.out_proj",
                     "encoder.layers.1.self_attn", "encoder.layers.1.self_attn.out_proj"]
        for mode, extra in (("dynamic", []), ("static", ["--calib", calib])):
            with self.subTest(mode):
                out = self.tmp / f"encoder.{mode}.pt"
                doc = self.json_run("quantize", encoder, "--mode", mode, "--input", "1x12:int64", *extra,
                                    "--allow-slower", "--agreement-floor", "100", "-o", out, *QUANTIZE_FAST,
                                    codes=(0,))
                r = doc["result"]
                layers = {l["layer"]["name"]: l for l in r["candidates"][0]["plan"]["layers"]}
                for name in attention + ["encoder.layers.0.linear1", "encoder.layers.1.linear2"]:
                    self.assertTrue(layers[name]["quantized"], name)
                self.assertLess(r["output_bytes"], 0.8 * r["model_bytes"])
                check = self.python_prints(
                    "import json\n"
                    "torch.backends.quantized.engine = 'onednn'\n"
                    f"extra = {{'lite.json': ''}}\n"
                    f"q = torch.jit.load({str(out)!r}, _extra_files=extra)\n"
                    f"f = torch.jit.load({str(encoder)!r}).eval()\n"
                    f"x = torch.load({str(calib)!r})['x']\n"
                    "with torch.no_grad():\n"
                    "    d = (q(x) - f(x)).abs().max().item()\n"
                    "g = str(q.graph)\n"
                    "print(0 < d < 0.1, g.count('quantized::linear_dynamic'), g.count('aten::linear('),\n"
                    "      g.count('quantized::embedding_byte'),\n"
                    "      json.loads(extra['lite.json'])['details']['scheme']['attention_projections_int8'])\n")
                # int8 runs (outputs move, by little); 4 projections dynamic (+ the 4 feed-forward linears and the
                # head in dynamic mode; static makes those quantized::linear); no float aten::linear is left; the
                # token table is stored int8 per row
                self.assertEqual(check, f"True {9 if mode == 'dynamic' else 4} 0 1 {attention}")
                embed = {l["name"]: l for l in r["float_only_layers"]}["embed"]
                self.assertTrue(embed["dynamic_int8"])

    def test_a_failing_mode_is_dropped_with_its_reason_not_blamed_on_the_input(self):
        # bf16 cannot run an FFT computed inside the model (no bfloat16 FFT on CPU): auto keeps going.
        out = self.tmp / "spectral.q.pt"
        doc = self.json_run("quantize", self.dir / "spectral_script.pt", "--input", "1x400", "-o", out,
                            *QUANTIZE_FAST)
        problems = {c["mode"]: c["problem"] for c in doc["result"]["candidates"]}
        self.assertIn("builds a model that fails where the float model runs", problems["bf16"])
        self.assertNotIn("pass --input", problems["bf16"])
        self.assertEqual(self.reloads_in_python(out, self.dir / "spectral_calib.pt"), "(2, 12)")
        # the same mode asked for explicitly: exit 2, one line that blames the mode, not the input
        r = run_lite("quantize", self.dir / "spectral_script.pt", "--input", "1x400", "--mode", "bf16", "-o",
                     self.tmp / "bf16.pt", *QUANTIZE_FAST)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("bf16 quantization builds a model that fails where the float model runs", r.stderr)
        self.assertNotIn("pass --input", r.stderr)
        self.assertFalse((self.tmp / "bf16.pt").exists())

    def test_recurrent_and_embedding_layers_are_listed_with_what_each_mode_makes_of_them(self):
        doc = self.json_run("quantize", self.dir / "gru_script.pt", "-o", self.tmp / "gru.q.pt", *QUANTIZE_FAST)
        layers = {l["name"]: l for l in doc["result"]["float_only_layers"]}
        self.assertEqual(sorted(layers), ["rnn"])
        self.assertEqual((layers["rnn"]["kind"], layers["rnn"]["weight_shape"]), ("GRU", [72, 20]))
        self.assertIn("recurrent weights stay float", layers["rnn"]["reason"])
        text = run_lite("quantize", self.dir / "lstm_trace.pt", "--mode", "fp16", "-o", self.tmp / "t.pt",
                        *QUANTIZE_FAST)
        self.assertIn(text.returncode, (0, 1), text.stderr)
        self.assertRegex(text.stdout, r"\nemb +Embedding +100x16 +float ")
        self.assertRegex(text.stdout, r"\nrnn +LSTM +96x16 +float ")
        self.assertIn("1 of 3 layers quantized", text.stdout)
        self.assertIn("input 1x128:int64 guessed: see the notes)", text.stdout.splitlines()[0])

    def test_bf16_runs_recurrent_ops_and_transposed_convolutions_in_float32(self):
        """bf16 failed on LSTM/GRU (their state and weights must share a dtype) and on ConvTranspose2d (libtorch
        1.13's bfloat16 transposed convolution checks the weight as a plain convolution's): those ops now run in
        float32 between conversions, the rest of the graph in bfloat16, and the table says which is which."""
        for name in ("lstm_script", "lstm_trace", "gru_script", "unet_script", "unet_trace"):
            with self.subTest(name):
                model, out = self.dir / f"{name}.pt", self.tmp / f"{name}.bf16.pt"
                calib = self.dir / (name.split("_")[0] + "_calib.pt")
                r = run_lite("quantize", model, "--mode", "bf16", "--agreement-floor", "100", "-o", out,
                             "--allow-slower", *QUANTIZE_FAST)
                self.assertEqual(r.returncode, 0, r.stderr + r.stdout[-1500:])
                if name.startswith("unet"):
                    self.assertRegex(r.stdout, r"\nup +ConvTranspose2d +8x3x2x2 +float +libtorch 1.13's bfloat16 "
                                               "transposed convolution fails on CPU")
                    self.assertRegex(r.stdout, r"\ndown +Conv2d +8x3x3x3 +bfloat16 weights and compute")
                else:
                    self.assertRegex(r.stdout, r"\nrnn +(LSTM|GRU) +\d+x\d+ +float ")
                differs = self.python_prints(f"q = torch.jit.load({str(out)!r})\n"
                                             f"f = torch.jit.load({str(model)!r}).eval()\n"
                                             f"x = torch.load({str(calib)!r})['x']\n"
                                             "with torch.no_grad():\n"
                                             "    y = q(x)\n"
                                             "    d = (y - f(x)).abs().max().item()\n"
                                             "print(y.dtype, 0 < d < 0.1)\n")
                self.assertEqual(differs, "torch.float32 True")

    def test_dynamic_int8_quantizes_lstm_and_gru_layers(self):
        """Issue 24, item 4: dynamic mode rewrites LSTM/GRU to libtorch's int8 recurrent ops (the objects PyTorch's
        eager dynamic modules build), so the file shrinks and stock PyTorch loads and runs the artifact."""
        for name, op in (("lstm", "aten::quantized_lstm"), ("gru", "aten::quantized_gru")):
            for kind in ("script", "trace"):
                with self.subTest(name=name, kind=kind):
                    model, out = self.dir / f"{name}_{kind}.pt", self.tmp / f"{name}_{kind}.dyn.pt"
                    doc = self.json_run("quantize", model, "--mode", "dynamic", "-o", out, "--allow-slower",
                                        *QUANTIZE_FAST)
                    layers = {l["name"]: l for l in doc["result"]["float_only_layers"]}
                    self.assertTrue(layers["rnn"]["dynamic_int8"])
                    self.assertLess(out.stat().st_size, 0.8 * model.stat().st_size)
                    check = ("import torch\n"
                             "torch.backends.quantized.engine = 'onednn'\n"
                             f"m = torch.jit.load({str(out)!r})\n"
                             f"f = torch.jit.load({str(model)!r})\n"
                             f"x = torch.load({str(self.dir / (name + '_calib.pt'))!r})['x']\n"
                             f"print({op!r} in str(m.graph), float((m(x) - f(x)).abs().max()))\n")
                    r = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    present, error = r.stdout.split()
                    self.assertEqual(present, "True")
                    self.assertLess(float(error), 0.05)

    def test_a_mode_that_changes_nothing_material_fails_the_effect_gate(self):
        """Issue 24, item 3: an explicit mode whose file keeps >= 95% of its size and whose outputs are
        bit-identical to float bought nothing: exit 1, gate "effect", a finding; the artifact is still written."""
        out = self.tmp / "exact.q.pt"
        doc = self.json_run("quantize", self.dir / "exact_script.pt", "--mode", "weight-int8", "-o", out,
                            *QUANTIZE_FAST)
        self.assertEqual(doc["exit_code"], 1)
        self.assertIn("effect", doc["result"]["gates"]["failed"])
        self.assertTrue(any("changed nothing material" in f["what"] for f in doc["findings"]), doc["findings"])
        self.assertTrue(out.exists())
        # a mode that does change the outputs passes that gate
        doc = self.json_run("quantize", self.dir / "exact_script.pt", "--mode", "bf16", "-o", out, *QUANTIZE_FAST)
        self.assertNotIn("effect", doc["result"]["gates"]["failed"])

    def test_static_int8_of_a_transposed_convolution_uses_per_tensor_weights(self):
        for kind in ("script", "trace"):
            with self.subTest(kind):
                out = self.tmp / f"unet_{kind}.q.pt"
                calib = self.dir / "unet_calib.pt"
                doc = self.json_run("quantize", self.dir / f"unet_{kind}.pt", "--mode", "static", "--calib", calib,
                                    "-o", out, *QUANTIZE_FAST)
                extra = {"lite.json": ""}
                check = ("import torch, json\n"
                         f"extra = {{'lite.json': ''}}\n"
                         f"m = torch.jit.load({str(out)!r}, _extra_files=extra)\n"
                         "info = json.loads(extra['lite.json'])\n"
                         "print(info['details']['scheme']['per_tensor_weights'])\n"
                         "g = str(m.graph) + ''.join(str(s.graph) for s in m.modules() if hasattr(s, 'graph'))\n"
                         "print('quantized::conv_transpose2d' in str(m.inlined_graph))\n")
                r = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.split("\n")[:2], ["['up']", "True"], doc["result"]["notes"])
                self.assertEqual(self.reloads_in_python(out, calib), "(2, 3, 32, 32)")


if __name__ == "__main__":
    unittest.main()
