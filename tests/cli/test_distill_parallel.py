"""End-to-end tests of data-parallel `lite distill` (issue 11) over loopback Gloo: two local worker processes train
identical weights on every rank (checksums in the report, an artifact stock PyTorch loads), and without batch norm
or dropout the same weights as one process on the same global batch; torchrun's variables start a job of two lite
processes; a rank killed mid-training ends the job with exit 1, one line per rank, the last checkpoint kept, and a
2-process resume from it reproduces the uninterrupted run bit for bit; bad setups (nobody at the master address,
a rank that never comes, mismatched world sizes, conflicting flags) exit 2 with one line.

Runs under Debian's /usr/bin/python3 (torch). Every run is a few hundred samples and one or two epochs.
"""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import tempfile
import unittest

import torch

from litetest import DATA, LITE, LiteTestCase, run_lite
from test_distill import EVAL, TEACHER, TRAIN_IMAGES, TRAIN_LABELS, script_student

SAMPLES = 384  # 6 global batches of 64 per epoch


class Mlp(torch.nn.Module):
    """No batch norm and no dropout: data parallel must then train what one process trains."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, 10))

    def forward(self, x):
        return self.net(x)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def weights(path):
    return [p.detach() for p in torch.jit.load(str(path)).state_dict().values()]


class DistillParallel(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.fixtures = pathlib.Path(tempfile.mkdtemp(prefix="lite_distill_parallel_"))
        cls.student = script_student(cls.fixtures / "student.pt")
        torch.manual_seed(0)
        cls.mlp = cls.fixtures / "mlp.pt"
        torch.jit.script(Mlp()).save(str(cls.mlp))
        # The uninterrupted 2-process run the fault and resume tests compare with.
        cls.reference = cls.fixtures / "reference.pt"
        r = run_lite("distill", *cls.args(cls, cls.reference), "--launch-local", "2", "--json")
        cls.reference_run = (r.returncode, r.stdout, r.stderr)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.fixtures, ignore_errors=True)

    def args(self, out, student=None, epochs=2, timeout=30, batch=64, teacher=TEACHER):
        return ["--teacher", teacher, "--student", student or self.student, "--data", TRAIN_IMAGES,
                "--data-labels", TRAIN_LABELS, "--samples", SAMPLES, "--eval", EVAL, "--eval-samples", 300,
                "--epochs", epochs, "--train-batch", batch, "--latency-iterations", 0, "--timeout", timeout, "-o", out]

    def test_two_local_processes_train_identical_weights_and_write_a_loadable_artifact(self):
        code, stdout, stderr = self.reference_run
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stderr, "", "--json: nothing but the document; the other rank prints nothing")
        d = json.loads(stdout)["result"]["distributed"]
        self.assertEqual(d["world_size"], 2)
        self.assertEqual([f["rank"] for f in d["ranks"]], [0, 1])
        self.assertEqual(d["ranks"][0]["weights_sha256"], d["ranks"][1]["weights_sha256"])
        self.assertEqual(len(d["ranks"][0]["weights_sha256"]), 64)
        self.assertTrue(d["weights_identical"])
        self.assertEqual(sum(f["samples"] for f in d["ranks"]), 2 * SAMPLES)  # 2 epochs, each sample once per epoch
        for f in d["ranks"]:
            self.assertGreater(f["samples_per_s"], 0)
            self.assertGreaterEqual(f["allreduce_share"], 0)
            self.assertLess(f["allreduce_share"], 1)
        self.assertGreater(d["scaling_efficiency"], 0)
        self.assertGreater(d["buckets"], 0)
        self.assertEqual(d["allreduce_bytes_per_step"], 4 * sum(p.numel() for p in torch.jit.load(str(self.student)).parameters()))
        module = torch.jit.load(str(self.reference))
        self.assertFalse(module.training)
        x = torch.load(str(EVAL))["x"][:8]
        self.assertEqual(tuple(module(x).shape), (8, 10))

    def test_text_report_has_the_per_rank_table(self):
        out = self.tmp / "s.pt"
        r = run_lite("distill", *self.args(out, epochs=1), "--launch-local", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        for needle in ["data parallel: 2 processes over gloo", "all-reduce share", "scaling efficiency",
                       "weights identical on every rank: yes", "batch norm: per-rank"]:
            self.assertIn(needle, r.stdout)
        self.assertEqual(r.stderr.count("epoch 1/1"), 1, "only rank 0 reports progress")

    def assert_same_training(self, one, many):
        """Weights within float reduction tolerance; the sharded validations (each rank scores its part of the
        300 samples, the counts are summed) give the metrics of one process, within one sample's flip."""
        for a, b in zip(weights(one[0]), weights(many[0])):
            self.assertTrue(torch.allclose(a, b, atol=1e-5, rtol=1e-4), (a - b).abs().max())
        self.assertEqual(many[1]["teacher"]["metric_percent"], one[1]["teacher"]["metric_percent"])
        self.assertEqual(many[1]["student_before"]["metric_percent"], one[1]["student_before"]["metric_percent"])
        for e1, e2 in zip(one[1]["epochs"], many[1]["epochs"], strict=True):
            self.assertLessEqual(abs(e1["metric_percent"] - e2["metric_percent"]), 100 / 300 + 1e-9)

    def distill_json(self, *args):
        r = run_lite("distill", *args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["result"]

    def test_without_batch_norm_two_and_three_processes_equal_one_on_the_same_global_batch(self):
        one = self.tmp / "one.pt"
        one_result = self.distill_json(*self.args(one, self.mlp), "--threads", "1")
        self.assertFalse(all(torch.equal(a, b) for a, b in zip(weights(one), weights(self.mlp))), "it trained")
        # 3 splits each global batch of 64 unevenly (21, 21, 22): weighted gradients. --bucket-mb 0.0001 (105
        # bytes) cuts the MLP's gradients into 3 buckets (reverse order: 10 + 320 floats, 32, 25,088) that
        # backward's hooks start one by one, in order.
        for processes, bucket_mb, buckets in ((2, 1, 1), (3, 1, 1), (2, 0.0001, 3)):
            with self.subTest(processes=processes, bucket_mb=bucket_mb):
                many = self.tmp / f"many{processes}_{bucket_mb}.pt"
                result = self.distill_json(*self.args(many, self.mlp), "--launch-local", processes,
                                           "--bucket-mb", bucket_mb)
                self.assertEqual(result["distributed"]["world_size"], processes)
                self.assertEqual(result["distributed"]["buckets"], buckets)
                self.assert_same_training((one, one_result), (many, result))

    def test_streamed_data_two_processes_equal_one(self):
        # 384 samples of 3 KB over a 1 MB budget: streamed in chunks of 83; each rank computes the teacher's
        # logits of its half in chunk-sized reads, then the halves are gathered.
        import numpy
        x, y = self.tmp / "x.npy", self.tmp / "y.npy"
        data = torch.load(str(EVAL))
        numpy.save(str(x), data["x"][:SAMPLES].numpy())
        numpy.save(str(y), data["y"][:SAMPLES].numpy())
        def args(out):
            a = self.args(out, self.mlp, epochs=1)
            a[a.index("--data") + 1], a[a.index("--data-labels") + 1] = x, y
            return [*a, "--data-memory-mb", 1]
        one, many = self.tmp / "one.pt", self.tmp / "many.pt"
        one_result = self.distill_json(*args(one), "--threads", "1")
        self.assertEqual(one_result["data_chunk_samples"], 83)
        self.assertEqual(one_result["teacher_logits"], "cached")
        result = self.distill_json(*args(many), "--launch-local", 2)
        self.assertEqual(result["data_chunk_samples"], 83)
        self.assert_same_training((one, one_result), (many, result))

    def test_torchrun_variables_start_a_job(self):
        out = self.tmp / "s.pt"
        port = str(free_port())
        procs = []
        for rank in (0, 1):
            env = dict(os.environ, WORLD_SIZE="2", RANK=str(rank), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=port)
            procs.append(subprocess.Popen([LITE, "distill", *map(str, self.args(out, self.mlp, epochs=1)), "--threads",
                                           "1", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        (out0, err0), (out1, err1) = [p.communicate(timeout=300) for p in procs]
        self.assertEqual(procs[0].returncode, 0, err0)
        self.assertEqual(procs[1].returncode, 0, err1)
        self.assertEqual((out1, err1), ("", ""), "rank 1 prints nothing")
        d = json.loads(out0)["result"]["distributed"]
        self.assertEqual(d["source"], "environment (torchrun)")
        self.assertEqual(d["master"], "127.0.0.1:" + port)
        self.assertTrue(d["weights_identical"])
        self.assertTrue(out.is_file())

    def test_a_killed_rank_ends_the_job_with_exit_1_and_a_resume_reproduces_the_uninterrupted_run(self):
        self.assertEqual(self.reference_run[0], 0, self.reference_run[2])
        out, ck = self.tmp / "s.pt", self.tmp / "ck"
        env = {"LITE_DISTILL_TEST_CRASH": "1:8"}  # rank 1 dies before global step 9 (epoch 2, step 3)
        r = run_lite("distill", *self.args(out), "--launch-local", "2", "--checkpoint-dir", ck, env=env, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("epoch ")]
        self.assertEqual(len(lines), 2, r.stderr)  # one line per rank
        self.assertRegex(lines[0], fr"^lite distill: error: rank 0: lost rank 1 \(host {re.escape(socket.gethostname())}\) during the "
                                   r"gradient all-reduce of global step 9")
        self.assertIn("--resume " + str(ck / "last.ckpt"), lines[0])
        self.assertEqual(lines[1], "lite distill: error: rank 1: killed by signal 9 (Killed)")
        self.assertTrue((ck / "last.ckpt").is_file())
        self.assertFalse(out.exists())
        r = run_lite("distill", *self.args(out), "--launch-local", "2", "--resume", ck / "last.ckpt", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["result"]["start_epoch"], 2)
        for a, b in zip(weights(out), weights(self.reference)):
            self.assertTrue(torch.equal(a, b), (a - b).abs().max())

    def test_ctrl_c_reaches_every_worker_once_and_rank_0_saves_the_checkpoint(self):
        out, ck = self.tmp / "s.pt", self.tmp / "ck"
        p = subprocess.Popen([LITE, "distill", *map(str, self.args(out, epochs=40)), "--launch-local", "2",
                              "--checkpoint-dir", str(ck)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = p.stderr.readline()  # "epoch 1/40: ..." once an epoch is done
        self.assertIn("epoch 1/40", first)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, stderr)
        lines = [l for l in stderr.splitlines() if l.strip() and not l.startswith("epoch ")]
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn("checkpoint saved to " + str(ck / "last.ckpt"), lines[0])
        self.assertTrue((ck / "last.ckpt").is_file())
        self.assertFalse(out.exists())
        self.assertEqual(stdout, "")

    def test_bad_setups_exit_2_with_one_line(self):
        out = self.tmp / "s.pt"
        base = self.args(out, self.mlp, epochs=1)
        short = self.args(out, self.mlp, epochs=1, timeout=2)
        nobody = f"127.0.0.1:{free_port()}"
        cases = [
            ("nobody at the master", [*short, "--world-size", 2, "--rank", 1, "--master", nobody],
             ["rank 1", nobody, "--timeout"]),
            ("rank 0 alone", [*short, "--world-size", 2, "--rank", 0, "--master", f"127.0.0.1:{free_port()}"],
             ["rank 0", "rank 1 of 2 did not join"]),
            ("rank outside the world", [*base, "--world-size", 2, "--rank", 2, "--master", nobody], ["--rank"]),
            ("no master", [*base, "--world-size", 2], ["--master"]),
            ("bad master", [*base, "--world-size", 2, "--master", "127.0.0.1"], ["--master", "ADDR:PORT"]),
            ("launcher and world flags", [*base, "--launch-local", 2, "--rank", 0], ["--launch-local", "--rank"]),
            ("bucket of zero MB", [*base, "--bucket-mb", 0], ["--bucket-mb"]),
            ("bucket not finite", [*base, "--bucket-mb", "nan"], ["--bucket-mb"]),
            ("batch too small", [*self.args(out, self.mlp, epochs=1, batch=3), "--launch-local", 2],
             ["--train-batch", "4"]),
            ("a missing file under the launcher",
             [*self.args(out, self.mlp, epochs=1, teacher=self.tmp / "none.pt"), "--launch-local", 2], ["none.pt"]),
        ]
        for name, case_args, needles in cases:
            with self.subTest(case=name):
                self.assert_rejected("distill", *case_args, needles=needles)
        r = run_lite("distill", *base, env={"WORLD_SIZE": "two"})
        self.assert_bad_input(r, "WORLD_SIZE", "two")

    def test_mismatched_world_sizes_end_both_ranks_with_exit_2(self):
        out = self.tmp / "s.pt"
        master = f"127.0.0.1:{free_port()}"
        procs = [subprocess.Popen([LITE, "distill", *map(str, self.args(out, self.mlp, epochs=1, timeout=10)),
                                   "--world-size", size, "--rank", rank, "--master", master],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for size, rank in (("2", "0"), ("3", "1"))]
        results = [p.communicate(timeout=120) for p in procs]
        for p, (stdout, stderr), rank in zip(procs, results, (0, 1)):
            self.assertEqual(p.returncode, 2, stderr)
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
            self.assertIn(f"rank {rank}:", stderr)
            self.assertIn("world", stderr)
        self.assertFalse(out.exists())

    def test_verb_page_documents_every_flag(self):
        self.assert_verb_page_documents_every_flag("distill")


if __name__ == "__main__":
    unittest.main()
