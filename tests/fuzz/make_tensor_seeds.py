#!/usr/bin/python3
"""Writes the seed corpora of the tensor-file fuzz targets (tensor_headers, pickle_compat, zip_members) into
tests/fuzz/corpus/: small valid files as numpy and torch write them, plus a few near misses. Run with Debian's
/usr/bin/python3 (numpy and torch): tests/fuzz/make_tensor_seeds.py. Every seed stays a few KB (fuzz.sh's
-max_len is 8192). The seeds are committed; rerun only to add forms (`make_tensor_seeds.py hostile` writes only
the hostile shapes of issue 22, which need neither numpy nor torch to build)."""
import gzip
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib

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


def zip_one(name, data, method, declared):
    """A zip with one member whose directory declares `declared` uncompressed bytes (the data as given)."""
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0, 0, len(data), declared, len(name), 0)
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0, 0, len(data), declared,
                          len(name), 0, 0, 0, 0, 0, 0)
    body = local + name + data
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), len(body), 0)
    return body + central + name + end


def raw_deflate(data, level=9):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def hostile():
    """Issue 22's hostile shapes, small: nesting, lengths and memo indices past the stream, declared sizes the
    data cannot back, gzip bombs behind small headers."""
    t = "pickle_compat"
    write(t, "hostile_nested_tuples_1500", b"\x80\x02)" + b"\x85" * 1500 + b".")
    write(t, "hostile_nested_lists_1200", b"\x80\x02" + b"]" * 1200 + b"a" * 1199 + b".")
    write(t, "hostile_open_marks_1100", b"\x80\x02" + b"(" * 1100 + b")t.")
    # A tuple 900 deep put twice into a list already held by another: the late growth counts.
    deep = b")" + b"\x85" * 899
    write(t, "hostile_late_growth", b"\x80\x02]q\x00]q\x01a" + deep + b"q\x02h\x01h\x02a0h\x01h\x02a0.")
    pad = b"a" * 90
    write(t, "hostile_binunicode_4g", b"\x80\x02X" + struct.pack("<I", 0xFFFFFFFF) + pad + b".")
    write(t, "hostile_binunicode8_huge", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + pad + b".")
    write(t, "hostile_binbytes8_huge", b"\x80\x04\x8e" + struct.pack("<Q", 0xFFFFFFFFFFFFFFFF) + pad + b".")
    write(t, "hostile_binbytes_4g", b"\x80\x02B" + struct.pack("<I", 0xFFFFFFFF) + pad + b".")
    write(t, "hostile_long4_huge", b"\x80\x02\x8b" + struct.pack("<I", 0x7FFFFFFF) + pad + b".")
    write(t, "hostile_memo_index_4g", b"\x80\x02]r" + struct.pack("<I", 0xFFFFFFFF) + b".")
    write(t, "hostile_short_stack", b"\x80\x02\x85\x86\x87.")
    t = "tensor_headers"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    write(t, "hostile_npy_shape_beyond_file", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
          header.encode() + bytes(16))
    write(t, "hostile_idx_shape_beyond_file", bytes([0, 0, 8, 3]) + struct.pack(">III", 65536, 256, 256) + bytes(16))
    idx_head = bytes([0, 0, 8, 3]) + struct.pack(">III", 10, 28, 28)
    write(t, "hostile_idx_gz_longer_than_header", gzip.compress(idx_head + bytes(6 << 20), 9))
    write(t, "hostile_idx_gz_claims_4g",
          gzip.compress(bytes([0, 0, 8, 3]) + struct.pack(">III", 65536, 256, 256) + bytes(4096), 9))
    write(t, "idx_gz_two_members", gzip.compress(idx_head[:7]) + gzip.compress(idx_head[7:] + bytes(7840)))
    t = "zip_members"
    packed = raw_deflate(b"\x00" * 3000)
    write(t, "hostile_npz_declares_3g", zip_one(b"x.npy", packed, 8, 3000000000))
    write(t, "hostile_npz_declares_more_than_inflates", zip_one(b"x.npy", packed, 8, 3000 * 500))
    write(t, "hostile_npz_inflates_past_declared", zip_one(b"x.npy", raw_deflate(bytes(3 << 20)), 8, 1000))
    write(t, "hostile_npz_stored_size_mismatch", zip_one(b"x.npy", b"abcd", 0, 4000))


if __name__ == "__main__":
    if sys.argv[1:] != ["hostile"]:
        tensor_headers()
        pickle_compat()
        zip_members()
    hostile()
