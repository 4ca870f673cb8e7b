"""lite cache-sim over MPI ranks and resumable sweeps (issue 26), end to end.

Under `mpirun --allow-run-as-root --oversubscribe -n 2` (skipped, with the reason printed, when mpirun or lite-mpi is
absent): the records, curve and recommendation equal a single-process run of the same sweep (--json minus timing);
so does the curve from key partitions (--mrc-partitions, rank r computes partition r), and cluster sizing (--nodes: the
clusters spread over the ranks, in object and byte mode, the text report too), and a prefix (LLM request) study (its
jobs spread over the ranks); a rank killed after its first record fails the job with the rank named, and the re-run
with --results-dir reuses what was written (object sweeps and prefix studies alike); bad options exit 2 with one
error line from lite. Without MPI: --results-dir reuses every record of a re-run and refuses a file; `lite` itself
never links libmpi."""
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import unittest

from litetest import LITE, REPO, LiteTestCase, error_line_problems, run_lite

MPIRUN = shutil.which("mpirun")
LITE_MPI = pathlib.Path(LITE).parent / "lite-mpi"
MPI_MISSING = ("mpirun not found (install openmpi-bin: scripts/setup.sh)" if not MPIRUN
               else f"{LITE_MPI} not built (Open MPI's libopenmpi-dev was missing at configure time)"
               if not LITE_MPI.exists() else None)
if MPI_MISSING:
    print(f"test_cache_sim_mpi: MPI tests skipped: {MPI_MISSING}", flush=True)

SIZES = "20,50,100,200,400,800,1600,3000"


def run_mpi(*args, ranks=2, env=None, timeout=300):
    """`mpirun -n RANKS lite ARGS...`; returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    # Under scripts/sanitize.sh (ASan with leak detection) Open MPI's own allocations, many made by MCA plugins it
    # has unloaded by exit, are reported as leaks that no suppression can name; lite's code is leak-checked in the
    # unit tests and the single-process runs.
    if "ASAN_OPTIONS" in full_env:
        full_env["ASAN_OPTIONS"] += ":detect_leaks=0"
    full_env.update(env or {})
    cmd = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks), LITE, *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                          stdin=subprocess.DEVNULL)


def comparable(doc):
    """A --json report without what may differ between runs of the same sweep: timing, ranks, memory
    addresses of nothing; the curve's seconds; the --results-dir note."""
    r = json.loads(json.dumps(doc["result"]))
    r.pop("timing", None)
    r.pop("reused_records", None)
    r.pop("options", None)
    if r.get("mrc"):
        r["mrc"].pop("seconds", None)
    r["notes"] = [n for n in r["notes"] if not n.startswith("--results-dir")]
    return r


def comparable_prefix(doc):
    """A prefix study's --json report without what may differ between runs of the same study: timing, threads, the
    ranks and hosts and the note naming them."""
    r = json.loads(json.dumps(doc["result"]))
    for key in ("read_seconds", "simulate_seconds", "threads", "ranks", "hosts", "options"):
        r.pop(key, None)
    recommended = r.get("recommendation") or {}
    for row in r["records"] + ([recommended["record"]] if recommended.get("record") else []):
        row.pop("seconds")
    r["notes"] = [n for n in r["notes"] if "MPI ranks" not in n]
    return r


def untimed(text):
    """A text report without the lines that carry timing or the rank count."""
    return [l for l in text.splitlines() if not re.search(r"\d+(\.\d+)? ?(s|ms)\b|requests/s|MPI rank|thread", l)]


def lite_lines(stderr):
    """The lines lite printed (mpirun adds its own notice when a rank exits non-zero)."""
    return [l for l in stderr.splitlines() if l.startswith("lite ")]


