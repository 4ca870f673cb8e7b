"""End-to-end tests of `lite distill`: a short distillation on a Fashion-MNIST subset with the bundled CNN as
teacher and a small CNN student scripted here improves the freshly initialised student; the artifact loads in
stock PyTorch, keeps train/eval semantics and carries its provenance; checkpoints, Ctrl-C and --resume; the NaN
gate; and every bad-input path (exit 2, one line, nothing written).

Runs under Debian's /usr/bin/python3 (torch). Every run is small (a few hundred to two thousand samples, one or
two epochs, no latency timing unless a test needs it) so the file stays within seconds per test on 2 cores.
"""
import json
import pathlib
import signal
import subprocess
import tempfile
import unittest

import torch

from litetest import DATA, LITE, LiteTestCase, run_lite

FMNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")
TEACHER = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
TRAIN_IMAGES = FMNIST / "train-images-idx3-ubyte.gz"
TRAIN_LABELS = FMNIST / "train-labels-idx1-ubyte.gz"
QUICK = ["--threads", "1", "--eval", EVAL, "--eval-samples", "500"]


class Student(torch.nn.Module):
    """A CNN with about a seventh of the teacher's MACs; batch norm and dropout make train/eval differ."""

    def __init__(self, classes=10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.classifier = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Dropout(0.2),
                                              torch.nn.Linear(32 * 7 * 7, 64), torch.nn.ReLU(),
                                              torch.nn.Linear(64, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def script_student(path, classes=10, seed=0):
    torch.manual_seed(seed)
    torch.jit.script(Student(classes)).save(str(path))
    return path


def distill(*args, json_output=True):
    """Runs lite distill ARGS (--json); returns (exit code, parsed JSON or None, stderr)."""
    r = run_lite("distill", *map(str, args), *(["--json"] if json_output else []))
    doc = json.loads(r.stdout) if json_output and r.stdout.strip() else None
    return r.returncode, doc, r.stderr


def provenance(path):
    extra = {"lite.json": ""}
    module = torch.jit.load(str(path), _extra_files=extra)
    return module, json.loads(extra["lite.json"])


class DistillFashionMnist(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.fixtures = pathlib.Path(tempfile.mkdtemp(prefix="lite_distill_fixtures_"))
        cls.student = script_student(cls.fixtures / "student.pt")
        cls.student5 = script_student(cls.fixtures / "student5.pt", classes=5)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.fixtures, ignore_errors=True)

    def base(self, out, *extra, samples=2000, latency_iterations=0):
        return ["--teacher", TEACHER, "--student", self.student, "--data", TRAIN_IMAGES, "--data-labels", TRAIN_LABELS,
                "--samples", samples, "--latency-iterations", latency_iterations, "-o", out, *QUICK, *extra]

    def test_short_distillation_improves_a_fresh_student_and_writes_a_loadable_artifact(self):
        out = self.tmp / "student.distilled.pt"
        code, doc, err = distill(*self.base(out, "--epochs", "2", latency_iterations=5))
        self.assertEqual(code, 0, err)
        r = doc["result"]
        self.assertEqual(r["metric"], "top-1 accuracy")
        self.assertEqual(r["teacher_logits"], "cached")
        self.assertEqual(len(r["epochs"]), 2)
        before, after = r["student_before"]["metric_percent"], r["student"]["metric_percent"]
        self.assertLess(before, 30)                      # a fresh 10-class student guesses
        self.assertGreater(after, before + 40)           # two short epochs teach it most of the task
        self.assertGreater(r["teacher"]["metric_percent"], 85)
        self.assertLess(r["student"]["macs"], r["teacher"]["macs"] / 4)
        self.assertLess(r["student"]["parameters"], r["teacher"]["parameters"])
        self.assertIsNotNone(r["student"]["latency_ms_batch1"])
        self.assertGreater(r["train_samples_per_s"], 0)
        self.assertTrue(r["gates"]["passed"])
        self.assertEqual(err, "", "--json prints nothing besides the document")

        # Stock PyTorch loads it, in eval mode, with the accuracy lite reported.
        module, prov = provenance(out)
        self.assertFalse(module.training)
        data = torch.load(str(EVAL))
        x, y = data["x"][:500], data["y"][:500]
        with torch.no_grad():
            acc = 100.0 * (module(x).argmax(1) == y).float().mean().item()
        self.assertAlmostEqual(acc, after, places=3)
        # train/eval semantics survive: eval is deterministic and batch independent, train mode is not
        with torch.no_grad():
            one = module(x[:1])
            self.assertTrue(torch.allclose(one, module(x[:8])[:1], atol=1e-5))
            module.train()
            self.assertTrue(module.training and getattr(module.features, '1').training)
            self.assertFalse(torch.allclose(module(x[:8]), module(x[:8])))  # dropout
        self.assertEqual(prov["transform"], "distill")
        d = prov["details"]
        self.assertEqual(d["teacher"]["path"], str(TEACHER))
        self.assertEqual(len(d["teacher"]["sha256"]), 64)
        self.assertEqual(d["hyperparameters"]["temperature"], 4.0)
        self.assertEqual(d["epochs_run"], 2)
        self.assertEqual(d["best_metric_percent"], after)
        self.assertEqual(prov["figures"]["teacher_metric_percent"], r["teacher"]["metric_percent"])
        self.assertEqual(prov["figures"]["student_before_percent"], before)
        self.assertEqual(prov["input_model"]["path"], str(self.student))

    def test_same_command_same_artifact_bytes(self):
        """A short distillation (shuffling, dropout: both seeded) run twice: bit-identical artifacts."""
        out = self.tmp / "twice.pt"
        self.assert_same_artifact_twice("distill", *self.base(out, "--epochs", "1", "--seed", "7", samples=500),
                                        output=out)

    def test_text_report_sets_teacher_against_student(self):
        out = self.tmp / "s.pt"
        r = run_lite("distill", *map(str, self.base(out, "--epochs", "1", samples=300)))
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ["teacher", "student before", "student after", "MACs per sample", "parameters", "file size",
                       "latency batch 1 (median ms)", "train loss", "teacher logits cached", "best epoch"]:
            self.assertIn(needle, r.stdout)
        self.assertRegex(r.stderr, r"^epoch 1/1: loss [0-9.]+, validation [0-9.]+%.*samples/s.*\n$")

    def test_label_free_distillation_reports_agreement_with_the_teacher(self):
        x = self.tmp / "x.pt"
        torch.save(torch.load(str(EVAL))["x"][:300], str(x))
        out = self.tmp / "s.pt"
        code, doc, err = distill("--teacher", TEACHER, "--student", self.student, "--data", x, "-o", out,
                                 "--epochs", "1", "--threads", "1", "--latency-iterations", "0")
        self.assertEqual(code, 0, err)
        r = doc["result"]
        self.assertEqual(r["metric"], "top-1 agreement with the teacher")
        self.assertEqual(r["alpha"], 1.0)
        self.assertEqual(r["teacher"]["metric_percent"], 100.0)

    def test_checkpoint_ctrl_c_and_resume(self):
        ck = self.tmp / "ck"
        out = self.tmp / "s.pt"
        args = ["distill", *map(str, self.base(out, "--epochs", "4", "--checkpoint-dir", ck, samples=600))]
        p = subprocess.Popen([LITE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = p.stderr.readline()  # "epoch 1/4: ..." once an epoch is done
        self.assertIn("epoch 1/4", first)
        p.send_signal(signal.SIGINT)
        rest_out, rest_err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, rest_err)
        self.assertIn("checkpoint saved to", rest_err)
        self.assertTrue((ck / "last.ckpt").is_file())
        self.assertFalse(out.exists(), "Ctrl-C writes no artifact")
        # Other settings than the checkpoint's are refused, naming what differs.
        self.assert_rejected("distill", *self.base(out, "--epochs", "4", "--lr", "0.01",
                                                   "--resume", ck / "last.ckpt", samples=600), needles=["last.ckpt", "lr"])
        # The same settings continue where it stopped (bit for bit: tests/unit/distill/test_training.cpp).
        code, doc, err = distill(*self.base(out, "--epochs", "4", "--resume", ck / "last.ckpt", samples=600))
        self.assertEqual(code, 0, err)
        self.assertGreater(doc["result"]["start_epoch"], 1)
        self.assertEqual(len(doc["result"]["epochs"]), 4)
        self.assertTrue(out.is_file())

    def test_a_nan_loss_stops_training_keeps_the_best_epoch_and_exits_1(self):
        out = self.tmp / "s.pt"
        code, doc, err = distill(*self.base(out, "--epochs", "2", "--optimizer", "sgd", "--lr", "1e30",
                                            "--warmup-fraction", "0", samples=300))
        self.assertEqual(code, 1, err)
        r = doc["result"]
        self.assertEqual(r["gates"]["failed"], ["finite_loss"])
        self.assertIn("loss became NaN", r["stopped"])
        self.assertTrue(any("training stopped" in n for n in r["notes"]))
        module = torch.jit.load(str(out))
        self.assertTrue(all(torch.isfinite(p).all() for p in module.parameters()))

    def test_bad_input_is_refused_with_one_line_and_nothing_written(self):
        out = self.tmp / "out.pt"
        empty = self.tmp / "empty.pt"
        empty.write_bytes(b"")
        wrong_shape = self.tmp / "rgb.pt"
        torch.save(torch.randn(8, 3, 32, 32), str(wrong_shape))
        short_labels = self.tmp / "short.pt"
        data = torch.load(str(EVAL))
        torch.save({"x": data["x"][:10], "y": data["y"][:9]}, str(short_labels))
        not_a_folder = self.tmp / "file.txt"
        not_a_folder.write_text("x")
        snapshot_files = [empty, wrong_shape, short_labels, not_a_folder]
        self.assertTrue(all(f.exists() for f in snapshot_files))

        def args(data=EVAL, student=None, output=out, *extra):
            return ["--teacher", TEACHER, "--student", student or self.student, "--data", data, "-o", output,
                    "--latency-iterations", "0", *extra]

        cases = [
            ("empty data", args(empty), [str(empty), "empty"]),
            ("data the teacher rejects", args(wrong_shape), [str(wrong_shape), "teacher", "do not fit"]),
            ("label count", args(short_labels), [str(short_labels), "9", "10"]),
            ("idx labels of another split", args(TRAIN_IMAGES, None, out, "--data-labels",
                                                 FMNIST / "t10k-labels-idx1-ubyte.gz"), ["10000", "60000"]),
            ("output shapes differ", args(EVAL, self.student5), [str(self.student5), "outputs shape", "[2, 5]"]),
            ("output folder missing", args(EVAL, None, self.tmp / "nowhere" / "s.pt"), ["nowhere", "folder"]),
            ("output folder is a file", args(EVAL, None, not_a_folder / "s.pt"), ["file.txt", "folder"]),
            ("lr zero", args(EVAL, None, out, "--lr", "0"), ["--lr", "greater than 0"]),
            ("lr negative", args(EVAL, None, out, "--lr", "-0.1"), ["--lr"]),
            ("lr nan", args(EVAL, None, out, "--lr", "nan"), ["--lr", "finite"]),
            ("temperature zero", args(EVAL, None, out, "--temperature", "0"), ["--temperature"]),
            ("temperature negative", args(EVAL, None, out, "--temperature", "-2"), ["--temperature"]),
            ("alpha above 1", args(EVAL, None, out, "--alpha", "1.5"), ["--alpha", "between 0 and 1"]),
            ("alpha below 0", args(EVAL, None, out, "--alpha", "-0.5"), ["--alpha"]),
            ("epochs zero", args(EVAL, None, out, "--epochs", "0"), ["--epochs"]),
            ("batch zero", args(EVAL, None, out, "--train-batch", "0"), ["--train-batch"]),
            ("unknown optimizer", args(EVAL, None, out, "--optimizer", "adma"), ["--optimizer", "did you mean 'adam'"]),
            ("missing teacher", ["--teacher", self.tmp / "none.pt", "--student", self.student, "--data", EVAL,
                                 "-o", out], ["none.pt"]),
            ("output over the student", args(EVAL, None, self.student), ["student.pt", "overwrite"]),
        ]
        for name, case_args, needles in cases:
            with self.subTest(case=name):
                self.assert_rejected("distill", *case_args, needles=needles, watch=[self.fixtures])
        self.assertFalse(out.exists())

    def test_student_from_prune_recovers_accuracy_pruning_took(self):
        out = self.tmp / "pruned.pt"
        code, doc, err = distill("--teacher", TEACHER, "--student-from-prune", "0.5", "--data", TRAIN_IMAGES,
                                 "--data-labels", TRAIN_LABELS, "--samples", 2000, "--epochs", 1, "--latency-iterations",
                                 0, "-o", out, *QUICK)
        self.assertEqual(code, 0, err)
        r = doc["result"]
        p = r["prune"]
        self.assertEqual((p["ratio"], p["criterion"]), (0.5, "l1"))
        self.assertGreater(p["groups_pruned"], 0)
        self.assertLess(p["parameters"]["after"], p["parameters"]["before"] * 0.5)
        self.assertLess(p["macs"]["after"], p["macs"]["before"] * 0.5)
        self.assertEqual(p["parameters"]["after"], r["student"]["parameters"])
        self.assertEqual(p["metric_pruned_percent"], r["student_before"]["metric_percent"])
        self.assertLess(p["metric_pruned_percent"], p["metric_teacher_percent"] - 5)    # pruning costs accuracy
        self.assertGreater(p["metric_recovered_percent"], p["metric_pruned_percent"] + 5)  # distillation wins it back
        module, prov = provenance(out)
        self.assertFalse(module.training)
        self.assertEqual(sum(t.numel() for t in module.parameters()), p["parameters"]["after"])
        self.assertEqual(prov["details"]["student_from_prune"]["ratio"], 0.5)
        self.assertEqual(prov["details"]["student_from_prune"]["criterion"], "l1")
        self.assertEqual(prov["figures"]["prune"]["metric_pruned_percent"], p["metric_pruned_percent"])
        self.assertEqual(prov["figures"]["prune"]["metric_recovered_percent"], p["metric_recovered_percent"])
        self.assertEqual(prov["input_model"]["path"], str(TEACHER))
        self.assertEqual(doc["result"]["options"]["student_from_prune"], 0.5)

    def test_student_from_prune_bad_input(self):
        out = self.tmp / "out.pt"
        linear = self.tmp / "linear.pt"
        torch.jit.script(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10))).save(str(linear))

        def args(*extra, teacher=TEACHER):
            return ["--teacher", teacher, "--data", EVAL, "--samples", 50, "-o", out, "--latency-iterations", 0, *extra]

        cases = [
            ("both students", args("--student", self.student, "--student-from-prune", "0.5"),
             ["--student-from-prune", "--student"]),
            ("no student", args(), ["--student", "--student-from-prune"]),
            ("ratio zero", args("--student-from-prune", "0"), ["--student-from-prune", "between 0 and 1"]),
            ("ratio one", args("--student-from-prune", "1"), ["--student-from-prune", "between 0 and 1"]),
            ("ratio above one", args("--student-from-prune", "1.5"), ["--student-from-prune"]),
            ("ratio nan", args("--student-from-prune", "nan"), ["--student-from-prune", "finite"]),
            ("unknown criterion", args("--student-from-prune", "0.5", "--criterion", "l3"), ["--criterion", "l1"]),
            ("nothing prunable", args("--student-from-prune", "0.5", teacher=linear),
             [str(linear), "nothing prunable", "--student"]),
        ]
        for name, case_args, needles in cases:
            with self.subTest(case=name):
                self.assert_rejected("distill", *case_args, needles=needles, watch=[self.fixtures])
        self.assertFalse(out.exists())

    def test_data_over_the_memory_budget_is_streamed_in_chunks(self):
        import numpy
        data = torch.load(str(EVAL))
        x, y = self.tmp / "x.npy", self.tmp / "y.npy"
        numpy.save(str(x), data["x"][:600].numpy())
        numpy.save(str(y), data["y"][:600].numpy())
        out = self.tmp / "s.pt"
        def streamed(data=x, labels=y):
            return ["--teacher", TEACHER, "--student", self.student, "--data", data, "--data-labels", labels, "--epochs", 1,
                    "--latency-iterations", 0, "-o", out, *QUICK]
        common = streamed()
        code, doc, err = distill(*common, "--data-memory-mb", 1)  # 1.8 MB of samples
        self.assertEqual(code, 0, err)
        r = doc["result"]
        self.assertEqual(r["data_path"], "streamed in chunks of 83 samples")
        self.assertEqual(r["data_chunk_samples"], 83)
        self.assertIn("exceeds data_memory_mb 1", r["data_path_reason"])
        self.assertEqual(r["teacher_logits"], "cached")
        self.assertEqual(r["train_samples"], 600)
        self.assertGreater(r["student"]["metric_percent"], r["student_before"]["metric_percent"] + 20)
        self.assertEqual(provenance(out)[1]["details"]["data"]["chunk_samples"], 83)
        text = run_lite("distill", *map(str, common), "--data-memory-mb", "100")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("data: loaded whole", text.stdout)

        # streamed data is checked before training like data loaded whole
        pt_labels, cut = self.tmp / "y.pt", self.tmp / "cut.npy"
        torch.save(data["y"][:600], str(pt_labels))
        cut.write_bytes(x.read_bytes()[:-5000])
        out.unlink()
        bad = [("torch.save labels", streamed(labels=pt_labels), [str(pt_labels), ".npy or idx", "--data-memory-mb"]),
               ("truncated .npy", streamed(data=cut), [str(cut), "truncated"])]
        for name, args, needles in bad:
            with self.subTest(case=name):
                self.assert_rejected("distill", *args, "--data-memory-mb", 1, needles=needles)

    def test_gzip_idx_data_over_the_memory_budget_streams_from_an_inflated_copy(self):
        import gzip
        import struct
        data = torch.load(str(EVAL))
        images = (data["x"][:600, 0] * 255).round().to(torch.uint8)  # [600, 28, 28], as Fashion-MNIST ships
        x, y = self.tmp / "train-images-idx3-ubyte.gz", self.tmp / "train-labels-idx1-ubyte.gz"
        x.write_bytes(gzip.compress(struct.pack(">IIII", 0x803, 600, 28, 28) + images.numpy().tobytes()))
        y.write_bytes(gzip.compress(struct.pack(">II", 0x801, 600) + data["y"][:600].to(torch.uint8).numpy().tobytes()))
        tmpdir = self.tmp / "tmpdir"
        tmpdir.mkdir()
        out = self.tmp / "s.pt"
        args = ["--teacher", TEACHER, "--student", self.student, "--data", x, "--data-labels", y, "--epochs", 1,
                "--latency-iterations", 0, "-o", out, *QUICK, "--data-memory-mb", 1, "--json"]
        r = run_lite("distill", *args, env={"TMPDIR": str(tmpdir)})  # 1.9 MB of float samples over 1 MB
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout)["result"]
        self.assertEqual(result["data_path"], "streamed in chunks of 83 samples")
        self.assertIn("inflated once into a temporary file", result["data_path_reason"])
        self.assertEqual(result["train_samples"], 600)
        self.assertGreater(result["student"]["metric_percent"], result["student_before"]["metric_percent"] + 20)
        self.assertEqual(list(tmpdir.iterdir()), [], "the inflated copy was left behind")

        # a .gz whose data ends early is refused before training, and leaves nothing in TMPDIR either
        x.write_bytes(gzip.compress(struct.pack(">IIII", 0x803, 600, 28, 28) + images.numpy().tobytes()[:-5000]))
        out.unlink()
        r = run_lite("distill", *args, env={"TMPDIR": str(tmpdir)})
        self.assert_bad_input(r, str(x), "truncated idx data")
        self.assertEqual(list(tmpdir.iterdir()), [])
        self.assertFalse(out.exists())

    def test_verb_page_documents_every_flag(self):
        self.assert_verb_page_documents_every_flag("distill")

    def test_the_old_spellings_of_the_renamed_options_still_work_and_warn(self):
        # --labels and --batch were distill's names for the training labels and batch; they are --data-labels and
        # --train-batch now (--labels labels --eval in every other verb), and the old spellings are read, with a
        # warning each, until the next release.
        new = run_lite("distill", "--teacher", TEACHER, "--student", self.student, "--data", TRAIN_IMAGES,
                       "--data-labels", TRAIN_LABELS, "--train-batch", 32, "--dump-config")
        old = run_lite("distill", "--teacher", TEACHER, "--student", self.student, "--data", TRAIN_IMAGES,
                       "--labels", TRAIN_LABELS, "--batch", 32, "--dump-config")
        self.assertEqual((new.returncode, old.returncode), (0, 0), old.stderr)
        self.assertEqual(json.loads(old.stdout), json.loads(new.stdout))
        self.assertEqual(new.stderr, "")
        self.assertEqual(old.stderr.splitlines(), [
            "lite distill: warning: --labels is renamed --data-labels; the old name works until the next release",
            "lite distill: warning: --batch is renamed --train-batch; the old name works until the next release"])
        # The same in a config file (and so in a recipe step): the old key is read, with the same warning.
        config = self.tmp / "old.json"
        config.write_text(json.dumps({"teacher": str(TEACHER), "student": str(self.student), "data": str(TRAIN_IMAGES),
                                      "labels": str(TRAIN_LABELS), "batch": 32}))
        from_file = run_lite("distill", "--config", config, "--dump-config")
        self.assertEqual(from_file.returncode, 0, from_file.stderr)
        self.assertEqual(json.loads(from_file.stdout), json.loads(new.stdout))
        self.assertEqual(len(from_file.stderr.splitlines()), 2, from_file.stderr)
        self.assertIn("--labels is renamed --data-labels", from_file.stderr)
        # Both names at once are one option given twice.
        both = self.tmp / "both.json"
        both.write_text(json.dumps({"teacher": str(TEACHER), "student": str(self.student), "data": str(TRAIN_IMAGES),
                                    "batch": 32, "train_batch": 16}))
        self.assert_rejected("distill", "--config", both, needles=["batch", "--train-batch", "old name"])


if __name__ == "__main__":
    unittest.main()
