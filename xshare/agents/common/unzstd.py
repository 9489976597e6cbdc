"""Zstandard decompression without a new dependency, for OpenClaw's compressed transcript rows and archives.

Python has zstd in its standard library only from 3.14 (`compression.zstd`). Before that this uses the
system's libzstd through ctypes (Linux distributions ship it as a dependency of systemd and apt; macOS
with Homebrew's zstd). Where neither is there, `decompress` returns None and the caller counts what it
could not read; it never guesses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
from types import ModuleType

MAX_OUTPUT = 64 << 20  # OpenClaw caps a row at 4 MiB; a whole archive may be larger, never this large
_UNKNOWN_SIZE = (1 << 64) - 1, (1 << 64) - 2  # ZSTD_CONTENTSIZE_UNKNOWN, ZSTD_CONTENTSIZE_ERROR

_library: ctypes.CDLL | bool | None = None  # not looked for yet; False: none found
_module: ModuleType | bool | None = None  # the same for the standard library's compression.zstd


def _stdlib() -> ModuleType | None:
    global _module
    if _module is None:
        try:
            _module = importlib.import_module("compression.zstd")
        except ImportError:
            _module = False  # looked for once: a failed import is not cheap, and rows come by the thousand
    return _module if isinstance(_module, ModuleType) else None


def _libzstd() -> ctypes.CDLL | None:
    global _library
    if _library is None:
        _library = False
        name = ctypes.util.find_library("zstd")
        for candidate in ([name] if name else []) + ["libzstd.so.1", "libzstd.dylib"]:
            try:
                library = ctypes.CDLL(candidate)
            except OSError:
                continue
            library.ZSTD_decompress.restype = ctypes.c_size_t
            library.ZSTD_decompress.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t)
            library.ZSTD_isError.restype = ctypes.c_uint
            library.ZSTD_isError.argtypes = (ctypes.c_size_t,)
            library.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
            library.ZSTD_getFrameContentSize.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
            _library = library
            break
    return _library if isinstance(_library, ctypes.CDLL) else None


def available() -> bool:
    """Whether this Python can decompress zstd at all."""
    return _stdlib() is not None or _libzstd() is not None


def decompress(data: bytes, size: int | None = None) -> bytes | None:
    """The content of one zstd frame (`size`: its length when known, as OpenClaw records it), or None
    when it cannot be decompressed here: no decoder, a damaged frame, a size that does not match."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or not data:
        return None
    module = _stdlib()
    if module is not None:
        try:
            found = module.decompress(bytes(data))
        except Exception:  # noqa: BLE001 - any damage is one unreadable frame
            return None
        return found if size is None or len(found) == size else None
    library = _libzstd()
    if library is None:
        return None
    data = bytes(data)
    if size is None:
        size = library.ZSTD_getFrameContentSize(data, len(data))
        if size in _UNKNOWN_SIZE:
            return None
    if not 0 < size <= MAX_OUTPUT:
        return None
    out = ctypes.create_string_buffer(size)
    written = library.ZSTD_decompress(out, size, data, len(data))
    if library.ZSTD_isError(written) or written != size:
        return None
    return out.raw[:written]
