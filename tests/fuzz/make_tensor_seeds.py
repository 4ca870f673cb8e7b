#!/usr/bin/python3
"""Writes the seed corpora of the tensor-file fuzz targets (tensor_headers, pickle_compat, zip_members) into
tests/fuzz/corpus/: small valid files as numpy and torch write them, plus a few near misses. Run with Debian's
/usr/bin/python3 (numpy and torch): tests/fuzz/make_tensor_seeds.py. Every seed stays a few KB (fuzz.sh's
-max_len is 8192). The seeds are committed; rerun only to add forms."""
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import torch

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    assert len(data) <= 8192, (target, name, len(data))
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def npy(array, version=None, fortran=False):
    f = io.BytesIO()
    a = np.asfortranarray(array) if fortran else array
    if version is None:
        np.save(f, a)
    else:
        np.lib.format.write_array(f, a, version=version)
    return f.getvalue()


def idx(array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def tensor_headers():
    t = "tensor_headers"
    write(t, "npy_v1_float32", npy(np.arange(6, dtype=np.float32).reshape(2, 3)))
    write(t, "npy_v1_int64_labels", npy(np.array([3, 1, 4], dtype=np.int64)))
    write(t, "npy_v2_uint8", npy(np.arange(8, dtype=np.uint8).reshape(2, 2, 2), version=(2, 0)))
    write(t, "npy_v3_float16", npy(np.ones((1, 4), dtype=np.float16), version=(3, 0)))
    write(t, "npy_v1_bool_empty", npy(np.zeros((0, 5), dtype=np.bool_)))
    write(t, "npy_v1_scalar", npy(np.float64(2.5)))
    write(t, "npy_fortran", npy(np.ones((2, 3), dtype=np.float32), fortran=True))
    write(t, "npy_big_endian", npy(np.ones(2, dtype=">f4")))
    write(t, "npy_truncated", npy(np.arange(64, dtype=np.float64))[:-9])
    write(t, "idx3_images", idx(np.arange(2 * 3 * 3).reshape(2, 3, 3)))
    write(t, "idx1_labels", idx(np.array([7, 2, 1, 0])))
    write(t, "idx_float_type", bytes([0, 0, 0x0D, 1, 0, 0, 0, 1]) + struct.pack(">f", 1.0))
    write(t, "idx_truncated", idx(np.arange(20).reshape(4, 5))[:-3])


def data_pkl(obj, protocol=2):
    """The data.pkl member of torch.save(obj): the pickle stream lite's rewriter scans."""
    f = io.BytesIO()
    torch.save(obj, f, pickle_protocol=protocol)
    with zipfile.ZipFile(io.BytesIO(f.getvalue())) as z:
        name = next(n for n in z.namelist() if n.endswith("data.pkl"))
        return z.read(name)


def pickle_compat():
    t = "pickle_compat"
    x, y = torch.zeros(2, 3), torch.tensor([1, 0])
    write(t, "dict_one_item", data_pkl({"x": x}))
    write(t, "dict_x_y", data_pkl({"x": x, "y": y}))
    write(t, "list_one_item", data_pkl([x]))
    write(t, "list_of_pairs", data_pkl([(x, y), (x, y)]))
    write(t, "tuple_x_y", data_pkl((x, y)))
    write(t, "tensor", data_pkl(x))
    write(t, "dict_protocol4", data_pkl({"x": x, "y": [y]}, protocol=4))
    write(t, "nested_protocol4", pickle.dumps({"a": [1, -2, 2**40, -(2**70)], "b": ("s", 1.5, None, True)}, protocol=4))
    write(t, "nested_protocol5", pickle.dumps([{"k": b"bytes"}, frozenset([1]), {2}], protocol=5))
    write(t, "protocol0", pickle.dumps({"a": [1, 2]}, protocol=0))


def zip_members():
    t = "zip_members"
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 0], dtype=np.int64)
    for name, save in (("npz_stored", np.savez), ("npz_deflated", np.savez_compressed)):
        f = io.BytesIO()
        save(f, x=x, y=y)
        write(t, name, f.getvalue())
    f = io.BytesIO()
    np.savez(f, x)
    write(t, "npz_positional", f.getvalue())
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.npy", npy(x))
        z.writestr("dir/", b"")
        z.writestr("comment.txt", b"hello " * 40)
        z.comment = b"an archive comment"
    write(t, "zip_with_comment", f.getvalue())
    f = io.BytesIO()
    torch.save(torch.zeros(2), f)
    write(t, "torch_save_archive", f.getvalue())
    write(t, "empty_archive", b"PK\x05\x06" + bytes(18))


if __name__ == "__main__":
    tensor_headers()
    pickle_compat()
    zip_members()
