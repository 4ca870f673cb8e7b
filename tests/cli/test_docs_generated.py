"""Man pages, shell completions and the docs pages say what `lite VERB --help` says (issue 40): the man pages and
completions are generated from the flag definitions --help prints, and these tests fail when a flag is in one place
and not in another."""
import gzip
import json
import os
import pathlib
import re
import subprocess
import unittest

from litetest import DATA, LITE, REPO, LiteTestCase, run_lite

SHARE = pathlib.Path(LITE).resolve().parent.parent / "share"  # build/share: what the build generated
VERBS = ["profile", "quantize", "prune", "distill", "optimize", "cache-sim", "run"]
FLAG = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)(?![\w*-])")  # not torchrun's --nproc_per_node, --target-*
# Flags the docs name that belong to no verb: lite's own, and libtorch's or other tools' in examples.
NOT_LITE_FLAGS = {"--help", "--version", "--generate-docs", "--flag-catalog", "--allow-run-as-root",
                  "--oversubscribe", "--np", "--mca", "--hostfile", "--host", "--nproc-per-node", "--nnodes",
                  "--output-on-failure", "--test-dir", "--build", "--target", "--prefix", "--config", "--install",
                  "--torch", "--mpi", "--job-name", "--ntasks-per-node", "--cpus-per-task", "--time"}


