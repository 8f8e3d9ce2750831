"""Memref descriptors as ctypes structures, built from and read into numpy arrays.

A ranked memref of rank r is passed to JIT'd code as {allocated pointer, aligned pointer, offset,
sizes[r], strides[r]} (strides in elements, not bytes), an unranked one as {rank, pointer to a
ranked descriptor}: MLIR's C interface (`llvm.emit_c_interface`).
"""

import ctypes

import numpy as np

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION

# No __all__: as upstream's, `from mlir.runtime import *` also gives `ctypes` and `np`.


class C128(ctypes.Structure):
    """complex<f64>."""
    _fields_ = [("real", ctypes.c_double), ("imag", ctypes.c_double)]


class C64(ctypes.Structure):
    """complex<f32>."""
    _fields_ = [("real", ctypes.c_float), ("imag", ctypes.c_float)]


class F16(ctypes.Structure):
    """f16, as its 16 bits."""
    _fields_ = [("f16", ctypes.c_int16)]


_SPECIAL = {np.dtype(np.complex128): C128, np.dtype(np.complex64): C64,
            np.dtype(np.float16): F16}
_BACK = {C128: "complex128", C64: "complex64", F16: "float16"}

if _MLIR_VERSION >= 22:
    try:
        import ml_dtypes  # optional: numpy's bfloat16 and float8 types
    except ModuleNotFoundError:
        ml_dtypes = None

    class BF16(ctypes.Structure):
        """bf16, as its 16 bits."""
        _fields_ = [("bf16", ctypes.c_int16)]

    class F8E5M2(ctypes.Structure):
        """f8E5M2, as its 8 bits."""
        _fields_ = [("f8E5M2", ctypes.c_int8)]

    _BACK.update({BF16: "bfloat16", F8E5M2: "float8_e5m2"})
    if ml_dtypes is not None:
        _SPECIAL.update({np.dtype(ml_dtypes.bfloat16): BF16,
                         np.dtype(ml_dtypes.float8_e5m2): F8E5M2})


def as_ctype(dtp):
    """The ctypes type of a numpy dtype."""
    return _SPECIAL.get(np.dtype(dtp)) or np.ctypeslib.as_ctypes_type(dtp)


def to_numpy(array):
    """A numpy view with the element type the ctypes structures stand for."""
    for ctp, name in _BACK.items():
        if array.dtype == ctp:
            if name in ("bfloat16", "float8_e5m2") and ml_dtypes is None:
                raise ModuleNotFoundError(f"{name} requires the ml_dtypes package, please "
                                          f"run:\n\npip install ml_dtypes\n")
            return array.view(name)
    return array


def _descriptor(fields, doc):
    return type("MemRefDescriptor", (ctypes.Structure,), {"_fields_": fields, "__doc__": doc})


def make_nd_memref_descriptor(rank, dtype):
    """The descriptor structure of a memref of rank >= 1 and element ctype `dtype`."""
    return _descriptor([("allocated", ctypes.c_longlong), ("aligned", ctypes.POINTER(dtype)),
                        ("offset", ctypes.c_longlong), ("shape", ctypes.c_longlong * rank),
                        ("strides", ctypes.c_longlong * rank)],
                       f"A rank-{rank} memref descriptor.")


def make_zero_d_memref_descriptor(dtype):
    """The descriptor structure of a rank-0 memref."""
    return _descriptor([("allocated", ctypes.c_longlong), ("aligned", ctypes.POINTER(dtype)),
                        ("offset", ctypes.c_longlong)], "A rank-0 memref descriptor.")


class UnrankedMemRefDescriptor(ctypes.Structure):
    """{rank, pointer to a ranked descriptor}."""
    _fields_ = [("rank", ctypes.c_longlong), ("descriptor", ctypes.c_void_p)]


def get_ranked_memref_descriptor(nparray):
    """A descriptor viewing nparray's memory (keep the array alive while it is used)."""
    ctp = as_ctype(nparray.dtype)
    if nparray.ndim == 0:
        d = make_zero_d_memref_descriptor(ctp)()
    else:
        d = make_nd_memref_descriptor(nparray.ndim, ctp)()
        d.shape = nparray.ctypes.shape
        d.strides = (ctypes.c_longlong * nparray.ndim)(
            *[s // nparray.itemsize for s in nparray.strides])
    d.allocated = nparray.ctypes.data
    d.aligned = nparray.ctypes.data_as(ctypes.POINTER(ctp))
    d.offset = ctypes.c_longlong(0)
    return d


def get_unranked_memref_descriptor(nparray):
    """An unranked descriptor of nparray (its ranked descriptor is kept by the result)."""
    ranked = get_ranked_memref_descriptor(nparray)
    d = UnrankedMemRefDescriptor()
    d.rank = nparray.ndim
    d.descriptor = ctypes.cast(ctypes.pointer(ranked), ctypes.c_void_p)
    d._ranked = ranked
    return d


def move_aligned_ptr_by_offset(aligned_ptr, offset):
    """aligned_ptr moved ahead by `offset` elements."""
    base = ctypes.addressof(aligned_ptr.contents)
    return ctypes.cast(base + offset * ctypes.sizeof(aligned_ptr.contents), type(aligned_ptr))


def _as_numpy(descriptor):
    start = move_aligned_ptr_by_offset(descriptor.aligned, descriptor.offset)
    flat = np.ctypeslib.as_array(start, shape=descriptor.shape)
    strided = np.lib.stride_tricks.as_strided(
        flat, np.ctypeslib.as_array(descriptor.shape),
        np.ctypeslib.as_array(descriptor.strides) * flat.itemsize)
    return to_numpy(strided)


def unranked_memref_to_numpy(unranked_memref, np_dtype):
    """A numpy view of the memory an unranked memref (a pointer to its descriptor) describes."""
    ctp = as_ctype(np_dtype)
    ranked = make_nd_memref_descriptor(unranked_memref[0].rank, ctp)
    return _as_numpy(ctypes.cast(unranked_memref[0].descriptor, ctypes.POINTER(ranked))[0])


def ranked_memref_to_numpy(ranked_memref):
    """A numpy view of the memory a ranked memref (a pointer to its descriptor) describes."""
    return _as_numpy(ranked_memref[0])
