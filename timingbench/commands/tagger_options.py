"""``--tagger-weights PATH``: the AudioSet tagger's weights, on the commands that take ``--family-evidence``."""

from __future__ import annotations

import argparse

from timingbench.config import Config


def add_tagger_weights_option(p: argparse.ArgumentParser) -> None:
    """Add ``--tagger-weights PATH`` (config ``tagger.weights``)."""
    p.add_argument("--tagger-weights", default=None, metavar="PATH",
                   help="AudioSet tagger weights: a local EfficientAT state dict of another width (e.g. the "
                        "upstream mn10_as_mAP_471.pt); overrides tagger.weights and skips its sha256 check "
                        "(default: the shipped mn04, docs/tagger-model.md)")


def with_tagger_weights_from(args: argparse.Namespace, config: Config) -> Config:
    """``config`` with ``--tagger-weights`` applied (unchanged without it)."""
    from timingbench.evidence_net.tagger import with_tagger_weights

    return with_tagger_weights(config, args.tagger_weights)
