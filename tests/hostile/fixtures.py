"""The hostile files the sweep feeds lite, made once per sweep in one folder (read-only for every case).

Models whose own lite.json lies (item 1), containers that inflate past what they declare (item 2), prefix-trace
lines and token files of every wrong shape (item 5), and a tiny decoder built by scripts/fixtures/make_decoder.py.
Nothing here is large on disk: a 1 GiB inflation is a 1 MB deflate stream.
"""
import gzip
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import zlib

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "data"
PYTHON = "/usr/bin/python3"
GIB = 1 << 30

# Item 1: what a model's lite.json may declare, and whether lite must refuse it (2) or may treat an unreadable
# record as none (0, documented in docs/inputs.md) as well.
LITE_JSON = {
    "negative_dim": ({"inputs": [{"shape": [-1, 99999999999, 28, 28], "dtype": "float32"}]}, (2,)),
    "zero_dim": ({"inputs": [{"shape": [1, 0, 28, 28]}]}, (2,)),
    "complex_dtype": ({"inputs": [{"shape": [1, 1, 28, 28], "dtype": "complex128"}]}, (2,)),
    "unknown_dtype": ({"inputs": [{"shape": [1, 1, 28, 28], "dtype": "float7"}]}, (2,)),
    "huge_product": ({"inputs": ["100000x1x28x28000"]}, (2,)),
    "dim_beyond_64_bits": ({"inputs": [{"shape": [18446744073709551616, 1, 28, 28]}]}, (2,)),
    "fractional_dim": ({"inputs": [{"shape": [1.5, 1, 28, 28]}]}, (2,)),
    "string_dim": ({"inputs": [{"shape": ["a", 1, 28, 28]}]}, (2,)),
    "rank_100": ({"inputs": [{"shape": [1] * 100}]}, (2,)),
    "inputs_not_a_list": ({"inputs": 5}, (2,)),
    "input_without_shape": ({"inputs": [{"dtype": "float32"}]}, (2,)),
    "200k_inputs": ({"inputs": ["1x1x28x28"] * 200000}, (2,)),
    "wrong_channels": ({"inputs": ["1x3x28x28"]}, (2,)),
    "int_dtype": ({"inputs": [{"shape": [1, 1, 28, 28], "dtype": "int64"}]}, (2,)),
}
# Unreadable records: not JSON at all, or nested past the parser's depth bound.
LITE_JSON_TEXT = {
    "deep_json": ('{"inputs": ' + "[" * 100000 + "]" * 100000 + "}", (0, 2)),
    "nan_json": ('{"inputs": [{"shape": [NaN, 1, 28, 28]}]}', (0, 2)),
    "truncated_json": ('{"inputs": [{"shape": [1, 1, 28', (0, 2)),
}


def model_with_lite_json(folder, name, text):
    code = ("import sys, torch\n"
            "m = torch.jit.load(sys.argv[1])\n"
            "torch.jit.save(m, sys.argv[2], _extra_files={'lite.json': open(sys.argv[3]).read()})\n")
    meta = folder / f"{name}.json"
    meta.write_text(text)
    subprocess.run([PYTHON, "-c", code, str(DATA / "fmnist_cnn.pt"), str(folder / f"meta_{name}.pt"), str(meta)],
                   check=True, capture_output=True)
    meta.unlink()


def npy_header(shape, descr="<f4"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def deflated_zeros(n, head=b""):
    """A raw deflate stream of `head` then n zero bytes, and its CRC-32 (compressed in 64 MiB pieces)."""
    c, crc, out, chunk = zlib.compressobj(9, zlib.DEFLATED, -15), zlib.crc32(head), [], b"\0" * (64 << 20)
    out.append(c.compress(head))
    left = n
    while left:
        piece = chunk[:min(left, len(chunk))]
        crc = zlib.crc32(piece, crc)
        out.append(c.compress(piece))
        left -= len(piece)
    out.append(c.flush())
    return b"".join(out), crc


def zip_member(name, stream, crc, csize, usize, offset):
    """A local header and a central-directory entry for one deflated member whose sizes are whatever is given."""
    n = name.encode()
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, csize, usize, len(n), 0) + n
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, csize, usize, len(n), 0, 0, 0, 0,
                          0, offset) + n
    return local + stream, central


def write_zip(path, members):
    """members: (name, raw deflate stream, crc, declared uncompressed size)."""
    body, centrals = b"", []
    for name, stream, crc, usize in members:
        local, central = zip_member(name, stream, crc, len(stream), usize, len(body))
        body += local
        centrals.append(central)
    cd = b"".join(centrals)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(cd), len(body), 0)
    path.write_bytes(body + cd + end)


