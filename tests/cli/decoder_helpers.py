"""What the decoder CLI tests share: fixtures built by scripts/fixtures/make_decoder.py (tiny, seeded; a fixture
that fails to build fails the test with the script's output), PyTorch's own greedy loop over an artifact, and the
provenance lite records inside it."""
import json
import subprocess
import zipfile
from pathlib import Path

from litetest import REPO

FIXTURES = REPO / "scripts" / "fixtures"
PYTHON = "/usr/bin/python3"


def build_decoder(folder, shape, form, export, seed=3, threads=None):
    out = Path(folder) / f"{shape}_{form}_{export}.pt"
    argv = [PYTHON, str(FIXTURES / "make_decoder.py"), "--shape", shape, "--size", "tiny", "--form", form,
            "--export", export, "--seed", str(seed), "--out", str(out)]
    if threads is not None:
        argv += ["--threads", str(threads)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"make_decoder.py failed for {out.name}:\n{r.stdout}\n{r.stderr}")
    return out


def python_greedy(model, prompt_file, generate=6):
    """Stock PyTorch loads the artifact and runs a greedy loop over it (decoder_reference.py): its JSON."""
    r = subprocess.run([PYTHON, str(FIXTURES / "decoder_reference.py"), str(model), "--prompt-file", str(prompt_file),
                        "--generate", str(generate)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"PyTorch could not generate with {model}:\n{r.stderr}")
    return json.loads(r.stdout)


def provenance(path):
    """The lite.json an artifact carries."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("extra/lite.json"))
        return json.loads(z.read(name))
