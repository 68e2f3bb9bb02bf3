"""One scoring run per results folder: the ``RESULTS_DIR/.lock`` file.

A run takes an exclusive, non-blocking ``flock`` on ``.lock`` and writes its pid, host and
start time into it. A second run on the same folder finds the lock held and stops at once
with :class:`RunLockedError` naming the holder. The kernel drops the lock when its process
dies, however it dies, so a lock file left by a killed run is simply taken over (its old
content is reported as stale). On a file system without ``flock`` the pid and host in the
file decide: a live process on this host keeps the folder; anything else is stale.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from timingbench.errors import TimingbenchError

LOCK_NAME = ".lock"


class RunLockedError(TimingbenchError):
    """Another live run holds the results folder."""


def _holder(path: Path) -> dict[str, Any]:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _describe(info: dict[str, Any]) -> str:
    if not info:
        return "another run (no pid recorded yet)"
    started = info.get("started")
    when = (f", started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(started))}"
            if isinstance(started, int | float) else "")
    return f"pid {info.get('pid')!r} on host {info.get('host')!r}{when}"


class RunLock:
    """Exclusive hold on a results folder for the lifetime of one run.

    Use as a context manager around the run::

        with RunLock(out_dir):
            ...

    Attributes
    ----------
    path : Path
        The lock file, ``out_dir/.lock``.
    stale : dict or None
        What a lock file left by a dead run said (pid, host, started), when one was taken over.
    """

    def __init__(self, out_dir: str | Path) -> None:
        self.path = Path(out_dir) / LOCK_NAME
        self.stale: dict[str, Any] | None = None
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock.

        Raises
        ------
        RunLockedError
            If a live run holds the folder (naming its pid and host).
        """
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunLockedError(
                    f"{self.path.parent}: results folder is in use by {_describe(_holder(self.path))}; "
                    "wait for that run to finish or give another --out"
                ) from None
            except OSError as exc:  # no flock here (some network file systems): pid and host decide
                if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
                    os.close(fd)
                    raise
                info = _holder(self.path)
                if info.get("host") == socket.gethostname() and _alive(info.get("pid")) \
                        and info.get("pid") != os.getpid():
                    os.close(fd)
                    raise RunLockedError(
                        f"{self.path.parent}: results folder is in use by {_describe(info)}; "
                        "wait for that run to finish or give another --out"
                    ) from None
            # the holder before us may have removed the file after we opened it: lock the file
            # that is at the path now, or a third run could lock a new file beside us
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _holder(self.path)
        if previous:
            self.stale = previous
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode("utf-8"), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Remove the lock file and drop the lock (idempotent)."""
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        finally:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
