"""Hostile input, second round (issue 22): what a hostile user (run as root, as CI runners and containers do) tried
and what must happen instead. Every case asserts the exit code, one documented error line, every input
byte-identical (sha256 before and after) and no file or folder created; signal cases assert the exit code within
2 s of the signal. Device nodes and FIFOs are made inside the test's own temp folder, never under /dev.

One class per cause of the issue: outputs that are not regular files (1), outputs onto inputs (2), nothing
created before the checks (3), deep or absurd values (4, 5), signals (7) and form (8). Data-file bounds (6) are
in test_user_inputs.py, trace bounds in test_cache_sim.py, JSON depth in test_config.py.
"""
import hashlib
import json
import os
import pathlib
import signal
import stat
import subprocess
import sys
import time
import unittest

from decoder_helpers import build_decoder
from litetest import DATA, LITE, PYTHON, LiteTestCase, run_lite, run_lite_measured

MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
TRACE = DATA / "inference_requests.csv"
IS_ROOT = os.geteuid() == 0


def python(code, cwd):
    subprocess.run([PYTHON, "-c", code], cwd=cwd, check=True, capture_output=True, text=True)


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


class HostileCase(LiteTestCase):
    def rejected_keeping(self, sub, *args, inputs=(), needles=(), **kwargs):
        """assert_rejected, and every file in `inputs` byte-identical afterwards."""
        before = {str(p): sha256(p) for p in inputs}
        r = self.assert_rejected(sub, *args, needles=needles, **kwargs)
        self.assertEqual({str(p): sha256(p) for p in inputs}, before, "an input changed")
        return r

    def copy(self, source, name):
        target = self.tmp / name
        target.write_bytes(pathlib.Path(source).read_bytes())
        return target


class OutputsThatAreNotRegularFiles(HostileCase):
    """Cause 1: the atomic write renames over its target, which would replace a device or a FIFO."""

    def assert_special_output_refused(self, sub, flag, special, *args):
        mode = os.stat(special).st_mode
        r = run_lite(sub, *args, flag, special)
        self.assert_bad_input(r, flag, "not a regular file")
        self.assertEqual(os.stat(special).st_mode, mode, f"{special} was replaced")

    def test_plot_onto_a_fifo_is_refused_and_the_fifo_stays(self):
        fifo = self.tmp / "plot.svg"
        os.mkfifo(fifo)
        self.assert_special_output_refused("cache-sim", "--plot", fifo, TRACE)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    @unittest.skipUnless(IS_ROOT, "mknod of a character device needs root")
    def test_outputs_onto_a_character_device_are_refused_and_it_stays(self):
        null = self.tmp / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null, in our own folder
        self.assert_special_output_refused("cache-sim", "--plot", null, TRACE)
        self.assert_special_output_refused("quantize", "-o", null, MODEL, "--mode", "dynamic")
        self.assert_special_output_refused("profile", "--chrome-trace", null, MODEL, "--ops", "--iterations", "2")
        self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode))

    def test_quantize_output_onto_a_fifo_is_refused(self):
        fifo = self.tmp / "m.int8.pt"
        os.mkfifo(fifo)
        self.assert_special_output_refused("quantize", "-o", fifo, MODEL, "--mode", "dynamic")


class OutputsOntoInputs(HostileCase):
    """Cause 2: one rule for every verb: no output may be any input, nor another output."""

    def test_prune_output_onto_its_eval_data(self):
        data = self.copy(EVAL, "eval.pt")
        self.rejected_keeping("prune", MODEL, "--ratio", "0.3", "--eval", data, "-o", data, inputs=[data],
                              needles=["-o", "--eval"])

    def test_prune_sensitivity_sidecar_onto_its_eval_data(self):
        data = self.copy(EVAL, "m.sensitivity.csv")
        self.rejected_keeping("prune", MODEL, "--sensitivity", "--eval", data, "-o", self.tmp / "m.pt",
                              inputs=[data], needles=["sensitivity", "--eval"])

    def test_prune_output_onto_taylor_data(self):
        data = self.copy(EVAL, "d.pt")
        self.rejected_keeping("prune", MODEL, "--ratio", "0.3", "--criterion", "taylor", "--data", data,
                              "-o", data, inputs=[data], needles=["--data"])

    def test_distill_output_and_checkpoint_onto_its_data(self):
        data = self.copy(EVAL, "train.pt")
        student = self.copy(MODEL, "student.pt")
        self.rejected_keeping("distill", "--teacher", MODEL, "--student", student, "--data", data, "-o", data,
                              inputs=[data, student], needles=["-o", "--data"])
        ckpt_dir = self.tmp / "ckpt"
        ckpt_dir.mkdir()
        last = self.copy(EVAL, "ckpt/last.ckpt")
        self.rejected_keeping("distill", "--teacher", MODEL, "--student", student, "--data", last,
                              "--checkpoint-dir", ckpt_dir, "-o", self.tmp / "s.pt", inputs=[last],
                              needles=["--checkpoint-dir", "--data"])

    def test_output_onto_the_config_file(self):
        config = self.tmp / "c.json"
        config.write_text(json.dumps({"model": str(MODEL), "mode": "dynamic"}))
        self.rejected_keeping("quantize", "--config", config, "-o", config, inputs=[config],
                              needles=["--config"])

    def write_recipe(self, name="r.json"):
        recipe = self.tmp / name
        recipe.write_text(json.dumps({"lite_recipe": 1, "model": str(MODEL), "steps": [{"quantize": {"mode": "dynamic"}}]}))
        return recipe

    def test_run_report_onto_the_recipe(self):
        recipe = self.write_recipe()
        self.rejected_keeping("run", recipe, "-o", self.tmp / "m.pt", "--report-md", recipe, inputs=[recipe],
                              needles=["--report-md", "recipe"])

    def test_run_two_outputs_on_one_path(self):
        recipe = self.write_recipe()
        same = self.tmp / "same.pt"
        self.rejected_keeping("run", recipe, "-o", same, "--report-md", same, inputs=[recipe],
                              needles=["--report-md", "-o"])

    def test_run_work_files_onto_recipe_data(self):
        work = self.tmp / "work"
        work.mkdir()
        data = self.copy(EVAL, "work/step0-quantize.json")  # the name of step 0's report in the work folder
        recipe = self.tmp / "r.json"
        recipe.write_text(json.dumps({"lite_recipe": 1, "model": str(MODEL), "steps": [{"quantize": {"mode": "dynamic", "eval": str(data)}}]}))
        self.rejected_keeping("run", recipe, "-o", self.tmp / "m.pt", "--work-dir", work, inputs=[data, recipe],
                              needles=["--work-dir"])


