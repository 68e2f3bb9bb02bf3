"""``--tagger-weights PATH``: the AudioSet tagger's weights, on the commands that take ``--family-evidence``."""

from __future__ import annotations

import argparse
from pathlib import Path

from timingbench.config import Config
from timingbench.errors import ModelUnavailableError


def add_tagger_weights_option(p: argparse.ArgumentParser) -> None:
    """Add ``--tagger-weights PATH`` (config ``tagger.weights``)."""
    p.add_argument("--tagger-weights", default=None, metavar="PATH",
                   help="AudioSet tagger weights: a local EfficientAT state dict of another width (e.g. the "
                        "upstream mn10_as_mAP_471.pt); overrides tagger.weights and skips its sha256 check "
                        "(default: the shipped mn04, docs/tagger-model.md)")


def with_tagger_weights_from(args: argparse.Namespace, config: Config) -> Config:
    """``config`` with ``--tagger-weights`` applied (unchanged without it).

    Raises
    ------
    ModelUnavailableError
        If the file given does not exist (see :func:`check_tagger_weights`).
    """
    from timingbench.models.tagger import with_tagger_weights

    check_tagger_weights(args)
    return with_tagger_weights(config, args.tagger_weights)


def check_tagger_weights(args: argparse.Namespace) -> None:
    """Refuse a ``--tagger-weights`` file that does not exist, at once (not when the tagger first runs).

    Raises
    ------
    ModelUnavailableError
        Naming the file.
    """
    if args.tagger_weights is not None and not Path(args.tagger_weights).expanduser().is_file():
        raise ModelUnavailableError(f"{args.tagger_weights}: --tagger-weights file not found (no expected sha256: "
                                    "a file given on the command line is not checked against one)")
