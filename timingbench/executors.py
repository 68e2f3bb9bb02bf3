"""Where per-clip work runs: a local process pool or tasks on a Ray cluster.

Every command that analyses clips (``score``, ``confusion``, ``sweep``, ``gain-check``,
``floors``) hands its per-clip work to an executor through one call,
:meth:`Executor.imap`, which yields ``(index, result)`` pairs as items finish, in any
order. Callers place results by index, so what they write does not depend on the
executor, the number of workers or the order of completion.

- :class:`LocalExecutor` (``--executor local``, the default) runs the items in this
  process (``jobs=1``) or in a :class:`concurrent.futures.ProcessPoolExecutor`.
- :class:`RayExecutor` (``--executor ray``) runs each item as a Ray task with the CPU
  and GPU share given by the options, keeps at most ``max_in_flight`` tasks submitted
  (backpressure: the driver never holds more pending results than that), retries a task
  whose worker died or raised, and reports an item that failed on every attempt as a
  :class:`TaskFailure` instead of stopping the run.

Ray is an optional dependency (``pip install timingbench[ray]``); it is imported only when
a :class:`RayExecutor` is created.

Fault injection
---------------
Setting ``TIMINGBENCH_FAULT_DIR=DIR`` on the cluster makes a Ray worker that is about to
run the item labelled ``L`` read ``DIR/L.exit``: when that file holds a count ``n > 0``,
the worker writes ``n - 1`` back and ends its own process with :func:`os._exit`, exactly
as a node lost mid-task would. It exists to test and drill failure containment; without
the variable nothing is read.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from timingbench.choices import EXECUTORS
from timingbench.errors import ParameterError

FAULT_ENV = "TIMINGBENCH_FAULT_DIR"


@dataclass(frozen=True)
class TaskFailure:
    """An item that failed on every attempt (its worker died or it raised).

    Attributes
    ----------
    label : str
        The item's label (a clip name).
    attempts : int
        How many times it was run.
    error : str
        One line: the last failure's type and message.
    """

    label: str
    attempts: int
    error: str


class Executor(Protocol):
    """What a command needs from an executor."""

    name: str

    def imap(self, fn: Callable[[Any], Any], items: Sequence[Any], *,
             label: Callable[[Any], str]) -> Iterator[tuple[int, Any]]:
        """Run ``fn(item)`` for every item; yield ``(index, result)`` as each finishes."""
        ...

    def describe(self) -> str:
        """One short line for the progress bar (workers, work in flight, failures)."""
        ...


#: Imported once by the fork server, so its forked workers start with them loaded.
_PRELOAD = ["timingbench.runner", "timingbench.calibration.evaluate", "timingbench.calibration.gain"]


def _pool_context() -> multiprocessing.context.BaseContext:
    """Start method of local workers: a fork server where the platform has one, else spawn.

    Workers are never forked from this process itself: it may hold threads (onnxruntime,
    OpenMP, torch, a Ray driver's) whose locks a forked child inherits held, and hangs on.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def _call(fn: Callable[[Any], Any], item: Any, label: str) -> Any:
    """Run one item in a worker, honouring the fault-injection hook (module docstring)."""
    fault_dir = os.environ.get(FAULT_ENV)
    if fault_dir:
        marker = Path(fault_dir) / f"{label}.exit"
        try:
            left = int(marker.read_text(encoding="utf-8").strip() or "0")
        except (OSError, ValueError):
            left = 0
        if left > 0:
            marker.write_text(str(left - 1), encoding="utf-8")
            os._exit(17)
    return fn(item)


class LocalExecutor:
    """Items in this process (``jobs=1``) or in a pool of ``jobs`` worker processes.

    Parameters
    ----------
    jobs : int
        Worker processes (>= 1).

    Notes
    -----
    An exception raised by an item propagates (the run stops), as it always has locally;
    only :class:`RayExecutor` retries and contains failures. Workers come from a fork
    server (spawned where there is none), never forked from this process.
    """

    name = "local"

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise ParameterError(f"--jobs must be >= 1, got {jobs}")
        self.jobs = jobs

    def imap(self, fn: Callable[[Any], Any], items: Sequence[Any], *,
             label: Callable[[Any], str]) -> Iterator[tuple[int, Any]]:
        """Run ``fn`` over ``items``; see :class:`Executor`."""
        if self.jobs == 1 or len(items) <= 1:
            for i, item in enumerate(items):
                yield i, fn(item)
            return
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=_pool_context())
        try:
            futures: dict[Future[Any], int] = {pool.submit(fn, item): i for i, item in enumerate(items)}
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in sorted(finished, key=futures.__getitem__):
                    yield futures[fut], fut.result()
        finally:
            pool.shutdown(cancel_futures=True)

    def describe(self) -> str:
        """Worker count."""
        return f"local: {self.jobs} worker{'s' if self.jobs != 1 else ''}"