class CacheSimMpiBase(LiteTestCase):
    def zipf_txt(self, name="t.txt", n=40000, keys=3000, seed=11):
        rng = random.Random(seed)
        weights = [1.0 / (i + 1) ** 0.9 for i in range(keys)]
        ids = rng.choices(range(keys), weights=weights, k=n)
        p = self.tmp / name
        p.write_text("\n".join(str(7 + 13 * i) for i in ids) + "\n")
        return p

    def sized_csv(self, name="t.csv", n=30000, keys=2000, seed=3):
        rng = random.Random(seed)
        weights = [1.0 / (i + 1) for i in range(keys)]
        sizes = [rng.randint(100, 5000) for _ in range(keys)]
        rows = ["key,size,cost_ms"] + [f"{k},{sizes[k]},{rng.uniform(1, 20):.3f}"
                                      for k in rng.choices(range(keys), weights=weights, k=n)]
        p = self.tmp / name
        p.write_text("\n".join(rows) + "\n")
        return p

    def varying_sizes_csv(self, changing_key, name="v.csv", n=20000, keys=1500, seed=4):
        """A key,size trace where one key's object changes size at every request, the others keep theirs."""
        rng = random.Random(seed)
        weights = [1.0 / (i + 1) ** 0.9 for i in range(keys)]
        sizes = [rng.randint(100, 4000) for _ in range(keys)]
        rows = ["key,size"]
        for k in rng.choices(range(keys), weights=weights, k=n):
            if k == changing_key:
                sizes[k] = rng.randint(100, 4000)
            rows.append(f"{k},{sizes[k]}")
        p = self.tmp / name
        p.write_text("\n".join(rows) + "\n")
        return p

    def chat_trace(self, name="chat.jsonl", conversations=300, seed=5):
        """A Mooncake-format trace: conversations of growing turns behind a few shared system prompts."""
        rng = random.Random(seed)
        lines, t, next_block = [], 0, 1000
        chains = [[rng.randrange(4)] for _ in range(conversations)]  # blocks 0-3: the system prompts
        for _ in range(2000):
            chain = rng.choice(chains)
            chain.extend(range(next_block, next_block + rng.randint(1, 3)))
            next_block += 3
            lines.append(json.dumps({"timestamp": t, "input_length": 512 * len(chain) - rng.randrange(100),
                                     "output_length": rng.randint(1, 200), "hash_ids": chain}))
            t += rng.randint(0, 40)
        p = self.tmp / name
        p.write_text("\n".join(lines) + "\n")
        return p

    def single(self, *args):
        r = run_lite("cache-sim", *args, "--json", "-q")
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return r.returncode, json.loads(r.stdout)