def labels_member(count):
    data = npy_header((count,), "<i8") + bytes(8 * count)
    return ("y.npy", zlib.compress(data, 9)[2:-4], zlib.crc32(data), len(data))


def container_bombs(folder):
    """Item 2: .npz and gzip idx files that inflate far past what they declare, and headers that declare far more
    than their data holds."""
    head = npy_header((16, 1, 28, 28))
    stream, crc = deflated_zeros(GIB, head)
    # honest sizes: the member's header says 16 images, its data inflates to 1 GiB
    write_zip(folder / "bomb_payload.npz", [("x.npy", stream, crc, len(head) + GIB), labels_member(16)])
    # lying sizes: the central directory says 16 images' bytes, the stream inflates to 1 GiB
    write_zip(folder / "bomb_lying.npz", [("x.npy", stream, crc, len(head) + 16 * 784 * 4), labels_member(16)])
    small = npy_header((100000000, 1, 28, 28)) + bytes(4096)
    write_zip(folder / "bomb_shape.npz", [("x.npy", zlib.compress(small)[2:-4], zlib.crc32(small), len(small)),
                                          labels_member(16)])
    (folder / "bomb_shape.npy").write_bytes(small)
    idx = struct.pack(">I3I", 0x803, 16, 28, 28)
    with open(folder / "bomb_payload-images.idx3-ubyte.gz", "wb") as f:
        gz = zlib.compressobj(9, zlib.DEFLATED, 31)
        f.write(gz.compress(idx))
        chunk = b"\0" * (64 << 20)
        for _ in range(GIB // len(chunk)):
            f.write(gz.compress(chunk))
        f.write(gz.flush())
    (folder / "bomb_header-images.idx3-ubyte.gz").write_bytes(
        gzip.compress(struct.pack(">I3I", 0x803, 2 ** 31 - 1, 28, 28) + bytes(4096), 9))
    labels = struct.pack(">II", 0x801, 16) + bytes(16)
    (folder / "labels16.idx1-ubyte").write_bytes(labels)
    # a token file (int64 ids) whose member inflates to 1 GiB past its 2x8 header
    head = npy_header((2, 8), "<i8")
    stream, crc = deflated_zeros(GIB, head)
    write_zip(folder / "bomb_tokens.npz", [("ids.npy", stream, crc, len(head) + GIB)])


def prefix_traces(folder):
    """Item 5: JSON-lines prefix traces, two good requests then one bad line (line 3)."""
    good = [json.dumps({"timestamp": 0, "input_length": 1024, "output_length": 4, "hash_ids": [1, 2]}),
            json.dumps({"timestamp": 5, "input_length": 700, "output_length": 4, "hash_ids": [1, 3]})]

    def mooncake(**fields):
        line = {"timestamp": 9, "input_length": 512, "output_length": 4, "hash_ids": [7]}
        line.update(fields)
        return json.dumps({k: v for k, v in line.items() if v is not None})

    bad = {
        "deep": '{"x": ' + "[" * 100000 + "]" * 100000 + ', "timestamp": 9, "input_length": 1, "output_length": 1}',
        "negative_length": mooncake(input_length=-512),
        "absurd_length": mooncake(input_length=10 ** 30),
        "length_beyond_64_bits": mooncake(input_length=2 ** 64),
        "too_many_ids": mooncake(hash_ids=list(range(10, 200010))),
        "too_few_ids": mooncake(input_length=4096, hash_ids=[7]),
        "time_backwards": mooncake(timestamp=1),
        "negative_time": mooncake(timestamp=-5),
        "string_id": mooncake(hash_ids=["a"]),
        "fractional_id": mooncake(hash_ids=[1.5]),
        "id_beyond_64_bits": mooncake(hash_ids=[2 ** 64]),
        "duplicate_key": mooncake()[:-1] + ', "input_length": 512}',
        "missing_ids": mooncake(hash_ids=None),
        "missing_length": mooncake(input_length=None),
        "negative_output": mooncake(output_length=-1),
        "truncated": mooncake()[:20],
        "nul_bytes": mooncake().replace(", ", ",\0"),
        "array_line": json.dumps([1, 2, 3]),
        "tokens_among_hash_ids": json.dumps({"tokens": [1, 2, 3]}),
    }
    for name, line in bad.items():
        (folder / f"prefix_{name}.jsonl").write_text("\n".join(good + [line]) + "\n")
    tokens_good = [json.dumps({"tokens": list(range(100, 700))}), json.dumps({"tokens": list(range(100, 400))})]
    tokens_bad = {
        "token_string": json.dumps({"tokens": [1, "a"]}),
        "token_negative": json.dumps({"tokens": [1, -4]}),
        "token_beyond_64_bits": json.dumps({"tokens": [2 ** 64]}),
        "token_both_keys": json.dumps({"tokens": [1], "prompt_token_ids": [1]}),
        "token_empty": json.dumps({"tokens": []}),
    }
    for name, line in tokens_bad.items():
        (folder / f"prefix_{name}.jsonl").write_text("\n".join(tokens_good + [line]) + "\n")
    (folder / "prefix_empty.jsonl").write_text("")
    (folder / "prefix_utf16.jsonl").write_bytes("\n".join(good).encode("utf-16"))
    return sorted(bad) + sorted(tokens_bad)


def token_files(folder):
    """Item 5: token files for a decoder's --prompts, every wrong shape, type and size."""
    code = r"""
import sys, torch, numpy as np
d = sys.argv[1]
np.save(d + '/tok_float.npy', np.ones((2, 8)))
np.save(d + '/tok_3d.npy', np.ones((2, 2, 8), dtype=np.int64))
np.save(d + '/tok_empty.npy', np.zeros((0, 0), dtype=np.int64))
np.save(d + '/tok_negative.npy', -np.ones((2, 8), dtype=np.int64))
np.save(d + '/tok_vocab.npy', np.full((2, 8), 10 ** 6, dtype=np.int64))
np.save(d + '/tok_past_positions.npy', np.ones((1, 100000), dtype=np.int64))
torch.save(torch.ones(2, 8), d + '/tok_float.pt')
torch.save(['a', 'b'], d + '/tok_strings.pt')
torch.save({'weird': torch.ones(2, 8, dtype=torch.int64)}, d + '/tok_dict.pt')
"""
    subprocess.run([PYTHON, "-c", code, str(folder)], check=True, capture_output=True)
    (folder / "tok_text.txt").write_text("hello world\n")
    (folder / "tok_huge_header.npy").write_bytes(npy_header((2 ** 40, 2 ** 20), "<i8") + bytes(64))


KV_MODELS = r"""
import sys, torch
from typing import List
class Mismatched(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(256, 8)
    def forward(self, ids, cache: List[torch.Tensor]):
        ctx = ids.shape[1]
        if len(cache) > 0:
            ctx = ctx + cache[0].shape[2]
        k = torch.zeros(ids.shape[0], 2, ctx, 4)
        v = torch.zeros(ids.shape[0], 3, ctx + 1, 4)
        return self.emb(ids) @ self.emb.weight.t(), [k, v]
class Frozen(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(256, 8)
    def forward(self, ids, cache: List[torch.Tensor]):
        k = torch.zeros(ids.shape[0], 2, 3, 4)
        return self.emb(ids) @ self.emb.weight.t(), [k, k.clone()]
torch.jit.script(Mismatched()).save(sys.argv[1] + '/kv_mismatched.pt')
torch.jit.script(Frozen()).save(sys.argv[1] + '/kv_not_growing.pt')
"""


def decoders(folder):
    r = subprocess.run([PYTHON, str(REPO / "scripts" / "fixtures" / "make_decoder.py"), "--shape", "gpt2", "--size",
                        "tiny", "--form", "kv-list", "--export", "script", "--seed", "3", "--out",
                        str(folder / "decoder.pt")], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"make_decoder.py failed: {r.stderr}")
    script = folder / "kv_models.py"
    script.write_text(KV_MODELS)  # torch.jit.script reads the classes' source: a file, not python -c
    subprocess.run([PYTHON, str(script), str(folder)], check=True, capture_output=True)
    script.unlink()


def build(folder):
    """Every fixture, into folder (created). Returns the names of the prefix-trace variants."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("fmnist_cnn.pt", "fmnist_eval.pt", "inference_requests.csv"):
        shutil.copyfile(DATA / name, folder / name)
    for name, (meta, _) in LITE_JSON.items():
        model_with_lite_json(folder, name, json.dumps(meta))
    for name, (text, _) in LITE_JSON_TEXT.items():
        model_with_lite_json(folder, name, text)
    container_bombs(folder)
    token_files(folder)
    decoders(folder)
    (folder / "recipe_ok.json").write_text(json.dumps(
        {"lite_recipe": 1, "model": str(folder / "fmnist_cnn.pt"),
         "steps": [{"quantize": {"mode": "dynamic", "calib": str(folder / "fmnist_eval.pt")}}]}))
    return prefix_traces(folder)
