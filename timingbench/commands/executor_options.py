"""Command-line options choosing where clips are analysed (``--executor local|ray``).

Shared by ``score``, ``confusion``, ``sweep``, ``gain-check`` and ``floors``.
"""

from __future__ import annotations

import argparse
import os
import sys

from timingbench.choices import EXECUTORS
from timingbench.config import Config, load_config
from timingbench.errors import ParameterError
from timingbench.executors import Executor, RayOptions, make_executor


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (worker counts)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {n}")
    return n


def available_cores() -> int:
    """CPU cores this process may run on (its affinity set where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_jobs(config: Config) -> tuple[int, int, int]:
    """The ``--jobs`` a command takes when none is given.

    Parameters
    ----------
    config : Config
        Reads ``runtime.default_jobs_max``.

    Returns
    -------
    jobs : int
        The cores available capped at the maximum, >= 1.
    cores : int
        The cores available (:func:`available_cores`).
    cap : int
        ``runtime.default_jobs_max``.
    """
    cores, cap = available_cores(), config.params.runtime.default_jobs_max
    return max(1, min(cores, cap)), cores, cap


def add_jobs_option(p: argparse.ArgumentParser, *, what: str = "worker processes") -> None:
    """Add ``--jobs N``, the one ``--jobs`` of every command (default: :func:`resolve_jobs`).

    The help states the number :func:`resolve_jobs` resolves here with the packaged
    configuration's ``runtime.default_jobs_max``.
    """
    jobs, cores, cap = default_jobs(load_config())
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help=f"{what}, >= 1 (default: {jobs} = the cores available ({cores}), at most "
                        f"runtime.default_jobs_max ({cap}); results identical for any N)")


def resolve_jobs(args: argparse.Namespace, config: Config) -> int:
    """The ``--jobs`` of a command: as given, else the cores available capped at
    ``runtime.default_jobs_max``, printed on stderr. Sets ``args.jobs``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments with ``jobs`` (None when not given).
    config : Config
        Reads ``runtime.default_jobs_max``.

    Returns
    -------
    jobs : int
    """
    if getattr(args, "jobs", None) is not None:
        return int(args.jobs)
    args.jobs, cores, cap = default_jobs(config)
    print(f"jobs: {args.jobs} ({cores} cores available, default capped at {cap} by runtime.default_jobs_max; "
          "--jobs N to choose)", file=sys.stderr)
    return int(args.jobs)


def _positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {x:g}")
    return x


def _share(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not x >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {x:g}")
    return x


def add_executor_options(p: argparse.ArgumentParser, *, with_jobs: bool = False) -> None:
    """Add ``--executor``, the ``--ray-*`` options and, with ``with_jobs``, ``--jobs``."""

    if with_jobs:
        add_jobs_option(p, what="local worker processes")
    p.add_argument("--executor", choices=list(EXECUTORS), default="local",
                   help="where clips are analysed: local process pool (default) or Ray tasks "
                        "(pip install 'timingbench[ray]'); results are identical")
    p.add_argument("--ray-address", default=None,
                   help="Ray cluster to join (ray://HOST:10001, HOST:6379 or auto); "
                        "default: start a local Ray instance")
    p.add_argument("--ray-cpus-per-clip", type=_positive_float, default=1.0,
                   help="logical CPUs each clip task reserves (default 1)")
    p.add_argument("--ray-gpus-per-clip", type=_share, default=0.0,
                   help="GPUs each clip task reserves, e.g. 0.25 when demucs runs on GPU (default 0)")
    p.add_argument("--ray-max-in-flight", type=positive_int, default=None,
                   help="most clip tasks submitted at once (default: twice what the cluster runs at once)")
    p.add_argument("--ray-retries", type=int, choices=range(0, 10), default=1, metavar="N",
                   help="re-runs, 0 to 9, of a clip whose worker died or raised before it is an error row "
                        "(default 1)")


def check_executor_args(args: argparse.Namespace) -> None:
    """Refuse ``--ray-*`` options that need ``--executor ray`` without it (before anything runs).

    Raises
    ------
    ParameterError
        ``--ray-address`` or ``--ray-gpus-per-clip`` without ``--executor ray``.
    """
    if args.executor != "ray" and (args.ray_address is not None or args.ray_gpus_per_clip > 0):
        raise ParameterError("--ray-address and --ray-gpus-per-clip need --executor ray")


def executor_from_args(args: argparse.Namespace) -> Executor:
    """The executor the parsed options name (a Ray one joins or starts the cluster now).

    ``args.jobs`` must be resolved first (:func:`resolve_jobs`) where the command has ``--jobs``.
    """
    check_executor_args(args)
    jobs = max(1, int(getattr(args, "jobs", 1) or 1))
    ray_opts = RayOptions(address=args.ray_address, cpus_per_task=args.ray_cpus_per_clip,
                          gpus_per_task=args.ray_gpus_per_clip, max_in_flight=args.ray_max_in_flight,
                          retries=args.ray_retries)
    return make_executor(args.executor, jobs=jobs, ray_options=ray_opts)
