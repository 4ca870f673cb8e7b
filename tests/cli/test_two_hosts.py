"""lite's two distributed paths across hosts (issue 39), with the hosts made inside this machine: network namespaces
joined by a bridge (netns_hosts.py), each with its own address, so every byte between ranks crosses a veth link.

- cache-sim over MPI: mpirun, started in host 0, places one rank per host from a hostfile and starts the other hosts'
  daemons through an rsh agent that enters their namespace; the records on two and three hosts equal a
  single-process run, and so do a prefix study's rows on two.
- distill over Gloo: one rank per host started as srun starts it (SLURM_NTASKS, SLURM_PROCID, MASTER_ADDR of host
  0), the interface named with GLOO_SOCKET_IFNAME; the weights equal one process's on the same global batch. Then
  as torchrun starts it (WORLD_SIZE, RANK): a rank's process killed and a host gone silent mid-epoch, each named
  with its host, and the resume bit for bit; a data file on one host only; clocks that disagree.

Skipped, with the reason printed, where namespaces cannot be made (not root, no iproute2) or MPI is absent.
"""
import json
import os
import shutil
import socket
import subprocess
import time
import unittest

import torch

from litetest import LITE, LiteTestCase, error_line_problems, run_lite
from netns_hosts import Hosts, unavailable
from test_cache_sim_mpi import MPI_MISSING, CacheSimMpiBase, comparable, comparable_prefix, lite_lines
from test_distill_parallel import Mlp, weights
from test_distill import EVAL, TEACHER, TRAIN_IMAGES, TRAIN_LABELS

NETNS_MISSING = unavailable()
if NETNS_MISSING:
    print(f"test_two_hosts: skipped: {NETNS_MISSING}", flush=True)