class NothingCreatedBeforeTheChecks(HostileCase):
    """Cause 3: a recipe whose model is not a model leaves no work folder (it was /etc/passwd.t.work)."""

    def test_run_with_a_text_file_as_model_creates_nothing(self):
        fake = self.tmp / "passwd"
        fake.write_text("root:x:0:0:root:/root:/bin/bash\n")
        recipe = self.tmp / "t.json"
        recipe.write_text(json.dumps({"lite_recipe": 1, "model": str(fake), "steps": [{"quantize": {"mode": "dynamic"}}]}))
        self.rejected_keeping("run", recipe, inputs=[fake, recipe], needles=["passwd"])

    def test_optimize_refusing_a_models_declared_input_creates_no_work_folder(self):
        """The work folder was made before the model's inputs were checked (tests/hostile/sweep.py, item 1)."""
        model = self.tmp / "negative.pt"
        python("import torch, json\n"
               "m = torch.jit.load(%r)\n"
               "torch.jit.save(m, 'negative.pt', _extra_files={'lite.json': json.dumps({'inputs': ['1x0x28x28']})})\n"
               % str(MODEL), self.tmp)
        self.rejected_keeping("optimize", model, "--target-p99", "1000", "--modes", "float", "-o", self.tmp / "o.pt",
                              "--work-dir", self.tmp / "work", inputs=[model], needles=["negative.pt", "lite.json"])