@unittest.skipIf(MPI_MISSING, MPI_MISSING or "")
class CacheSimMpi(CacheSimMpiBase):
    def mpi_json(self, *args, env=None):
        r = run_mpi("cache-sim", *args, "--json", "-q", env=env)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertEqual(lite_lines(r.stderr), [], r.stderr)
        return r.returncode, json.loads(r.stdout)

    def test_records_curve_and_recommendation_equal_a_single_process_run(self):
        trace = self.zipf_txt()
        args = [trace, "--policy", "all", "--sizes", SIZES, "--mrc", "--target-hit-ratio", "0.7", "--threads", "1"]
        code1, one = self.single(*args)
        code2, two = self.mpi_json(*args)
        self.assertEqual(code2, code1)
        self.assertEqual(len(two["result"]["records"]), 15 * 8)
        self.assertEqual(comparable(two), comparable(one))
        self.assertEqual(two["result"]["timing"]["ranks"], 2)
        self.assertEqual(two["result"]["timing"]["simulations"], 15 * 8)

    def test_key_partitioned_curve_equals_the_one_machine_curve(self):
        trace = self.zipf_txt()
        for args in ([trace, "--policy", "none", "--mrc", "--mrc-partitions", "2", "--sizes", SIZES,
                      "--target-hit-ratio", "0.6"],
                     [trace, "--policy", "lru,sieve", "--mrc", "--mrc-partitions", "3", "--sizes", SIZES]):
            with self.subTest(args=args[1:]):
                code1, one = self.single(*args)
                code2, two = self.mpi_json(*args)
                self.assertEqual(code2, code1)
                self.assertEqual(comparable(two), comparable(one))
                self.assertEqual(two["result"]["mrc"]["partitions"]["n"], int(args[args.index("--mrc-partitions") + 1]))

    def test_bytes_sampling_check_and_cost_column_equal_too(self):
        trace = self.sized_csv()
        args = [trace, "--bytes", "--policy", "lru,belady,lhd,s3fifo,gdsf:cost=1", "--sizes", "1%,5%,20%,50%",
                "--sample-rate", "0.5", "--sample-check", "--hit-latency", "0.5", "--target-p99", "10"]
        code1, one = self.single(*args)
        code2, two = self.mpi_json(*args)
        self.assertEqual(code2, code1)
        self.assertEqual(comparable(two), comparable(one))

    def test_cluster_sizing_equals_a_single_process_run(self):
        # --nodes: the (policy, size, K) clusters spread over the ranks, rank 0 joins them; the cluster records
        # (every per-node count and latency), the recommendation and the exit code equal one process's
        trace = self.zipf_txt()
        for args in ([trace, "--policy", "lru,belady,s3fifo,gdsf", "--sizes", "3,200,1600", "--nodes", "4,1,16",
                      "--hit-latency", "1", "--miss-latency", "10", "--target-hit-ratio", "0.55", "--threads", "1"],
                     [trace, "--policy", "sieve,lfu", "--sizes", "400,50", "--nodes", "2,8,32", "--route", "rendezvous",
                      "--target-p99", "6", "--miss-latency", "10", "--max-node-load", "1.2", "--threads", "1"],
                     [trace, "--policy", "lru", "--sizes", "100", "--nodes", "3", "--route", "modulo"]):
            with self.subTest(args=args[1:]):
                code1, one = self.single(*args)
                code2, two = self.mpi_json(*args)
                self.assertEqual(code2, code1)
                self.assertEqual(comparable(two), comparable(one))
                self.assertTrue(two["result"]["cluster"]["records"], "clusters were simulated")
                self.assertEqual(two["result"]["timing"]["ranks"], 2)
        # the text report: the same tables and recommendation, only the timing lines differ
        single = run_lite("cache-sim", *args, "-q")
        multi = run_mpi("cache-sim", *args, "-q")
        self.assertEqual(multi.returncode, single.returncode, multi.stderr)
        self.assertEqual(untimed(multi.stdout), untimed(single.stdout))
        self.assertIn("Clusters: K nodes of size/K behind modulo routing", multi.stdout)

    def test_cluster_sizing_in_byte_mode_with_a_partitioned_curve_equals_too(self):
        # byte mode with an object that changes size: the notes (the curve's "sizes vary", the clusters skipped at
        # 5 bytes) come in the single-process order whichever rank profiled the partition where sizes varied (the
        # changing key is each of four, so it falls in rank 1's partition at least once)
        for key in range(4):
            with self.subTest(changing_key=key):
                trace = self.varying_sizes_csv(key)
                args = [trace, "--bytes", "--policy", "lru,belady,lhd", "--sizes", "5,10%,40%", "--nodes", "2,8",
                        "--mrc", "--mrc-partitions", "2", "--target-hit-ratio", "0.5", "--threads", "1"]
                code1, one = self.single(*args)
                code2, two = self.mpi_json(*args)
                self.assertEqual(code2, code1)
                self.assertTrue(any("change size" in n for n in one["result"]["notes"]), one["result"]["notes"])
                self.assertEqual(comparable(two), comparable(one))

    def test_plot_and_text_report_come_once_from_rank_0(self):
        trace = self.zipf_txt(n=8000, keys=500)
        plot = self.tmp / "p.svg"
        r = run_mpi("cache-sim", trace, "--policy", "lru,fifo,arc", "--sizes", "10,50,200", "--plot", plot, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("miss ratio"), 1, r.stdout)  # one table header: one report
        self.assertIn("2 MPI ranks", r.stdout)
        self.assertTrue(plot.read_text().startswith("<svg") or "<svg" in plot.read_text()[:200])

    def run_with_rank_1_killed(self, args, results):
        """Runs the study with rank 1 killing itself after its first record (LITE_MPI_TEST_KILL_RANK): the job
        fails naming it, prints no report, leaves no temporaries; returns the records written before it died."""
        r = run_mpi("cache-sim", *args, "--json", "-q", env={"LITE_MPI_TEST_KILL_RANK": "1"})
        self.assertNotIn(r.returncode, (0, 1), r.stderr)
        self.assertRegex(r.stderr, r"rank 1\b.*(signal 9|Killed)", r.stderr)
        self.assertEqual(r.stdout.strip(), "")
        written = sorted(results.glob("record-*.json"))
        self.assertGreaterEqual(len(written), 1, "rank 1 wrote its first record before it died")
        self.assertEqual(list(results.glob("*.tmp*")) + list(results.glob(".*")), [], "no temporary files left")
        return written

    def test_a_killed_rank_fails_the_job_naming_it_and_the_rerun_reuses_its_records(self):
        trace = self.zipf_txt()
        results = self.tmp / "results"
        args = [trace, "--policy", "all", "--sizes", SIZES, "--threads", "1", "--results-dir", results]
        written = self.run_with_rank_1_killed(args, results)
        code, again = self.mpi_json(*args)
        self.assertGreaterEqual(again["result"]["reused_records"], len(written))
        self.assertEqual(again["result"]["timing"]["simulations"], 15 * 8 - again["result"]["reused_records"])
        _, one = self.single(trace, "--policy", "all", "--sizes", SIZES, "--threads", "1")
        self.assertEqual(comparable(again), comparable(one))

    def test_bad_options_exit_2_with_one_line_from_lite(self):
        trace = self.zipf_txt(n=2000, keys=100)
        a_file = self.tmp / "a_file"
        a_file.write_text("x")
        for args, needle in [(["--results-dir", a_file], "--results-dir"),
                             (["--sizes", "0"], "--sizes"),
                             (["--policy", "lruu"], "lru"),
                             (["--sample-rate", "2"], "--sample-rate"),
                             (["--mrc", "--mrc-partitions", "0"], "--mrc-partitions")]:
            with self.subTest(args=args):
                single = run_lite("cache-sim", trace, *args)
                r = run_mpi("cache-sim", trace, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stdout.strip(), "")
                lines = lite_lines(r.stderr)
                self.assertEqual(len(lines), 1, f"one rank reports: {r.stderr!r}")
                self.assertIsNone(error_line_problems(lines[0]), lines[0])
                self.assertEqual(lines[0], single.stderr.strip())
                self.assertIn(needle, lines[0])
        # with a results folder under folders that do not exist yet: rank 0's probe of the folder (is it shared
        # by every host?) leaves nothing behind, whatever the run then refuses
        fresh = self.tmp / "fresh"
        for args in (["--sizes", "0"], ["--policy", "lruu"]):
            with self.subTest(results_dir_and=args):
                r = run_mpi("cache-sim", trace, "--results-dir", fresh / "a" / "records", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertFalse(fresh.exists(), "nothing written")
        r = run_mpi("cache-sim", trace, "--sizes", "10,50", "--results-dir", fresh / "a" / "records", "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(list((fresh / "a" / "records").glob("record-*.json"))), 2)
        self.assertEqual(list((fresh / "a" / "records").glob(".lite-shared-*")), [])

    def test_a_trace_from_stdin_is_refused_with_one_line(self):
        r = run_mpi("cache-sim", "-", "--sizes", "10")
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = lite_lines(r.stderr)
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIsNone(error_line_problems(lines[0]), lines[0])
        self.assertIn("TRACE", lines[0])

    def test_a_prefix_study_equals_a_single_process_run(self):
        trace = self.chat_trace()
        args = [trace, "--policy", "lru,radix-lru,radix-lfu,radix-reference", "--sizes", "50MiB,200MiB,800MiB,3GiB", "--mrc",
                "--kv-bytes-per-token", "1000", "--kv-dtype", "fp16,int8", "--prefill-ms-per-token", "0.01",
                "--instances", "2", "--target-hit-ratio", "0.5", "--threads", "1"]
        code1, one = self.single(*args)
        code2, two = self.mpi_json(*args)
        self.assertEqual(code2, code1)
        self.assertEqual(len(two["result"]["records"]), 4 * 4 * 2)
        self.assertEqual(comparable_prefix(two), comparable_prefix(one))
        self.assertEqual(two["result"]["ranks"], 2)
        self.assertIn("2 MPI ranks on 1 host", "\n".join(two["result"]["notes"]))
        # fewer jobs than ranks: rank 1 replays nothing, the one row is rank 0's
        code, three = self.mpi_json(trace, "--policy", "lru", "--sizes", "400")
        self.assertEqual(len(three["result"]["records"]), 1)
        self.assertEqual(three["result"]["records"][0]["hit_tokens"],
                         self.single(trace, "--policy", "lru", "--sizes", "400")[1]["result"]["records"][0]["hit_tokens"])

    def test_a_killed_rank_of_a_prefix_study_and_the_rerun_that_reuses_its_rows(self):
        trace = self.chat_trace()
        results = self.tmp / "results"
        args = [trace, "--policy", "lru,radix-lru,radix-lfu,radix-reference", "--sizes", "50,200,800,3000", "--mrc",
                "--prefill-ms-per-token", "0.01", "--target-hit-ratio", "0.5", "--threads", "1",
                "--results-dir", results]
        written = self.run_with_rank_1_killed(args, results)
        self.assertLess(len(written), 16, "rank 1 died before its last row")
        code, again = self.mpi_json(*args)
        self.assertEqual(again["result"]["reused_records"], len(written))
        self.assertEqual(len(list(results.glob("record-*.json"))), 16)
        self.assertIn(f"--results-dir {results}: {len(written)} records reused, {16 - len(written)} replayed and "
                      "written there", again["result"]["notes"])
        code1, one = self.single(*args[:-2])
        self.assertEqual(code, code1)
        without_dir = lambda doc: [n for n in comparable_prefix(doc)["notes"] if not n.startswith("--results-dir")]
        self.assertEqual(without_dir(again), without_dir(one))
        strip = lambda doc: {k: v for k, v in comparable_prefix(doc).items() if k not in ("notes", "reused_records")}
        self.assertEqual(strip(again), strip(one))
        # every row found: each rank reuses its share
        code, third = self.mpi_json(*args)
        self.assertEqual(third["result"]["reused_records"], 16)
        self.assertEqual(strip(third), strip(one))

    def test_a_bad_prefix_trace_exits_2_with_one_line_from_lite(self):
        trace = self.chat_trace()
        bad = self.tmp / "bad.jsonl"
        bad.write_text(trace.read_text() + '{"timestamp": 1, "input_length": -5, "output_length": 1, "hash_ids": [1]}\n')
        single = run_lite("cache-sim", bad, "--sizes", "100")
        r = run_mpi("cache-sim", bad, "--sizes", "100")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stdout.strip(), "")
        lines = lite_lines(r.stderr)
        self.assertEqual(lines, [single.stderr.strip()], r.stderr)
        self.assertIn("bad.jsonl:2001", lines[0])

    def test_one_rank_under_mpirun_runs_in_process(self):
        trace = self.zipf_txt(n=5000, keys=300)
        r = run_mpi("cache-sim", trace, "--policy", "lru", "--sizes", "50", "--json", "-q", ranks=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["result"]["timing"]["ranks"], 1)


class CacheSimResultsDir(CacheSimMpiBase):
    """--results-dir without MPI."""

    def test_rerun_reuses_every_record_and_says_so(self):
        trace = self.zipf_txt(n=20000, keys=1500)
        results = self.tmp / "results"
        args = [trace, "--policy", "lru,belady,wtinylfu", "--sizes", "30,300,900", "--results-dir", results]
        _, first = self.single(*args)
        self.assertEqual(first["result"]["reused_records"], 0)
        self.assertEqual(len(list(results.glob("record-*.json"))), 9)
        _, again = self.single(*args)
        self.assertEqual(again["result"]["reused_records"], 9)
        self.assertEqual(again["result"]["timing"]["simulations"], 0)
        self.assertEqual(comparable(again), comparable(first))
        text = run_lite("cache-sim", *args, "-q")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("--results-dir", text.stdout)
        self.assertIn("9 records reused", text.stdout)

    def test_another_trace_or_other_options_reuse_nothing(self):
        trace = self.zipf_txt(n=20000, keys=1500)
        results = self.tmp / "results"
        self.single(trace, "--policy", "lru", "--sizes", "30,300", "--results-dir", results)
        _, other_mode = self.single(trace, "--policy", "lru", "--sizes", "30,300", "--bytes", "--results-dir", results)
        self.assertEqual(other_mode["result"]["reused_records"], 0)
        changed = self.zipf_txt(name="t2.txt", n=20000, keys=1500, seed=12)
        _, other_trace = self.single(changed, "--policy", "lru", "--sizes", "30,300", "--results-dir", results)
        self.assertEqual(other_trace["result"]["reused_records"], 0)
        trace.write_text(trace.read_text().replace("\n7\n", "\n8\n", 1))  # one key changed in place
        _, edited = self.single(trace, "--policy", "lru", "--sizes", "30,300", "--results-dir", results)
        self.assertEqual(edited["result"]["reused_records"], 0)

    def test_results_dir_that_is_a_file_or_a_stream_is_refused(self):
        trace = self.zipf_txt(n=1000, keys=50)
        a_file = self.tmp / "a_file"
        a_file.write_text("x")
        self.assert_rejected("cache-sim", trace, "--results-dir", a_file, needles=("--results-dir", "a file"))
        self.assert_rejected("cache-sim", "-", "--results-dir", self.tmp / "r", stdin="1\n2\n",
                             needles=("--results-dir", "stream"))
        self.assert_rejected("cache-sim", trace, "--results-dir", a_file / "under", needles=("--results-dir", "not a folder"))

    def test_a_bad_trace_leaves_no_results_folder(self):
        bad = self.tmp / "bad.csv"
        bad.write_text("key,size\na,10\nb,ten\n")
        self.assert_rejected("cache-sim", bad, "--bytes", "--sizes", "100", "--results-dir", self.tmp / "r",
                             needles=("bad.csv:3",))
        self.assert_rejected("cache-sim", self.tmp / "missing.csv", "--results-dir", self.tmp / "r",
                             needles=("missing.csv",))

    def test_config_round_trip_keeps_results_dir(self):
        trace = self.zipf_txt(n=1000, keys=50)
        r = run_lite("cache-sim", trace, "--results-dir", self.tmp / "r", "--dump-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        config = json.loads(r.stdout)
        self.assertEqual(config["results_dir"], str(self.tmp / "r"))
        cfg = self.tmp / "c.json"
        cfg.write_text(r.stdout)
        again = run_lite("cache-sim", "--config", cfg, "--dump-config")
        self.assertEqual(json.loads(again.stdout), config)

    def test_a_multi_rank_launcher_without_lite_mpi_is_refused_by_rank_0_only(self):
        # a copy of lite alone in a folder: no lite-mpi beside it nor in ../libexec/lite
        alone = self.tmp / "bin" / "lite"
        alone.parent.mkdir()
        shutil.copy(LITE, alone)
        trace = self.zipf_txt(n=1000, keys=50)
        launchers = [({"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, 1),
                     ({"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1"}, 0),
                     ({"PMI_SIZE": "4", "PMI_RANK": "3"}, 0),
                     ({"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "0"}, 1)]
        for launcher, lines in launchers:
            env = dict(os.environ, **launcher)
            r = subprocess.run([alone, "cache-sim", trace], capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(r.returncode, 2, f"{launcher}: {r.stderr}")
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.splitlines()), lines, f"{launcher}: {r.stderr}")
            if lines:
                self.assertIsNone(error_line_problems(r.stderr), r.stderr)
                self.assertIn("lite-mpi", r.stderr)

    def test_a_launcher_with_one_rank_runs_in_process(self):
        trace = self.zipf_txt(n=1000, keys=50)
        r = run_lite("cache-sim", trace, "--sizes", "10", "-q", env={"OMPI_COMM_WORLD_SIZE": "1", "SLURM_STEP_NUM_TASKS": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_lite_itself_never_links_mpi(self):
        if not shutil.which("ldd"):
            self.skipTest("ldd not found")
        libs = subprocess.run(["ldd", LITE], capture_output=True, text=True).stdout
        self.assertNotIn("libmpi", libs)


if __name__ == "__main__":
    unittest.main()