def help_flags(verb):
    """The flags `lite VERB --help` lists (each line of its option list starts with them)."""
    r = run_lite(verb, "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    flags = set()
    for line in r.stdout.splitlines():
        m = re.match(r"^\s+(-\w,\s?)?(--[a-z0-9][a-z0-9-]*)", line)
        if m:
            flags.add(m.group(2))
    assert len(flags) >= 5, f"parsed no flags from 'lite {verb} --help':\n{r.stdout}"
    return flags - {"--help"}


def catalog():
    r = subprocess.run([str(pathlib.Path(LITE).parent / "lite-torch"), "--flag-catalog"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    local = json.loads(subprocess.run([LITE, "--flag-catalog"], capture_output=True, text=True, check=True).stdout)
    return {v["name"]: v for v in json.loads(r.stdout)["verbs"] + local["verbs"]}


class GeneratedDocs(LiteTestCase):
    @classmethod
    def setUpClass(cls):
        cls.flags = {verb: help_flags(verb) for verb in VERBS}
        cls.catalog = catalog()

    def test_every_help_flag_is_in_the_man_page_the_completions_and_the_docs(self):
        bash = (SHARE / "bash-completion/completions/lite").read_text()
        zsh = (SHARE / "zsh/vendor-completions/_lite").read_text()
        fish = (SHARE / "fish/vendor_completions.d/lite.fish").read_text()
        shared_docs = (REPO / "docs/inputs.md").read_text()
        for verb in VERBS:
            man = (SHARE / f"man/man1/lite-{verb}.1").read_text().replace("\\-", "-")
            docs = (REPO / f"docs/{verb}.md").read_text()
            fish_flags = set(re.findall(rf"__fish_seen_subcommand_from {verb}' -l (\S+)", fish)) | set(
                re.findall(rf"__fish_seen_subcommand_from {verb}' -s \w -l (\S+)", fish))
            bash_line = re.search(rf"^    {verb}\) flags='([^']*)'", bash, re.M)
            self.assertIsNotNone(bash_line, f"no flag list for {verb} in the bash completion")
            zsh_case = re.search(rf"^    {verb}\) _arguments(.*?);;$", zsh, re.M | re.S)
            self.assertIsNotNone(zsh_case, f"no case for {verb} in the zsh completion")
            for flag in sorted(self.flags[verb]):
                with self.subTest(verb=verb, flag=flag):
                    self.assertRegex(man, rf"\\fB{re.escape(flag)}\\fR", f"lite-{verb}.1 lacks {flag}")
                    self.assertIn(flag, bash_line.group(1).split(), f"bash completion of {verb} lacks {flag}")
                    self.assertRegex(zsh_case.group(1), rf"'\*?{re.escape(flag)}\[", f"zsh completion of {verb} lacks {flag}")
                    self.assertIn(flag[2:], fish_flags, f"fish completion of {verb} lacks {flag}")
                    self.assertTrue(re.search(rf"{re.escape(flag)}(?![\w-])", docs + shared_docs),
                                    f"docs/{verb}.md (nor docs/inputs.md) never names {flag}")

    def test_every_flag_the_docs_and_man_pages_name_exists(self):
        """The reverse: a flag named in a docs page or a man page but no longer in any --help is stale."""
        every = set().union(*self.flags.values()) | NOT_LITE_FLAGS
        pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for page in pages:
            with self.subTest(page=page.name):
                text = re.sub(r"https?://\S+", "", page.read_text())
                stale = sorted(set(FLAG.findall(text)) - every)
                # An old spelling kept for a release is hidden from --help but still read (with a warning).
                stale = [f for f in stale if not self.is_renamed_alias(f)]
                self.assertEqual(stale, [], f"{page.name} names flags no verb has")
        for verb in VERBS:
            man = (SHARE / f"man/man1/lite-{verb}.1").read_text().replace("\\-", "-")
            named = set(re.findall(r"\\fB(--[a-z0-9-]+)\\fR", man))
            self.assertEqual(named - self.flags[verb] - {"--help"}, set(), f"lite-{verb}.1 names flags its --help lacks")

    def test_the_shared_flag_table_names_each_flags_verbs(self):
        """docs/inputs.md's one-flag-one-meaning table is read off the code: a row's verbs are exactly the verbs whose
        --help lists its flags, and every flag two or more verbs list has a row."""
        text = (REPO / "docs/inputs.md").read_text()
        section = text.split("## Flags every verb shares, one meaning each", 1)[1].split("\n## ", 1)[0]
        rows = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not cells[0].startswith("`"):
                continue
            verbs = set(VERBS) if cells[1] == "every verb" else {v.strip() for v in cells[1].split(",")}
            for flag in FLAG.findall(cells[0]):
                rows[flag] = verbs
        for flag, verbs in sorted(rows.items()):
            with self.subTest(flag=flag):
                self.assertEqual({v for v in VERBS if flag in self.flags[v]}, verbs, f"docs/inputs.md's row of {flag}")
        shared = {f for v in VERBS for f in self.flags[v] if sum(f in self.flags[w] for w in VERBS) >= 2}
        self.assertEqual(sorted(shared - set(rows)), [], "flags two verbs share with no row in docs/inputs.md")

    @staticmethod
    def is_renamed_alias(flag):
        source = (REPO / "apps/lite/renamed_flags.hpp").read_text()
        return f'"{flag}"' in source or f'"{flag[2:]}"' in source

    def test_enumerated_values_complete_from_the_same_tables(self):
        """`lite quantize --mode <Tab>` offers the mode table, `cache-sim --policy <Tab>` the policy table, and
        the values agree with what the verb accepts (the catalog is read off the same definitions)."""
        bash = SHARE / "bash-completion/completions/lite"

        def complete(*words):
            script = (f"source {bash}; COMP_WORDS=(lite {' '.join(words)}); COMP_CWORD={len(words)}; _lite; "
                      'printf "%s\\n" "${COMPREPLY[@]}"')
            r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=self.tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            return set(r.stdout.split())

        self.assertEqual(complete(""), set(VERBS) | {"--help", "--version"})
        self.assertEqual(complete("quantize", "--mo"), {"--mode"})
        modes = complete("quantize", "--mode", "")
        self.assertTrue({"auto", "static", "dynamic", "fp16"} <= modes, modes)
        self.assertEqual(modes, set(self.catalog["quantize"]["flags"][self.index("quantize", "--mode")]["values"]))
        self.assertTrue({"lru", "s3fifo", "sieve", "arc", "all"} <= complete("cache-sim", "--policy", ""))
        self.assertIn("ketama", complete("cache-sim", "--route", ""))
        self.assertIn("l1", complete("prune", "--criterion", ""))
        self.assertIn("json", complete("profile", "--output-format", ""))
        (self.tmp / "model.pt").write_bytes(b"")
        self.assertIn("model.pt", complete("quantize", "-o", "mo"))  # a file argument completes file names
        self.assertEqual(complete("profile", "--iterations", ""), set())  # a number: nothing to offer

    def index(self, verb, flag):
        return next(i for i, f in enumerate(self.catalog[verb]["flags"]) if flag in f["names"])

    def test_every_enumerated_value_is_accepted_by_its_verb(self):
        """Each value a completion offers for --mode, --criterion, --optimizer, --route, --format and --policy is
        one the verb's own check accepts (--dump-config validates without running)."""
        model = DATA / "fmnist_cnn.pt"
        base = {"quantize": [model], "prune": [model], "cache-sim": [DATA / "inference_requests.csv"],
                "distill": ["--teacher", model, "--student", model, "--data", DATA / "fmnist_eval.pt"]}
        cases = [("quantize", "--mode"), ("quantize", "--calib-method"), ("prune", "--criterion"),
                 ("distill", "--optimizer"), ("cache-sim", "--route"), ("cache-sim", "--format")]
        for verb, flag in cases:
            values = self.catalog[verb]["flags"][self.index(verb, flag)]["values"]
            self.assertGreater(len(values), 1, (verb, flag))
            for value in values:
                with self.subTest(verb=verb, flag=flag, value=value):
                    r = run_lite(verb, *base[verb], flag, value, "--dump-config")
                    self.assertEqual(r.returncode, 0, r.stderr)

    def test_generated_files_are_reproducible_and_the_man_pages_render(self):
        out = self.tmp / "share"
        r = subprocess.run([LITE, "--generate-docs", str(out)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        generated = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
        self.assertEqual(len(generated), 1 + len(VERBS) + 3, generated)
        for rel in generated:
            with self.subTest(file=str(rel)):
                self.assertEqual((out / rel).read_bytes(), (SHARE / rel).read_bytes(), "a rebuild differs")
        for page in sorted((out / "man/man1").glob("*.1")):
            with self.subTest(page=page.name):
                r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True,
                                   text=True)
                self.assertEqual((r.returncode, r.stderr), (0, ""), page.name)
                self.assertEqual(gzip.decompress((SHARE / f"man/man1/{page.name}.gz").read_bytes()),
                                 page.read_bytes())
        self.assertIn("lite-cache-sim(1)", subprocess.run(
            ["man", "-l", "-P", "cat", str(out / "man/man1/lite.1")], capture_output=True, text=True,
            env={**os.environ, "MANWIDTH": "100"}).stdout.replace("\u2010", "-"))

    def test_fish_completes_and_zsh_parses(self):
        """fish's own completer offers the verbs, a verb's flags and an enumerated flag's values; zsh parses its
        script (scripts/setup.sh installs both shells)."""
        fish_file = SHARE / "fish/vendor_completions.d/lite.fish"

        def fish(line):
            r = subprocess.run(["fish", "-c", f"source {fish_file}; complete -C '{line}'"], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return {l.split("\t")[0] for l in r.stdout.splitlines()}

        self.assertEqual(fish("lite "), set(VERBS))
        self.assertEqual(fish("lite cache-sim --po"), {"--policy"})
        self.assertTrue({"static", "dynamic", "auto"} <= fish("lite quantize --mode "))
        self.assertIn("--criterion", fish("lite prune --cr"))
        r = subprocess.run(["zsh", "-n", str(SHARE / "zsh/vendor-completions/_lite")], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr), (0, ""))


class Version(LiteTestCase):
    def test_version_says_what_a_bug_report_needs_one_fact_a_line(self):
        r = run_lite("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = dict(l.split(": ", 1) for l in r.stdout.splitlines()[1:])
        self.assertRegex(r.stdout.splitlines()[0], r"^lite \d+\.\d+\.\d+$")
        self.assertRegex(lines["commit"], r"^[0-9a-f]{7,}|unknown$")
        self.assertRegex(lines["build"], r"^(Release|Debug|RelWithDebInfo|MinSizeRel) build")
        self.assertRegex(lines["libtorch"], r"^1\.13")
        self.assertIn("onednn", lines["quantized engines"])
        self.assertRegex(lines["MPI"], r"^(built in|not built in)")
        self.assertTrue(lines["Gloo"].startswith("built in"), lines["Gloo"])
        cpu_flags = pathlib.Path("/proc/cpuinfo").read_text()
        self.assertEqual("avx2" in lines["CPU features"].split(), " avx2" in cpu_flags, lines["CPU features"])
        self.assertIn("logical cores", lines["CPU"])


if __name__ == "__main__":
    unittest.main()