class AbsurdValues(HostileCase):
    """Causes 4 and 5: values that crashed lite or reached exit 3 are bad input, with the value and the bound."""

    def test_thread_variables_beyond_the_machine(self):
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            for value in ("100000", "abc", "-3"):  # libgomp's own complaint came first for the last two
                r = run_lite("profile", MODEL, "--iterations", "2", env={name: value})
                self.assert_bad_input(r, name, value)
        r = run_lite("profile", MODEL, "--iterations", "2", "--json", env={"OMP_NUM_THREADS": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_huge_batches(self):
        for value in ("2000000000", "99999999999999999999"):
            self.assert_rejected("profile", MODEL, "--batch", value, needles=["--batch"])
            self.assert_rejected("quantize", MODEL, "--mode", "dynamic", "--batch", value, needles=["--batch"])
        student = self.copy(MODEL, "student.pt")
        for value in ("3000000000", "99999999999999999999"):  # issue 38 item 4: distill took them, exit 0
            for flag in ("--train-batch", "--eval-batch"):
                self.assert_rejected("distill", "--teacher", MODEL, "--student", student, "--data", EVAL, flag, value,
                                     "-o", self.tmp / "d.pt", needles=[flag])

    def test_load_that_would_never_end(self):
        self.assert_rejected("profile", MODEL, "--qps", "1e9", "--requests", "99999999999", needles=["--qps"])
        self.assert_rejected("profile", MODEL, "--qps", "10", "--requests", "99999999999", needles=["--requests"])
        self.assert_rejected("profile", MODEL, "--qps", "0.01", "--requests", "10000", needles=["--requests", "s"])

    def test_distill_learning_rate_overflow(self):
        student = self.copy(MODEL, "student.pt")
        self.assert_rejected("distill", "--teacher", MODEL, "--student", student, "--data", EVAL, "--lr", "1e300",
                             needles=["--lr"])

    def test_seed_beyond_64_bits(self):
        """2^64 was read by strtoull and ran with another seed (issue 38 item 4): every verb with --seed refuses it."""
        student = self.copy(MODEL, "student.pt")
        r = self.assert_rejected("profile", MODEL, "--seed", "18446744073709551616", needles=["--seed", "out of range"])
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assert_rejected("distill", "--teacher", MODEL, "--student", student, "--data", EVAL,
                             "--seed", "18446744073709551616", needles=["--seed", "out of range"])

    def test_finite_values_beyond_any_meaning_are_refused(self):
        """Found by tests/hostile/sweep.py (item 4): 2^64 as a float was taken by these flags (a distill timeout of
        584 billion years, a cache hit costing 584 million), and --global-floor was not checked without --global."""
        big = "18446744073709551616"
        student = self.copy(MODEL, "student.pt")
        distill = ["--teacher", MODEL, "--student", student, "--data", EVAL, "-o", self.tmp / "d.pt"]
        prefix = self.tmp / "chat.jsonl"
        prefix.write_text(json.dumps({"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}) + "\n")
        cases = [("prune", [MODEL, "--ratio", "0.3", "--global-floor", "5"], "--global-floor"),
                 ("prune", [MODEL, "--ratio", "0.3", "--tolerance", big], "--tolerance"),
                 ("quantize", [MODEL, "--mode", "dynamic", "--tolerance", big], "--tolerance"),
                 *[("distill", [*distill, flag, big], flag) for flag in ("--timeout", "--bucket-mb")],
                 *[("cache-sim", [TRACE, "--sizes", "10", flag, big], flag)
                   for flag in ("--hit-latency", "--miss-latency", "--target-p99", "--max-node-load")],
                 *[("cache-sim", [prefix, "--sizes", "10", flag, big], flag)
                   for flag in ("--kv-bytes-per-token", "--prefill-ms-per-token")],
                 # named --duration, after optimize's work folder was made
                 *[("optimize", [MODEL, "--target-p99", "1000", "--work-dir", self.tmp / "work", flag, big], flag)
                   for flag in ("--screen-duration", "--duration")]]
        for sub, args, flag in cases:
            with self.subTest(sub=sub, flag=flag):
                self.assert_rejected(sub, *args, needles=[flag])

    def test_a_device_as_optimizes_trace_is_refused_before_any_work(self):
        """Found by tests/hostile/sweep.py (item 3): optimize reads its trace only when a variant needs a cache, so
        /dev/urandom as --trace ran a whole search and exited 0."""
        for device in ("/dev/urandom", "/dev/null"):
            with self.subTest(device=device):
                self.assert_rejected("optimize", MODEL, "--target-p99", "1000", "--trace", device, "--hit-latency",
                                     "0.05", "--work-dir", self.tmp / "work", "-o", self.tmp / "o.pt",
                                     needles=[device, "a character device"])

    def test_proc_file_as_model(self):
        self.assert_rejected("profile", "/proc/self/environ", needles=["/proc/self/environ"])
        self.assert_rejected("quantize", "/proc/self/environ", "--mode", "dynamic", needles=["/proc/self/environ"])

    def test_absurd_declared_input_shape(self):
        python(
            "import torch, json\n"
            "m = torch.jit.load(%r)\n"
            "torch.jit.save(m, 'big.pt', _extra_files={'lite.json': json.dumps({'inputs': ['100000x1x28x28000']})})\n"
            % str(MODEL), self.tmp)
        self.assert_rejected("profile", self.tmp / "big.pt", needles=["big.pt"])

    def test_negative_and_huge_dimensions_declared_in_lite_json(self):
        """Issue 38 item 1: a model's own lite.json is untrusted input; its shapes pass --input's rule, and the
        error names the model file, for every verb that reads them (it was exit 3 in profile, and prune and
        quantize blamed --batch)."""
        for name, inputs in (("negative.pt", [{"shape": [-1, 99999999999, 28, 28], "dtype": "float32"}]),
                             ("zero.pt", [{"shape": [1, 0, 28, 28]}]),
                             ("dtype.pt", [{"shape": [1, 1, 28, 28], "dtype": "complex128"}])):
            python("import torch, json\n"
                   "m = torch.jit.load(%r)\n"
                   "torch.jit.save(m, %r, _extra_files={'lite.json': json.dumps({'inputs': %r})})\n"
                   % (str(MODEL), name, inputs), self.tmp)
            out = self.tmp / "out.pt"
            for sub, extra in (("profile", ["--iterations", "2"]), ("prune", ["--ratio", "0.3", "-o", out]),
                               ("quantize", ["--mode", "dynamic", "-o", out])):
                with self.subTest(model=name, sub=sub):
                    self.rejected_keeping(sub, self.tmp / name, *extra, inputs=[self.tmp / name],
                                          needles=[name, "lite.json"])
                    self.assertFalse(out.exists())

    def test_declarations_lite_cannot_read_are_refused_not_ignored(self):
        """Issue 38 item 1, found by tests/hostile/sweep.py: a fractional dimension was truncated (1.5 -> 1), a
        string dimension, a non-list and an input without a shape were ignored (so prune and quantize ran on an
        inferred shape), and 200,000 declared inputs grew prune to 11.7 GB. Each is refused naming the model and its
        lite.json; an --input replaces the declaration and the model runs."""
        for name, inputs, needle in (("fractional.pt", "[{'shape': [1.5, 1, 28, 28]}]", "1.5, not a whole number"),
                                     ("string.pt", "[{'shape': ['a', 1, 28, 28]}]", "not a whole number"),
                                     ("number.pt", "5", "not a list of input shapes"),
                                     ("shapeless.pt", "[{'dtype': 'float32'}]", "without a \"shape\" list"),
                                     ("many.pt", "['1x1x28x28'] * 200000", "lists 200000 inputs")):
            python("import torch, json\n"
                   "m = torch.jit.load(%r)\n"
                   "torch.jit.save(m, %r, _extra_files={'lite.json': json.dumps({'inputs': %s})})\n"
                   % (str(MODEL), name, inputs), self.tmp)
            model = self.tmp / name
            for sub, extra in (("profile", ["--iterations", "2"]), ("prune", ["--ratio", "0.3", "-o", self.tmp / "o.pt"]),
                               ("quantize", ["--mode", "dynamic", "-o", self.tmp / "o.pt"])):
                with self.subTest(model=name, sub=sub):
                    self.rejected_keeping(sub, model, *extra, inputs=[model], max_rss_mib=600,
                                          needles=[name, "lite.json", needle])
            r = run_lite("profile", model, "--input", "1x1x28x28", "--iterations", "2", "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            model.unlink()

    def test_output_layer_with_no_features(self):
        python(
            "import torch\n"
            "m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 0)).eval()\n"
            "torch.jit.script(m).save('empty.pt')\n", self.tmp)
        for sub, extra in (("profile", ["--iterations", "2"]), ("quantize", ["--mode", "dynamic"])):
            r = run_lite(sub, self.tmp / "empty.pt", "--input", "1x1x28x28", *extra)
            self.assertNotEqual(r.returncode, 3, r.stderr)
            self.assertIn(r.returncode, (0, 1, 2), r.stderr)


class BoundedMemory(HostileCase):
    """Cause 6, for the model file (data files: test_user_inputs.py, traces: test_cache_sim.py)."""

    def test_a_lite_json_that_inflates_to_a_gigabyte_is_left_unread(self):
        python(
            "import torch, zipfile\n"
            "torch.jit.script(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10)).eval()).save('m.pt')\n"
            "z = zipfile.ZipFile('m.pt', 'a', compression=zipfile.ZIP_DEFLATED)\n"
            "prefix = z.namelist()[0].split('/')[0]\n"
            "with z.open(prefix + '/extra/lite.json', 'w', force_zip64=True) as f:\n"
            "    block = b' ' * (1 << 20)\n"
            "    for _ in range(1024): f.write(block)\n"
            "z.close()\n", self.tmp)
        self.assertLess((self.tmp / "m.pt").stat().st_size, 8 << 20)
        r, peak_mib = run_lite_measured("profile", self.tmp / "m.pt", "--input", "1x1x28x28", "--iterations", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(peak_mib, 600, "the 1 GiB lite.json was inflated")


class ContainersPastTheirShape(HostileCase):
    """Issue 38 item 2, found by tests/hostile/sweep.py: an .npz member whose .npy header declares 16 images but
    whose data inflates to 1 GiB (the zip's sizes honest) was inflated whole (2.2 GB) and taken, exit 0."""

    def test_an_npz_member_larger_than_its_header_shape_is_refused_unread(self):
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "hostile"))
        import fixtures
        head = fixtures.npy_header((16, 1, 28, 28))
        stream, crc = fixtures.deflated_zeros(1 << 30, head)
        bomb = self.tmp / "bomb.npz"
        fixtures.write_zip(bomb, [("x.npy", stream, crc, len(head) + (1 << 30)), fixtures.labels_member(16)])
        for sub, extra in (("profile", ["--eval", bomb]), ("quantize", ["--mode", "static", "--calib", bomb, "-o",
                                                                         self.tmp / "q.pt"])):
            with self.subTest(sub=sub):
                self.rejected_keeping(sub, MODEL, *extra, inputs=[bomb], max_rss_mib=600,
                                      needles=["bomb.npz/x.npy", "more than the array holds"])


# Writes crafted torch.save and TorchScript files whose pickles or zip directories claim more bytes than they
# hold (python(FORGE + call, tmp)). Patches keep every length, so only the claim changes.
FORGE = r"""
import io, re, struct, zipfile, torch

def rezip(source, out, patch=lambda name, data: data):
    zin = zipfile.ZipFile(io.BytesIO(source))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info, patch(info.filename, zin.read(info.filename)))

def declare(path, suffix, size):  # the central directory's uncompressed size of the members ending in suffix
    raw = bytearray(open(path, "rb").read())
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        n = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46:at + 46 + n].decode().endswith(suffix): struct.pack_into("<I", raw, at + 24, size)
        at = raw.find(b"PK\x01\x02", at + 4)
    open(path, "wb").write(bytes(raw))

def numel_after_cpu(data, old, new):  # the storage's element count in its persistent id ('storage', T, key, 'cpu', n)
    m = re.search(rb"X\x03\x00\x00\x00cpu(q.|r....)?K" + bytes([old]), data, re.S)
    return data[:m.end() - 1] + bytes([new]) + data[m.end():]

def saved_tensor(out, patch):  # 784 floats saved as a (1, 1, 28, 28) sample; patch edits data.pkl
    buf = io.BytesIO()
    torch.save(torch.zeros(1, 1, 28, 28), buf)
    rezip(buf.getvalue(), out, lambda name, data: patch(data) if name.endswith("data.pkl") else data)

def scripted_linear(out, patch=lambda data: data):
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 2))), buf)
    rezip(buf.getvalue(), out, lambda name, data: patch(data) if name.endswith("/data.pkl") else data)
"""


class TensorsBeyondTheirBytes(HostileCase):
    """Cause 6, tensors: a file whose pickle or zip directory claims more bytes than it holds is refused before
    libtorch allocates the claim or a kernel reads past what was read (libtorch's unpickler trusts the pickle)."""

    def forge(self, call):
        python(FORGE + call, self.tmp)

    def test_torch_save_tensors_claiming_more_than_their_record(self):
        # data.pkl of torch.zeros(1, 1, 28, 28): the storage's count 784 (M\\x10\\x03) -> 1040 claims more than
        # the record holds; the shape's 28 (K\\x1c) -> 255 and the offset 0 -> 255 reach past the storage.
        self.forge("saved_tensor('claim.pt', lambda d: d.replace(b'cpuq\\x04M\\x10\\x03', b'cpuq\\x04M\\x10\\x04'))\n"
                   "saved_tensor('shape.pt', lambda d: d.replace(b'K\\x1cK\\x1ctq', b'K\\xffK\\x1ctq'))\n"
                   "saved_tensor('offset.pt', lambda d: d.replace(b'QK\\x00(', b'QK\\xff('))\n")
        for name, needle in (("claim.pt", "storage claims 4160 bytes but only 3136 back it"),
                             ("shape.pt", "of shape [1, 1, 255, 28] (offset 0, strides [784, 784, 28, 1]) reaches outside"),
                             ("offset.pt", "(offset 255, strides [784, 784, 28, 1]) reaches outside its storage of 3136")):
            with self.subTest(name):
                self.rejected_keeping("quantize", MODEL, "--calib", self.tmp / name, "--mode", "static", "-o",
                                      self.tmp / "q.pt", inputs=[self.tmp / name], needles=[name, needle])
                self.assertFalse((self.tmp / "q.pt").exists())

    def test_torch_save_record_declared_at_4_gib(self):
        self.forge("saved_tensor('big.pt', lambda d: d)\ndeclare('big.pt', 'data/0', 0xF0000000)\n")
        r, peak_mib = run_lite_measured("quantize", MODEL, "--calib", self.tmp / "big.pt", "--mode", "static",
                                        "-o", self.tmp / "q.pt")
        self.assert_bad_input(r, "big.pt", "stored uncompressed but its directory says 4026531840 bytes")
        self.assertLess(peak_mib, 600)

    def test_model_record_declared_at_4_gib(self):
        self.forge("scripted_linear('m.pt')\ndeclare('m.pt', 'data/0', 0xF0000000)\n")
        r, peak_mib = run_lite_measured("profile", self.tmp / "m.pt", "--input", "1x4", "--iterations", "2")
        self.assert_bad_input(r, "m.pt", "stored uncompressed but its directory says 4026531840 bytes")
        self.assertLess(peak_mib, 600)

    def test_model_weight_storage_claiming_more_than_its_record(self):
        # the Linear's weight storage holds 8 floats (32 bytes); its pickle now claims 255 (1020 bytes)
        self.forge("scripted_linear('m.pt', lambda d: numel_after_cpu(d, 8, 255))\n")
        self.rejected_keeping("profile", self.tmp / "m.pt", "--input", "1x4", "--iterations", "2",
                              inputs=[self.tmp / "m.pt"], needles=["m.pt", "storage claims 1020 bytes"])


class Form(HostileCase):
    """Cause 8."""

    def write_eval(self, labels):
        python("import torch; d = torch.load(%r); d['y'][:3] = torch.tensor(%r); torch.save(d, 'e.pt')"
               % (str(EVAL), labels), self.tmp)
        return self.tmp / "e.pt"

    def test_labels_outside_the_models_classes(self):
        for labels in ([-1, 0, 1], [10, 0, 1], [2 ** 62, 0, 1]):
            data = self.write_eval(labels)
            self.rejected_keeping("profile", MODEL, "--eval", data, "--iterations", "2", inputs=[data],
                                  needles=["--eval", "10 classes"])
            self.rejected_keeping("quantize", MODEL, "--mode", "dynamic", "--eval", data, "-o", self.tmp / "q.pt",
                                  inputs=[data], needles=["--eval", "10 classes"])
            self.rejected_keeping("prune", MODEL, "--ratio", "0.3", "--eval", data, "-o", self.tmp / "p.pt",
                                  inputs=[data], needles=["--eval", "10 classes"])

    def test_eval_dict_with_labels_under_an_unknown_name(self):
        python("import torch; d = torch.load(%r); torch.save({'x': d['x'], 'lbl': d['y']}, 'e.pt')" % str(EVAL),
               self.tmp)
        data = self.tmp / "e.pt"
        self.rejected_keeping("profile", MODEL, "--eval", data, "--iterations", "2", inputs=[data],
                              needles=["e.pt", "'lbl'", "name the labels y"])

    def test_empty_values_do_not_fall_back_to_defaults(self):
        self.assert_rejected("quantize", MODEL, "--mode", "dynamic", "-o", "", needles=["--output", "empty"])
        self.assert_rejected("cache-sim", TRACE, "--plot", "", needles=["--plot", "empty"])

    def test_zero_where_zero_means_unset(self):
        self.assert_rejected("distill", "--teacher", MODEL, "--student", MODEL, "--data", EVAL, "--world-size", "0",
                             needles=["--world-size"])
        self.assert_rejected("distill", "--teacher", MODEL, "--student", MODEL, "--data", EVAL, "--launch-local", "0",
                             needles=["--launch-local"])
        self.assert_rejected("prune", MODEL, "--ratio", "0.3", "--iterations", "0", needles=["--iterations"])

    def test_numbers_in_other_spellings_are_refused_on_every_verb(self):
        # CLI11 reads integers in base 0 and doubles with strtold: 0x10 was 16, 010 was 8, 0x1p-3 was 0.125
        distill = ["--teacher", MODEL, "--student", MODEL, "--data", EVAL]
        cases = [("profile", [MODEL], "--batch", "0x10"), ("profile", [MODEL], "--warmup", "1e2"),
                 ("quantize", [MODEL], "--calib-samples", "0x10"), ("quantize", [MODEL], "--tolerance", "0x1p-3"),
                 ("prune", [MODEL], "--round-to", "0x8"), ("prune", [MODEL], "--ratio", "0x0.8"),
                 ("prune", [MODEL], "--global-floor", "0x0.1"), ("distill", distill, "--epochs", "0x2"),
                 ("distill", distill, "--lr", "0x1p-3"), ("distill", distill, "--temperature", "0x4")]
        for sub, head, flag, value in cases:
            with self.subTest(f"{sub} {flag} {value}"):
                self.rejected_keeping(sub, *head, flag, value, inputs=[MODEL], needles=[flag, value])

    def test_npz_positional_names_that_are_not_numbers(self):
        python("import numpy as np\n"
               "np.savez('d.npz', arr_x=np.zeros((2, 1, 28, 28), np.float32), arr_0=np.zeros(2, np.int64))\n", self.tmp)
        self.rejected_keeping("profile", MODEL, "--eval", self.tmp / "d.npz", "--iterations", "2",
                              inputs=[self.tmp / "d.npz"], needles=["d.npz", "'arr_x'"])

    def test_a_models_print_does_not_break_json(self):
        # torch.jit.script reads the class's source, so the fixture is a file, not python -c
        (self.tmp / "chatty.py").write_text(
            "import torch\n"
            "class Chatty(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = torch.nn.Linear(8, 4)\n"
            "    def forward(self, x):\n"
            "        print('hello from the model')\n"
            "        return self.fc(x)\n"
            "torch.jit.script(Chatty().eval()).save('chatty.pt')\n")
        subprocess.run([PYTHON, "chatty.py"], cwd=self.tmp, check=True, capture_output=True)
        r = run_lite("profile", self.tmp / "chatty.pt", "--input", "1x8", "--iterations", "3", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        json.loads(r.stdout)  # nothing but the report on stdout
        self.assertIn("hello from the model", r.stderr)


def _handles(pid, signum, exe_name):
    """True once `pid` runs `exe_name` and catches `signum` (SigCgt in /proc/PID/status)."""
    try:
        if not os.readlink(f"/proc/{pid}/exe").endswith(exe_name):
            return False
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signum - 1)))
    except OSError:
        pass
    return False


class LlmForms(HostileCase):
    """Issue 38 item 5: the prefix-cache traces and the decoders' token files and caches under the same rules: exit
    2 with one line naming the file, memory bounded by the input's real size, nothing written."""

    def mooncake(self, timestamp, tokens, ids):
        return json.dumps({"timestamp": timestamp, "input_length": tokens, "output_length": 1, "hash_ids": ids})

    def test_hostile_prefix_trace_lines(self):
        ok = self.mooncake(0, 1024, [1, 2])
        deep = '{"x": ' + "[" * 100000 + "]" * 100000 + ', "timestamp": 1, "input_length": 1, "output_length": 1}'
        cases = {
            "deep.jsonl": ([ok, deep], ["deep.jsonl:2", "nests deeper than 64"]),
            "absurd.jsonl": ([ok, self.mooncake(1, 10 ** 30, [1])], ["absurd.jsonl:2", "input_length", "larger than"]),
            "negative.jsonl": ([ok, self.mooncake(1, -512, [1])], ["negative.jsonl:2", "negative"]),
            "ids.jsonl": ([ok, self.mooncake(1, 512, list(range(1, 200001)))], ["ids.jsonl:2", "hash_ids", "needs 1"]),
            # an empty prompt was taken as a request that hits nothing (tests/hostile/sweep.py, item 5)
            "empty.jsonl": ([ok, self.mooncake(1, 0, [])], ["empty.jsonl:2", "input_length", "one prompt token"]),
            "no_tokens.jsonl": ([json.dumps({"tokens": [1, 2]}), json.dumps({"tokens": []})],
                                ["no_tokens.jsonl:2", "tokens", "one prompt token"]),
        }
        for name, (lines, needles) in cases.items():
            with self.subTest(trace=name):
                trace = self.tmp / name
                trace.write_text("\n".join(lines) + "\n")
                self.rejected_keeping("cache-sim", trace, "--sizes", "10", inputs=[trace], needles=needles)
                trace.unlink()

    def test_a_long_prompt_of_token_ids_is_read_and_an_endless_line_stops_at_64_mib(self):
        # 300,000 token ids (about 2.3 MB on one line, past the 1 MiB of a text trace) are one request
        ids = self.tmp / "long.jsonl"
        ids.write_text(json.dumps({"tokens": list(range(1000000, 1300000))}) + "\n")
        r = run_lite("cache-sim", ids, "--sizes", "1000", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["result"]["trace"]["prompt_tokens"], 300000)
        ids.unlink()
        # a line that never ends (a list of ids past 64 MiB) stops there, in memory bounded by the line
        endless = self.tmp / "endless.jsonl"
        with open(endless, "w") as f:
            f.write('{"tokens": [')
            chunk = "1234567," * 131072  # 1 MiB
            for _ in range(66):
                f.write(chunk)
        self.assert_rejected("cache-sim", endless, "--format", "tokens", "--sizes", "10", max_rss_mib=400,
                             needles=["endless.jsonl:1", "67108864 bytes", "a prefix trace"])

    def test_token_ids_outside_the_vocabulary_name_the_file(self):
        """A token id the model's embedding cannot look up was blamed on the model ('index out of range in self'):
        in every form lite drives (a KV list scripted, (K, V) pairs traced, stateless traced)."""
        python("import torch\n"
               "torch.save(torch.tensor([[1, 2, 3, 300, 4, 5], [1, 2, 3, 4, 5, 6]]), 'oov.pt')\n"
               "torch.save(torch.tensor([[1, 2, -7, 3, 4, 5], [1, 2, 3, 4, 5, 6]]), 'negative.pt')\n", self.tmp)
        # quantize judges a decoder with a cache on its own terms; a traced one it refuses (it prefills through
        # another method), and a stateless one without --generate is a model with int64 inputs like any other
        quantize_needles = {"kv-list": lambda name, token: [name, token],
                            "kv-pairs": lambda name, token: ["prefill method", "export the decoder scripted"],
                            "stateless": lambda name, token: [name, "outside the table the model looks it up in"]}
        for form in (("llama", "kv-list", "script"), ("gpt2", "kv-pairs", "trace"), ("gpt2", "stateless", "trace")):
            model = build_decoder(self.tmp, *form)
            for name, token in (("oov.pt", "token id 300 (row 0, position 3)"),
                                ("negative.pt", "token id -7 (row 0, position 2)")):
                data = self.tmp / name
                with self.subTest(form=form, prompts=name):
                    self.rejected_keeping("profile", model, "--prompts", data, "--generate", "2", "--iterations", "1",
                                          inputs=[model, data], needles=[name, token, "vocabulary is 256 ids"])
                with self.subTest(form=form, eval=name):
                    self.rejected_keeping("quantize", model, "--mode", "dynamic", "--eval", data, "-o",
                                          self.tmp / "q.pt", inputs=[model, data],
                                          needles=quantize_needles[form[1]](name, token))
                if form[1] == "stateless":  # --generate puts a stateless decoder on a decoder's terms
                    with self.subTest(form=form, eval=name, generate=2):
                        self.rejected_keeping("quantize", model, "--mode", "dynamic", "--eval", data, "--generate",
                                              "2", "-o", self.tmp / "q.pt", inputs=[model, data],
                                              needles=[name, token])

    def test_a_kv_cache_that_is_a_broadcast_view_is_refused(self):
        """A cache whose tensors repeat one stored value declares bytes it does not hold: KV bytes per token
        would be a fiction (it was exit 0 with 2 GiB a token)."""
        # torch.jit.script reads the class's source, so the fixture is a file, not python -c
        (self.tmp / "view_model.py").write_text(
            "import torch\n"
            "from typing import List\n"
            "class M(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.emb = torch.nn.Embedding(256, 8)\n"
            "    def forward(self, ids, cache: List[torch.Tensor]):\n"
            "        logits = self.emb(ids) @ self.emb.weight.t()\n"
            "        ctx = ids.shape[1]\n"
            "        if len(cache) > 0:\n"
            "            ctx = ctx + cache[0].shape[2]\n"
            "        kv = torch.zeros(1).expand(ids.shape[0], 2, ctx, 1 << 28)\n"
            "        return logits, [kv, kv]\n"
            "torch.jit.script(M()).save('view.pt')\n")
        subprocess.run([PYTHON, "view_model.py"], cwd=self.tmp, check=True, capture_output=True, text=True)
        model = self.tmp / "view.pt"
        self.rejected_keeping("profile", model, "--prompt-tokens", "8", "--generate", "4", "--iterations", "1",
                              inputs=[model], needles=["view.pt", "broadcast view"])


class Signals(HostileCase):
    """Cause 7: a signal always ends the command, with its exit code, within 2 s, also where nothing polls."""

    def signal_after_start(self, args, signum=signal.SIGTERM, exe_name="lite-torch", after_s=1.0, ready=None):
        """Starts lite ARGS, waits until its handler is installed (and `ready()` holds), sends `signum`; returns
        (exit code, seconds from the signal to the exit, stderr)."""
        p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=self.tmp)
        deadline = time.monotonic() + 120
        while not _handles(p.pid, signum, exe_name) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        while ready and not ready() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(after_s)
        if p.poll() is not None:
            self.fail("lite ended before the signal: " + p.stderr.read())
        sent = time.monotonic()
        p.send_signal(signum)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            self.fail(f"lite {' '.join(map(str, args))} did not end within 30 s of signal {signum}")
        return p.returncode, time.monotonic() - sent, err

    def assert_ends(self, args, code=143, **kwargs):
        returncode, waited, err = self.signal_after_start(args, **kwargs)
        self.assertEqual(returncode, code, err)
        self.assertLess(waited, 2.0, f"took {waited:.1f} s to end after the signal")
        return err

    def test_sigterm_while_opening_a_fifo_with_no_writer(self):
        fifo = self.tmp / "trace.csv"
        os.mkfifo(fifo)
        self.assert_ends(["cache-sim", fifo, "--format", "csv"], exe_name="lite")
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_sigterm_between_poisson_arrivals(self):
        self.assert_ends(["profile", MODEL, "--qps", "0.01", "--requests", "2"], after_s=2.0)

    def test_sigint_between_poisson_arrivals(self):
        self.assert_ends(["profile", MODEL, "--qps", "0.01", "--requests", "2"], code=130, signum=signal.SIGINT,
                         after_s=2.0)

    def endless_model(self):
        script = self.tmp / "endless.py"
        script.write_text(
            "import torch\n"
            "class Endless(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = torch.nn.Linear(4, 4)\n"
            "    def forward(self, x):\n"
            "        i = 0\n"
            "        while i >= 0:\n"
            "            x = x * 1.0\n"
            "            i += 1\n"
            "        return self.fc(x)\n"
            "torch.jit.script(Endless().eval()).save('endless.pt')\n")
        subprocess.run([PYTHON, script], cwd=self.tmp, check=True, capture_output=True)
        script.unlink()
        return self.tmp / "endless.pt"

    def test_sigterm_in_an_endless_forward(self):
        self.endless_model()
        self.assert_ends(["profile", self.tmp / "endless.pt", "--input", "1x4", "--iterations", "1"], after_s=2.0)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["endless.pt"])

    def test_quantize_budget_bounds_an_endless_forward(self):
        model = self.endless_model()
        start = time.monotonic()
        r = run_lite("quantize", model, "--input", "1x4", "--mode", "dynamic", "--budget", "1", "-o", self.tmp / "q.pt",
                     timeout=120)
        self.assert_bad_input(r, "--budget")
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["endless.pt"])

    def test_profile_budget_bounds_an_endless_forward(self):
        model = self.endless_model()
        start = time.monotonic()
        r = run_lite("profile", model, "--input", "1x4", "--budget", "1", timeout=120)
        self.assert_bad_input(r, "--budget", "still running 32 s into one measurement under a budget of 1 s")
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["endless.pt"])

    def distill_args(self, *extra):
        student = self.copy(MODEL, "student.pt")
        return ["distill", "--teacher", MODEL, "--student", student, "--data", EVAL, "--epochs", "50", "--threads",
                "1", "--latency-iterations", "0", "-o", self.tmp / "s.pt", *extra]

    def test_sigterm_during_distill_training_exits_143(self):
        args = self.distill_args("--checkpoint-dir", self.tmp / "ckpt")
        self.assert_ends(args, after_s=4.0)
        self.assertFalse((self.tmp / "s.pt").exists())

    def test_sigterm_to_distill_launch_local(self):
        args = self.distill_args("--launch-local", "2")
        self.assert_ends(args, after_s=6.0)
        time.sleep(0.5)
        leftover = subprocess.run(["pgrep", "-f", str(self.tmp / "student.pt")], capture_output=True, text=True)
        self.assertEqual(leftover.stdout.strip(), "", "worker processes outlived the launcher")


if __name__ == "__main__":
    unittest.main()