def wait_until_stopped(pid, timeout=120):
    """The monotonic time at which process pid was seen stopped (SIGSTOP)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return time.monotonic()
        time.sleep(0.05)
    raise AssertionError(f"process {pid} was not stopped within {timeout} s")


@unittest.skipIf(NETNS_MISSING or MPI_MISSING, NETNS_MISSING or MPI_MISSING or "")
class CacheSimOnHosts(CacheSimMpiBase):
    def test_ranks_on_two_and_three_hosts_give_the_records_of_one_process(self):
        trace = self.zipf_txt()
        args = [trace, "--policy", "lru,s3fifo,sieve,arc", "--sizes", "50,200,800,3000", "--mrc",
                "--target-hit-ratio", "0.7", "--threads", "1"]
        code1, one = self.single(*args)
        for count in (2, 3):
            with self.subTest(hosts=count), Hosts(count) as hosts:
                hostfile = hosts.hostfile(self.tmp / f"hosts{count}")
                where = hosts.run(0, [*hosts.mpirun(hostfile, count), "sh", "-c",
                                      "ip -4 -o addr show eth0 | awk '{print $4}'"], timeout=120)
                self.assertEqual(where.returncode, 0, where.stderr)
                self.assertEqual(sorted(where.stdout.split()), [f"{hosts.address(i)}/24" for i in range(count)],
                                 "one rank on each host")
                r = hosts.run(0, [*hosts.mpirun(hostfile, count), LITE, "cache-sim", *args, "--json", "-q"])
                self.assertEqual(r.returncode, code1, r.stderr)
                many = json.loads(r.stdout)
                self.assertEqual(many["result"]["timing"]["ranks"], count)
                self.assertEqual(comparable(many), comparable(one))

    def test_a_prefix_study_on_two_hosts_gives_the_rows_of_one_process(self):
        trace = self.chat_trace()
        args = [trace, "--policy", "lru,radix-lru", "--sizes", "100,400,1600", "--mrc", "--prefill-ms-per-token",
                "0.01", "--threads", "1"]
        code1, one = self.single(*args)
        private = self.tmp / "private"  # only so that host 1 runs under a host name of its own
        private.mkdir()
        with Hosts(2) as hosts:
            hostfile = hosts.hostfile(self.tmp / "hosts2")
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), LITE, "cache-sim", *args, "--json", "-q"],
                          env={"LITE_NETNS_PRIVATE": f"{hosts.address(1)}={private}"}, timeout=300)
            self.assertEqual(r.returncode, code1, r.stderr)
            two = json.loads(r.stdout)
            self.assertEqual(two["result"]["hosts"], [socket.gethostname(), hosts.names[1]])
            self.assertEqual(comparable_prefix(two), comparable_prefix(one))

    def test_a_trace_on_one_host_only_is_named_with_the_host_before_any_work(self):
        # host 1 sees an empty folder where host 0 keeps the trace (a local disk, not a shared one)
        local = self.tmp / "local"
        local.mkdir()
        trace = local / "requests.txt"
        trace.write_text("".join(f"{k % 97}\n" for k in range(20000)))
        records = self.tmp / "records"
        with Hosts(2) as hosts:
            hostfile = hosts.hostfile(self.tmp / "hosts2")
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), LITE, "cache-sim", trace, "--policy", "lru", "--sizes",
                              "10,50", "--results-dir", records],
                          env={"LITE_NETNS_PRIVATE": f"{hosts.address(1)}={local}"}, timeout=300)
            self.assert_one_lite_line(r, "requests.txt", f"not found on host {hosts.names[1]} (rank 1)",
                                      "same path on every host")
            self.assertFalse(records.exists(), "no rank began the sweep")
            # another file under the same path: the sizes differ, the hosts are named
            (self.tmp / "other").mkdir()
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), "sh", "-c",
                              f"[ $OMPI_COMM_WORLD_RANK = 1 ] && echo 1 > {trace}; exec {LITE} cache-sim "
                              f"{trace} --policy lru --sizes 10"],
                          env={"LITE_NETNS_PRIVATE": f"{hosts.address(1)}={local}"}, timeout=300)
            self.assert_one_lite_line(r, "requests.txt", "differs between hosts", "bytes on")
            # a trace both hosts share: the report names the hosts that took part
            shared = self.tmp / "shared.txt"
            shared.write_text(trace.read_text())
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), LITE, "cache-sim", shared, "--policy", "lru", "--sizes",
                              "10,50", "--json", "-q"],
                          env={"LITE_NETNS_PRIVATE": f"{hosts.address(1)}={local}"}, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(r.stdout)["result"]["timing"]["hosts"], [socket.gethostname(), hosts.names[1]])

    def test_a_results_folder_one_host_does_not_share_is_named_before_any_work(self):
        # host 1 sees an empty folder of its own where host 0 keeps the records: a re-run there would split the
        # work by other records than rank 0's
        trace = self.tmp / "requests.txt"
        trace.write_text("".join(f"{k % 97}\n" for k in range(20000)))
        records = self.tmp / "records"
        records.mkdir()
        with Hosts(2) as hosts:
            hostfile = hosts.hostfile(self.tmp / "hosts2")
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), LITE, "cache-sim", trace, "--policy", "lru", "--sizes",
                              "10,50", "--results-dir", records],
                          env={"LITE_NETNS_PRIVATE": f"{hosts.address(1)}={records}"}, timeout=300)
            self.assert_one_lite_line(r, "records", f"host {hosts.names[1]} (rank 1)", "not the same folder",
                                      "every host mounts")
            self.assertEqual(list(records.iterdir()), [], "no record written, the probe removed")
            # the same folder shared by both hosts: the sweep runs and fills it
            r = hosts.run(0, [*hosts.mpirun(hostfile, 2), LITE, "cache-sim", trace, "--policy", "lru", "--sizes",
                              "10,50", "--results-dir", records, "--json", "-q"], timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(list(records.glob("record-*.json"))), 2)
            self.assertEqual(list(records.glob(".lite-shared-*")), [])

    def assert_one_lite_line(self, r, *needles):
        """Exit 2 and one error line from lite (mpirun adds its own words about the exit status)."""
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stdout.strip(), "")
        lines = lite_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIsNone(error_line_problems(lines[0]), lines[0])
        for needle in needles:
            self.assertIn(str(needle), lines[0])


def torchrun_env(hosts, rank, port, **extra):
    return {"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": "0", "MASTER_ADDR": hosts.address(0),
            "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": "eth0", **extra}


def one_error_line(err):
    """The one line a distill rank printed, epoch progress aside."""
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("epoch ")]
    assert len(lines) == 1, err
    return lines[0]


@unittest.skipIf(NETNS_MISSING, NETNS_MISSING or "")
class DistillOnHosts(LiteTestCase):
    def mlp(self):
        torch.manual_seed(0)
        student = self.tmp / "mlp.pt"
        torch.jit.script(Mlp()).save(str(student))
        return student

    def two_host_args(self, student, out, epochs=3, timeout=60):
        return ["distill", "--teacher", TEACHER, "--student", student, "--data", TRAIN_IMAGES, "--data-labels",
                TRAIN_LABELS, "--samples", 384, "--eval", EVAL, "--eval-samples", 300, "--epochs", epochs,
                "--train-batch", 64, "--latency-iterations", 0, "--timeout", timeout, "--threads", 1, "-o", out]

    def test_a_host_lost_mid_epoch_is_named_within_the_timeout_and_a_resume_reproduces_the_run(self):
        student = self.mlp()
        private = self.tmp / "private"  # only so that host 1 runs under a host name of its own
        private.mkdir()
        reference, out, ck = self.tmp / "reference.pt", self.tmp / "s.pt", self.tmp / "ck"
        with Hosts(2) as hosts:
            def job(port, out, *more, crash=None, timeout=60):
                extra = {"LITE_DISTILL_TEST_CRASH": crash} if crash else {}
                return [hosts.popen(rank, [LITE, *self.two_host_args(student, out, timeout=timeout), *more],
                                    env=torchrun_env(hosts, rank, port, **extra), private=private if rank else None)
                        for rank in (0, 1)]

            procs = job(29521, reference, "--json")
            results = [p.communicate(timeout=600) for p in procs]
            self.assertEqual([p.returncode for p in procs], [0, 0], results)
            report = json.loads(results[0][0])["result"]["distributed"]
            self.assertEqual([f["host"] for f in report["ranks"]], [socket.gethostname(), hosts.names[1]])

            # a crash: rank 1's process dies before global step 9 (epoch 2), its host closes the connections
            procs = job(29522, out, "--checkpoint-dir", ck, crash="1:8")
            (_, err0), _ = [p.communicate(timeout=120) for p in procs]
            self.assertEqual(procs[0].returncode, 1, err0)
            line = one_error_line(err0)
            self.assertIn(f"rank 0: lost rank 1 (host {hosts.names[1]}) during the gradient all-reduce of global "
                          "step 9", line)
            self.assertIn(f"--resume {ck / 'last.ckpt'}", line)
            self.assertEqual(procs[1].returncode, -9)
            self.assertFalse(out.exists())

            # the resume on the same two hosts from the last checkpoint: bit for bit the uninterrupted run
            procs = job(29523, out, "--resume", ck / "last.ckpt", "--json")
            results = [p.communicate(timeout=600) for p in procs]
            self.assertEqual([p.returncode for p in procs], [0, 0], results)
            self.assertEqual(json.loads(results[0][0])["result"]["start_epoch"], 2)
            for a, b in zip(weights(out), weights(reference), strict=True):
                self.assertTrue(torch.equal(a, b), (a - b).abs().max())

            # a host that goes silent (power or network lost: no connection closed) before global step 9:
            # rank 0 gives up within --timeout, naming it
            out.unlink()
            procs = job(29524, out, "--checkpoint-dir", self.tmp / "ck2", crash="1:8:stop", timeout=15)
            stopped_at = wait_until_stopped(procs[1].pid)
            hosts.cut(1)
            _, err0 = procs[0].communicate(timeout=120)
            waited = time.monotonic() - stopped_at
            procs[1].kill()
            procs[1].communicate()
            self.assertEqual(procs[0].returncode, 1, err0)
            line = one_error_line(err0)
            self.assertIn(f"rank 0: lost rank 1 (host {hosts.names[1]}) during the gradient all-reduce of global "
                          "step 9", line)
            self.assertIn("the timeout is 15 s", line)
            self.assertLess(waited, 15 + 10, "rank 0 gave up within --timeout")
            self.assertFalse(out.exists())

    def test_of_three_hosts_the_one_lost_is_named_whether_it_crashed_or_went_silent(self):
        # with three ranks the failed collective does not say which peer is gone: a broken connection names an
        # address (the ranks posted theirs), a timeout nothing (the ranks still there answer a roll call)
        student = self.mlp()
        private = self.tmp / "private"
        private.mkdir()
        with Hosts(3) as hosts:
            def job(port, crash, timeout):
                return [hosts.popen(rank, [LITE, *self.two_host_args(student, self.tmp / "s.pt", timeout=timeout)],
                                    env={**torchrun_env(hosts, rank, port), "WORLD_SIZE": "3",
                                         "LITE_DISTILL_TEST_CRASH": crash},
                                    private=private if rank == 2 else None)
                        for rank in range(3)]

            for crash, timeout in (("2:8", 60), ("2:8:stop", 15)):
                with self.subTest(crash=crash):
                    procs = job(29527 if timeout == 60 else 29528, crash, timeout)
                    if crash.endswith("stop"):
                        wait_until_stopped(procs[2].pid)
                        hosts.cut(2)
                    results = [p.communicate(timeout=120) for p in procs[:2]]
                    procs[2].kill()
                    procs[2].communicate()
                    for rank, (p, (_, err)) in enumerate(zip(procs, results)):
                        self.assertEqual(p.returncode, 1, err)
                        self.assertIn(f"rank {rank}: lost rank 2 (host {hosts.names[2]}) during the ",
                                      one_error_line(err))

    def test_a_data_file_on_one_host_only_is_named_at_once_not_waited_for(self):
        student = self.mlp()
        local = self.tmp / "local"  # host 1 sees an empty folder here
        local.mkdir()
        data = local / "eval.pt"
        shutil.copy(EVAL, data)
        args = ["distill", "--teacher", TEACHER, "--student", student, "--data", data, "--epochs", 1,
                "--latency-iterations", 0, "--timeout", 60, "-o", self.tmp / "x.pt"]
        with Hosts(2) as hosts:
            procs = [hosts.popen(rank, [LITE, *args], env=torchrun_env(hosts, rank, 29525),
                                 private=local if rank else None) for rank in (0, 1)]
            results = [p.communicate(timeout=50) for p in procs]  # well inside --timeout 60: no waiting
        (p0, p1), ((_, err0), (_, err1)) = procs, results
        self.assertEqual((p0.returncode, p1.returncode), (2, 2), results)
        line0 = one_error_line(err0)
        self.assertIsNone(error_line_problems(line0), line0)
        self.assertIn(f"rank 0: rank 1 (host {hosts.names[1]}) refused to train: {data}", line0)
        self.assertIn(str(data), one_error_line(err1))
        self.assertFalse((self.tmp / "x.pt").exists())

    def test_ranks_whose_clocks_disagree_report_figures_from_their_own_clocks(self):
        # rank 1's host: its monotonic clock a million seconds ahead of rank 0's (a time namespace) and, where
        # faketime is installed, its wall clock three days behind: figures that mixed the two hosts' clocks would
        # show training times of days
        skew = ["unshare", "--time", "--monotonic", "1000000"]
        probe = subprocess.run([*skew, "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.skipTest(f"time namespaces unavailable here: {probe.stderr.strip()}")
        student = self.mlp()
        if shutil.which("faketime"):
            skew += ["env", "FAKETIME_DONT_FAKE_MONOTONIC=1", "faketime", "-f", "-3d"]
        out = self.tmp / "s.pt"
        started = time.monotonic()
        with Hosts(2) as hosts:
            procs = [hosts.popen(rank, [*(skew if rank else []), LITE, *self.two_host_args(student, out, epochs=2),
                                        "--json"], env=torchrun_env(hosts, rank, 29526)) for rank in (0, 1)]
            results = [p.communicate(timeout=600) for p in procs]
        elapsed = time.monotonic() - started
        self.assertEqual([p.returncode for p in procs], [0, 0], results)
        result = json.loads(results[0][0])["result"]
        d = result["distributed"]
        for f in d["ranks"]:
            self.assertGreater(f["train_s"], 0)
            self.assertLess(f["train_s"], elapsed, f)
            self.assertLess(f["allreduce_s"], elapsed, f)
        self.assertGreater(d["samples_per_s"], 2 * 384 / elapsed)  # the global rate: two epochs of 384 samples
        self.assertLess(d["scaling_efficiency"], 1.5)
        self.assertLess(result["wall_s"], elapsed)
        self.assertLess(result["train_seconds"], elapsed)

    def test_one_rank_on_each_of_two_hosts_trains_what_one_process_trains(self):
        torch.manual_seed(0)
        student = self.tmp / "mlp.pt"
        torch.jit.script(Mlp()).save(str(student))

        def args(out):
            return ["distill", "--teacher", TEACHER, "--student", student, "--data", TRAIN_IMAGES, "--data-labels",
                    TRAIN_LABELS, "--samples", 384, "--eval", EVAL, "--eval-samples", 300, "--epochs", 2,
                    "--train-batch", 64, "--latency-iterations", 0, "--timeout", 60, "--threads", 1, "-o", out,
                    "--json"]

        one_out = self.tmp / "one.pt"
        r = run_lite(*args(one_out))
        self.assertEqual(r.returncode, 0, r.stderr)
        one = json.loads(r.stdout)["result"]
        two_out = self.tmp / "two.pt"
        with Hosts(2) as hosts:
            # as docs/cluster.md's Slurm batch script starts it: srun's task variables, the script's master
            procs = [hosts.popen(rank, [LITE, *args(two_out)],
                                 env={"SLURM_NTASKS": "2", "SLURM_PROCID": str(rank), "SLURM_LOCALID": "0",
                                      "MASTER_ADDR": hosts.address(0), "MASTER_PORT": "29511",
                                      "GLOO_SOCKET_IFNAME": "eth0"})
                     for rank in (0, 1)]
            (out0, err0), (out1, err1) = [p.communicate(timeout=600) for p in procs]
        self.assertEqual(procs[0].returncode, 0, err0)
        self.assertEqual(procs[1].returncode, 0, err1)
        two = json.loads(out0)["result"]
        d = two["distributed"]
        self.assertEqual(d["world_size"], 2)
        self.assertEqual(d["master"], f"{hosts.address(0)}:29511")
        self.assertEqual(d["source"], "environment (Slurm)")
        self.assertTrue(d["weights_identical"])
        for a, b in zip(weights(one_out), weights(two_out)):
            self.assertTrue(torch.allclose(a, b, atol=1e-5, rtol=1e-4), (a - b).abs().max())
        for e1, e2 in zip(one["epochs"], two["epochs"], strict=True):
            self.assertLessEqual(abs(e1["metric_percent"] - e2["metric_percent"]), 100 / 300 + 1e-9)

    def test_an_interface_the_host_lacks_is_named_at_once_not_waited_for(self):
        args = ["distill", "--teacher", TEACHER, "--student", TEACHER, "--data", EVAL, "--samples", 256, "--epochs", 1,
                "--latency-iterations", 0, "--timeout", 60, "-o", self.tmp / "x.pt"]
        with Hosts(2) as hosts:
            procs = [hosts.popen(rank, [LITE, *args],
                                 env={"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": "0",
                                      "MASTER_ADDR": hosts.address(0), "MASTER_PORT": "29512",
                                      "GLOO_SOCKET_IFNAME": "eth9"})
                     for rank in (0, 1)]
            results = [p.communicate(timeout=50) for p in procs]  # well inside --timeout 60: no waiting
        for rank, (p, (out, err)) in enumerate(zip(procs, results)):
            with self.subTest(rank=rank):
                self.assertEqual(p.returncode, 2, err)
                self.assertEqual(len(err.splitlines()), 1, err)
                for needle in (f"rank {rank}", "GLOO_SOCKET_IFNAME", "'eth9'", "eth0"):
                    self.assertIn(needle, err)
        self.assertFalse((self.tmp / "x.pt").exists())


if __name__ == "__main__":
    unittest.main()
