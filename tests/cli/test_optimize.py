"""lite optimize end to end (issue 25) on the bundled Fashion-MNIST CNN, its evaluation set and the bundled request
trace: a target only quantization meets picks it; a target only a cache meets picks the size lite cache-sim gives;
an impossible target exits 1 naming the nearest miss; an interrupted search resumes to the same answer; the emitted
recipe passes lite run; the artifact loads in Python with the search in its lite.json; bad options exit 2 with one
line naming the option. Measurements are kept short: the search's decisions, not its figures, are under test."""
import json
import pathlib
import signal
import subprocess
import time

from litetest import DATA, LITE, PYTHON, LiteTestCase, assert_no_torch_log, run_lite

MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
TRACE = DATA / "inference_requests.csv"
QUICK = ["--duration", "0.3", "--screen-duration", "0.1", "--warmup", "2", "--threads", "1"]
SIZES = "0.001,0.002,0.005,0.01,0.02,0.03,0.05,0.07,0.1,0.15,0.2,0.3,0.4,0.5,0.7,1"


class Optimize(LiteTestCase):
    def optimize(self, *args, codes=(0,)):
        r = run_lite("optimize", MODEL, "--eval", EVAL, *QUICK, *args, "--json")
        self.assertIn(r.returncode, codes, r.stderr)
        doc = json.loads(r.stdout)
        doc["exit_code"] = r.returncode
        return doc["result"]

    def chosen(self, result):
        return next(v for v in result["variants"] if v["chosen"])

    def test_a_target_only_quantization_meets_picks_it(self):
        out = self.tmp / "best.pt"
        # At batch 16, not 1: at batch 1 this CNN's 0.4 ms call is overhead, and on an AMX Xeon static int8 timed
        # 1.01x frozen float there; at 16 it was 2.76x (1.65x under ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2),
        # so the target separates the modes on every CPU kind this runs on (issue 42).
        r = self.optimize("--target-speedup", "1.2", "--batch", "16", "--modes", "float,static,dynamic",
                          "--prune-ratios", "0", "-o", out, "--plot", self.tmp / "search.svg")
        choice = self.chosen(r)
        self.assertEqual(choice["spec"]["mode"], "static", json.dumps(r["variants"], indent=1)[:3000])
        self.assertGreaterEqual(choice["latency"]["speedup"], 1.2)
        self.assertLessEqual(choice["quality"]["drop"], 1.0)
        float_variant = next(v for v in r["variants"] if v["spec"]["mode"] == "float")
        self.assertFalse(float_variant["feasible"])
        self.assertEqual(r["gates"]["failed"], [])
        # The artifact is plain TorchScript that stock PyTorch runs, with the whole search in its lite.json.
        check = ("import json, torch\n"
                 "extra = {'lite.json': ''}\n"
                 f"m = torch.jit.load({str(out)!r}, _extra_files=extra)\n"
                 "doc = json.loads(extra['lite.json'])\n"
                 "print(tuple(m(torch.randn(3, 1, 28, 28)).shape), doc['transform'], doc['details']['chosen']['mode'],"
                 " len(doc['details']['variants']), doc['history'][-1]['transform'])\n")
        p = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["(3,", "10)", "optimize", "static", "3", "quantize"])
        svg = (self.tmp / "search.svg").read_text()
        self.assertIn("<svg", svg)
        self.assertIn("no pruning + static (chosen)", svg)

    def test_a_target_only_a_cache_meets_picks_the_size_cache_sim_gives(self):
        # A p50 of 1 us: no forward is that fast, a cache hit (0.5 us) is, so at least half the requests must hit.
        r = self.optimize("--target-p50", "0.001", "--trace", TRACE, "--hit-latency", "0.0005", "--modes", "static",
                          "--prune-ratios", "0", "-o", self.tmp / "cached.pt", "--emit-recipe", self.tmp / "r.json")
        choice = self.chosen(r)
        self.assertFalse(choice["meets_latency_alone"])
        cache = choice["cache"]
        self.assertTrue(cache["reached"])
        # lite cache-sim on the same trace, policies and sizes: the smallest size whose request p50 meets it.
        sim = run_lite("cache-sim", TRACE, "--bytes", "--policy", "lru,s3fifo,wtinylfu", "--sizes", SIZES,
                       "--hit-latency", "0.0005", "--miss-latency", "1", "--json")
        self.assertEqual(sim.returncode, 0, sim.stderr)
        records = json.loads(sim.stdout)["result"]["records"]
        meeting = [rec for rec in records if rec["latency_ms"]["p50"] <= 0.001]
        smallest = min(rec["size"] for rec in meeting)
        self.assertEqual(cache["size"], smallest)
        self.assertIn(cache["policy"], {rec["policy"] for rec in meeting if rec["size"] == smallest})
        recipe = json.loads((self.tmp / "r.json").read_text())
        self.assertEqual(recipe["steps"][-1]["cache-sim"]["sizes"], str(smallest))

    def test_an_impossible_target_exits_1_naming_the_nearest_miss(self):
        out = self.tmp / "none.pt"
        r = run_lite("optimize", MODEL, "--eval", EVAL, *QUICK, "--target-p99", "0.00001", "--modes", "float,static",
                     "--prune-ratios", "0", "-o", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("nearest miss: no pruning + static: p99", r.stdout + r.stderr)
        self.assertRegex(r.stdout + r.stderr, r"x off 1e-05\), loses \d+\.\d\d points")
        self.assertFalse(out.exists(), "nothing met the target: no artifact")
        doc = self.optimize("--target-p99", "0.00001", "--modes", "float,static", "--prune-ratios", "0", "-o", out,
                            codes=(1,))
        self.assertEqual(doc["gates"]["failed"], ["target"])
        self.assertTrue(doc["nearest_misses"])
        self.assertIsNone(doc["chosen"])

    def test_an_interrupted_search_resumes_to_the_same_answer(self):
        work = self.tmp / "work"
        args = ["optimize", MODEL, "--eval", EVAL, *QUICK, "--target-p99", "1000", "--modes", "float,static,fp16",
                "--prune-ratios", "0.25", "-o", self.tmp / "best.pt", "--work-dir", work]
        p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while p.poll() is None and time.monotonic() < deadline and not list(work.glob("*/*.screen.json")):
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=300)
        assert_no_torch_log(err, args)
        self.assertEqual(p.returncode, 130, err)
        self.assertFalse((self.tmp / "best.pt").exists())
        resumed = json.loads(run_lite(*args, "--json").stdout)["result"]
        self.assertGreaterEqual(resumed["search"]["reused"], 1)
        again = json.loads(run_lite(*args, "--json").stdout)["result"]
        self.assertEqual(again["chosen"], resumed["chosen"])
        settled = [v for v in again["variants"] if v["status"] in ("measured", "screened out")]
        self.assertTrue(all(v["reused"] for v in settled), "a finished search re-run measures nothing again")

    def test_training_data_recovers_each_pruned_model_before_it_is_judged(self):
        train = ["--data", "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
                 "--data-labels", "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz",
                 "--recover-epochs", "1", "--recover-samples", "2048"]
        common = ["--target-p99", "1000", "--modes", "float", "--prune-ratios", "0.5", "--exhaustive",
                  "--max-accuracy-drop", "100"]
        plain = self.optimize(*common, "-o", self.tmp / "plain.pt")
        recovered = self.optimize(*common, *train, "-o", self.tmp / "recovered.pt")
        def pruned(result):
            return next(v for v in result["variants"] if v["spec"]["prune_ratio"] == 0.5)
        self.assertFalse(pruned(plain)["spec"]["recovered"])
        self.assertTrue(pruned(recovered)["spec"]["recovered"])
        self.assertEqual(pruned(recovered)["spec"]["label"], "prune 0.5 (recovered) + float")
        # Pruning half the channels of the bundled CNN costs it most of its accuracy; distillation wins most back.
        self.assertGreater(pruned(plain)["quality"]["drop"], 20)
        self.assertLess(pruned(recovered)["quality"]["drop"], pruned(plain)["quality"]["drop"] - 10)
        self.assertIn("recover", [t["stage"] for t in recovered["time"]])

    def test_prune_sensitivity_adds_the_per_group_ratios_prune_picks_within_the_budget(self):
        r = self.optimize("--target-p99", "1000", "--modes", "float", "--prune-ratios", "0", "--prune-sensitivity",
                          "--max-accuracy-drop", "2", "--exhaustive", "-o", self.tmp / "s.pt")
        sensitive = next(v for v in r["variants"] if v["spec"]["by_sensitivity"])
        self.assertEqual(sensitive["spec"]["label"], "prune by sensitivity + float")
        self.assertEqual(sensitive["status"], "measured", sensitive["reason"])
        self.assertTrue(sensitive["layer_ratios"], "the ratios prune chose are recorded")
        self.assertTrue(all(0 <= g["ratio"] < 1 and g["glob"] for g in sensitive["layer_ratios"]))
        self.assertLess(sensitive["file_bytes"], MODEL.stat().st_size)

    def test_the_emitted_recipe_passes_lite_run(self):
        recipe = self.tmp / "optimized.json"
        self.optimize("--target-p99", "1000", "--modes", "float,static", "--prune-ratios", "0.25", "-o",
                      self.tmp / "best.pt", "--emit-recipe", recipe)
        # The recipe gates p99 and its quantize step times itself: on a busy runner both would fail as untrusted.
        r = run_lite("run", recipe, "-o", self.tmp / "rebuilt.pt", "--allow-noisy")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASSED", r.stdout)

    def test_a_spent_budget_stops_the_search_and_says_so(self):
        # Half a second is gone before the first variant (loading, the original's evaluation and timing).
        r = self.optimize("--target-p99", "1000", "--modes", "float,static", "--prune-ratios", "0", "--budget", "0.5",
                          "-o", self.tmp / "b.pt", codes=(1,))
        self.assertTrue(r["search"]["budget_exhausted"])
        self.assertEqual(r["search"]["skipped"], r["search"]["proposed"])
        self.assertTrue(any("budget of 0.5 s ran out" in n for n in r["notes"]), r["notes"])
        self.assertEqual(r["gates"]["failed"], ["target"])

    def test_a_recipe_may_hold_an_optimize_step(self):
        recipe = self.tmp / "search.json"
        recipe.write_text(json.dumps({
            "lite_recipe": 1, "name": "search-step", "model": str(MODEL), "data": {"eval": str(EVAL)},
            "steps": [{"optimize": {"eval": "@data.eval", "target_p99_ms": 1000, "modes": ["float", "static"],
                                    "prune_ratios": [0], "duration_s": 0.3, "screen_duration_s": 0.1,
                                    "threads": 1}}],
            "evaluate": {"threads": 1, "batch": 1, "duration_s": 0.3},
            "gates": {"max_accuracy_drop": 1.0}}))
        r = run_lite("run", recipe, "-o", self.tmp / "out.pt", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)["result"]
        step = doc["steps"][0]
        self.assertEqual(step["report"]["command"], "optimize")
        self.assertTrue((self.tmp / "out.pt").exists())

    def test_bad_options_exit_2_naming_the_option(self):
        base = [MODEL, "--eval", EVAL, "-o", self.tmp / "x.pt"]
        self.assert_rejected("optimize", *base, "--target-p99", "-3", needles=("--target-p99", "positive"))
        self.assert_rejected("optimize", *base, needles=("--target-p99", "required"))
        self.assert_rejected("optimize", *base, "--target-p99", "5", "--target-speedup", "2",
                             needles=("--target-speedup", "second target"))
        self.assert_rejected("optimize", *base, "--target-p99", "5", "--trace", TRACE,
                             needles=("--hit-latency", "--trace"))
        self.assert_rejected("optimize", MODEL, "--target-p99", "5", "--max-accuracy-drop", "1",
                             needles=("--max-accuracy-drop", "--eval"))
        self.assert_rejected("optimize", *base, "--target-p99", "5", "--modes", "int3", needles=("--modes", "int3"))
        self.assert_rejected("optimize", *base, "--target-p99", "5", "--prune-ratios", "1.5",
                             needles=("--prune-ratios",))
        self.assert_rejected("optimize", *base, "--target-throughput", "100", "--trace", TRACE, "--hit-latency", "1",
                             needles=("--trace", "latency target"))
        self.assert_rejected("optimize", MODEL, "--eval", EVAL, "--target-p99", "5", "-o", MODEL,
                             needles=("-o",))

    def test_every_flag_is_documented(self):
        self.assert_verb_page_documents_every_flag("optimize")


if __name__ == "__main__":
    import unittest
    unittest.main()
