"""Atomic file writes: temp file in the same folder + rename, so a crash never leaves half a file."""
from __future__ import annotations

import io
import os
import tempfile
import zipfile

import numpy as np

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _write_atomic(path, data: bytes) -> None:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path, data: bytes) -> None:
    """A file's bytes made elsewhere (a Ray worker's result), written here whole or not at all."""
    _write_atomic(path, bytes(data))


def write_text_atomic(path, text: str) -> None:
    _write_atomic(path, text.encode("utf-8"))


def write_npz_atomic(path, arrays: dict) -> None:
    """Write an uncompressed npz of plain numeric arrays (no object arrays: loads with allow_pickle=False)."""
    buf = io.BytesIO()
    # numpy.savez stamps entries with the current time; fixed timestamps make the bytes reproducible.
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            a = np.ascontiguousarray(value)
            if a.dtype == object:
                raise TypeError(f"result array '{key}' has dtype object; only numeric arrays are written")
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a, allow_pickle=False)
    _write_atomic(path, buf.getvalue())
