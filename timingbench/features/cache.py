"""On-disk cache of feature banks, stem features and derived curves.

One cache entry is one pickle file holding a ``dict`` payload with a ``format`` field;
an entry whose format differs from :data:`FORMAT_VERSION`, that cannot be unpickled, or
whose recorded key differs from the requested one is treated as absent (and rewritten),
never as an error. Writes are atomic (temporary file + ``os.replace``), so concurrent
workers scoring different clips, or a killed run, never leave a half-written entry.

Layout, under the cache folder (``~/.cache/timingbench`` unless ``--cache DIR``)::

    banks/<key>.pkl                      the bank's core features
    banks/<key>.stems-<backend>-<model>.pkl   stem features of one separation model
    banks/<key>.derived-<name>.pkl        values memoised by FeatureBank.derived
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import tempfile
from pathlib import Path
from typing import Any

from timingbench.errors import ParameterError

#: Bumped whenever the payload layout or a feature's definition changes.
FORMAT_VERSION = 1

_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def default_cache_dir() -> Path:
    """The default cache folder: ``$XDG_CACHE_HOME/timingbench`` or ``~/.cache/timingbench``."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "timingbench"


def bank_key(*, clip_hash: str, config_hash: str, package_version: str) -> str:
    """Cache key of a bank: audio content hash, configuration hash and package version.

    Parameters
    ----------
    clip_hash : str
        ``Clip.content_hash`` (hex).
    config_hash : str
        ``Config.content_hash`` (hex).
    package_version : str
        ``timingbench.__version__``.

    Returns
    -------
    key : str
        A file-name-safe string.
    """
    ver = hashlib.sha256(f"{package_version}|{FORMAT_VERSION}".encode()).hexdigest()[:8]
    return f"{clip_hash}-{config_hash}-{ver}"


def safe_name(name: str) -> str:
    """A file-name-safe form of ``name`` (kept when already safe, else hashed).

    Raises
    ------
    ParameterError
        If ``name`` is empty.
    """
    if not name:
        raise ParameterError("a cache entry name must be a non-empty string")
    if _SAFE.match(name):
        return name
    return "h" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]


def read_entry(path: Path, *, key: str) -> dict[str, Any] | None:
    """Read a cache entry, or ``None`` when absent, stale or unreadable.

    Parameters
    ----------
    path : Path
        The entry's file.
    key : str
        The key the entry must have been written for.

    Returns
    -------
    payload : dict or None
    """
    try:
        with open(path, "rb") as fh:
            payload = pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
            IndexError, TypeError, ValueError):
        return None
    if not isinstance(payload, dict):
        return None
    if payload.get("format") != FORMAT_VERSION or payload.get("key") != key:
        return None
    return payload


def write_entry(path: Path, *, key: str, payload: dict[str, Any]) -> None:
    """Atomically write a cache entry (``format`` and ``key`` fields are added).

    Parameters
    ----------
    path : Path
        Destination file; its folder is created.
    key : str
        The key the entry belongs to.
    payload : dict
        Picklable contents.

    Raises
    ------
    ParameterError
        If the payload cannot be pickled (names the file).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = dict(payload)
    data["format"] = FORMAT_VERSION
    data["key"] = key
    try:
        blob = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ParameterError(f"{path}: cannot store this value in the feature cache ({exc})") from None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