@dataclass(frozen=True)
class RayOptions:
    """How work is placed on a Ray cluster.

    Attributes
    ----------
    address : str or None
        ``ray://HOST:10001``, ``HOST:6379`` or ``auto`` to join a running cluster; None
        starts a new local Ray instance (or reuses one already started in this process).
    cpus_per_task : float
        Logical CPUs each clip task reserves.
    gpus_per_task : float
        GPUs each clip task reserves (e.g. 0.25 when demucs runs on a GPU).
    max_in_flight : int or None
        Most tasks submitted and unfinished at once; None: twice the tasks the cluster
        can run at once (at least 2).
    retries : int
        Further attempts after a task's first failure (1: a clip that fails twice is
        reported as failed).
    num_cpus : int or None
        CPUs of a local instance started here (None: all of this machine's).
    """

    address: str | None = None
    cpus_per_task: float = 1.0
    gpus_per_task: float = 0.0
    max_in_flight: int | None = None
    retries: int = 1
    num_cpus: int | None = None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ParameterError("--executor ray needs Ray: pip install 'timingbench[ray]'") from None
    return ray


class RayExecutor:
    """Items as Ray tasks, with backpressure, retries and contained failures.

    Parameters
    ----------
    options : RayOptions

    Raises
    ------
    ParameterError
        If Ray is not installed, the cluster cannot be reached, or a resource share is
        negative.
    """

    name = "ray"

    def __init__(self, options: RayOptions | None = None) -> None:
        self.options = opts = options or RayOptions()
        if opts.cpus_per_task <= 0 or opts.gpus_per_task < 0 or opts.retries < 0:
            raise ParameterError(
                f"Ray task resources must be cpus > 0, gpus >= 0, retries >= 0; got "
                f"cpus={opts.cpus_per_task}, gpus={opts.gpus_per_task}, retries={opts.retries}")
        if opts.max_in_flight is not None and opts.max_in_flight < 1:
            raise ParameterError(f"--ray-max-in-flight must be >= 1, got {opts.max_in_flight}")
        self._ray = ray = _import_ray()
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False}
            if opts.address is None:  # a new local instance, never a cluster found by chance
                kwargs.update(address="local", num_cpus=opts.num_cpus, include_dashboard=False)
            else:
                kwargs["address"] = opts.address
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ParameterError(f"--ray-address {opts.address}: cannot join the Ray cluster ({exc})") from None
        res = ray.cluster_resources()
        self.cluster_cpus = float(res.get("CPU", 0.0))
        self.cluster_gpus = float(res.get("GPU", 0.0))
        self.nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
        if opts.gpus_per_task > 0 and self.cluster_gpus == 0:
            raise ParameterError(f"--ray-gpus-per-clip {opts.gpus_per_task}: the Ray cluster has no GPU")
        slots = int(self.cluster_cpus // opts.cpus_per_task) if self.cluster_cpus else 1
        if opts.gpus_per_task > 0:
            slots = min(slots, int(self.cluster_gpus // opts.gpus_per_task))
        self.max_in_flight = opts.max_in_flight or max(2, 2 * slots)
        self.in_flight = 0
        self.failed = 0

    def imap(self, fn: Callable[[Any], Any], items: Sequence[Any], *,
             label: Callable[[Any], str]) -> Iterator[tuple[int, Any]]:
        """Run ``fn`` over ``items`` as Ray tasks; see :class:`Executor`.

        A task whose worker process dies (``WorkerCrashedError``, node loss) or that
        raises is re-run up to ``retries`` times; an item that fails every attempt is
        yielded as a :class:`TaskFailure`.
        """
        ray = self._ray
        opts = self.options
        task = ray.remote(_call).options(
            num_cpus=opts.cpus_per_task, num_gpus=opts.gpus_per_task,
            max_retries=opts.retries, retry_exceptions=True,
        )
        fn_ref = ray.put(fn)
        pending: dict[Any, int] = {}
        nxt = 0
        try:
            while nxt < len(items) or pending:
                while nxt < len(items) and len(pending) < self.max_in_flight:
                    pending[task.remote(fn_ref, items[nxt], label(items[nxt]))] = nxt
                    nxt += 1
                self.in_flight = len(pending)
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        self.failed += 1
                        result = TaskFailure(label(items[i]), opts.retries + 1, _one_line(exc))
                    self.in_flight = len(pending)
                    yield i, result
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            self.in_flight = 0

    def describe(self) -> str:
        """Cluster size, tasks in flight and failed items."""
        gpus = f", {self.cluster_gpus:g} GPUs" if self.cluster_gpus else ""
        return (f"ray: {self.nodes} node{'s' if self.nodes != 1 else ''}, {self.cluster_cpus:g} CPUs{gpus}; "
                f"{self.in_flight} in flight, {self.failed} failed")


def _one_line(exc: BaseException) -> str:
    """The failure's type and the first line of its message."""
    cause = getattr(exc, "cause", None)
    shown = cause if isinstance(cause, BaseException) else exc
    text = str(shown).strip().splitlines()
    return f"{type(shown).__name__}: {text[0] if text else ''}".rstrip(": ")


def make_executor(name: str, *, jobs: int = 1, ray_options: RayOptions | None = None) -> Executor:
    """The executor named by ``--executor``.

    Parameters
    ----------
    name : str
        ``local`` | ``ray``.
    jobs : int
        Local worker processes (``local``).
    ray_options : RayOptions, optional
        Cluster and task placement (``ray``).

    Raises
    ------
    ParameterError
        If ``name`` is unknown, or as :class:`RayExecutor`.
    """
    if name == "local":
        return LocalExecutor(jobs)
    if name == "ray":
        return RayExecutor(ray_options)
    raise ParameterError(f"--executor must be one of {list(EXECUTORS)}, got {name!r}")
