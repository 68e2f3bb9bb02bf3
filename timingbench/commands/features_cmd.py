"""``timingbench features CLIP``: compute (or load) a clip's feature bank and draw it.

The plot puts what the detectors see on one time axis: mix RMS with the loudness
statistics, full/harmonic/percussive onset strength, band levels, novelty, and the
separated stems' envelopes relative to their own loud levels.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from timingbench.audio import load_clip
from timingbench.choices import SEPARATIONS
from timingbench.config import load_config
from timingbench.convert import frame_period_s
from timingbench.errors import ModelUnavailableError
from timingbench.features import FeatureBank, Stem, get_bank


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``features`` subcommand."""
    p = sub.add_parser("features", help="compute a clip's feature bank and optionally plot it")
    p.add_argument("clip", help="audio file")
    p.add_argument("--plot", default=None, help="write a PNG of the bank's curves to this path")
    p.add_argument("--separation", choices=SEPARATIONS, default="auto",
                   help="stem backend (default: auto = demucs if weights are present, else dsp)")
    p.add_argument("--demucs-repo", default=None, help="local demucs model folder")
    p.add_argument("--cache", default=None, help="cache folder (default: ~/.cache/timingbench)")
    p.add_argument("--config", default=None, help="configuration file (default: the packaged v1)")
    p.set_defaults(func=run_features)


def _stems(bank: FeatureBank) -> list[Stem]:
    out = []
    for name in bank.stems_available():
        try:
            out.append(bank.stem(name))
        except ModelUnavailableError:
            continue
    return out


def run_features(args: argparse.Namespace) -> int:
    """Compute the bank, print a summary, draw the plot when asked."""
    cfg = load_config(args.config)
    clip = load_clip(args.clip, cfg)
    bank = get_bank(clip, cfg, separation=args.separation, demucs_repo=args.demucs_repo,
                    cache_dir=args.cache)
    lo = bank.loudness
    print(f"{clip.path.name}: {bank.duration_s:.2f} s analysed of {bank.clip_duration_s:.2f} s, "
          f"{bank.n_frames} frames of {1000 * frame_period_s(sr=bank.sr, hop=bank.hop):.1f} ms")
    print(f"loudness: loud {lo.loud_level_db:.1f} dBFS, median {lo.median_db:.1f}, "
          f"floor {lo.floor_db:.1f}, peak {lo.peak_db:.1f}")
    print(f"separation: {bank.separation_backend}"
          + (f" ({bank.separation_note})" if bank.separation_note else ""))
    stems = _stems(bank) if args.plot else []
    if args.plot:
        plot_bank(bank, stems, Path(args.plot), title=clip.path.name)
        print(f"plot: {args.plot}")
    return 0


def plot_bank(bank: FeatureBank, stems: list[Stem], out: Path, *, title: str) -> None:
    """Draw the bank's curves on one shared time axis and save a PNG.

    Parameters
    ----------
    bank : FeatureBank
        The bank to draw.
    stems : list of Stem
        Stems to draw (may be empty).
    out : Path
        PNG path; its folder is created.
    title : str
        Figure title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = bank.times
    lo = bank.loudness
    rows = 5 + (1 if stems else 0)
    fig, axes = plt.subplots(rows, 1, sharex=True, figsize=(14, 2.1 * rows), constrained_layout=True)
    ax = axes[0]
    ax.imshow(bank.logmel, origin="lower", aspect="auto", cmap="magma",
              extent=(float(t[0]), float(t[-1]), 0, bank.logmel.shape[0]))
    ax.set_ylabel("mel band")
    ax.set_title(f"{title}  (separation: {bank.separation_backend})")

    ax = axes[1]
    ax.plot(t, bank.rms_db, lw=0.8, color="k", label="mix RMS")
    ax.plot(t, bank.harmonic_rms_db, lw=0.6, label="harmonic")
    ax.plot(t, bank.percussive_rms_db, lw=0.6, label="percussive")
    for y, name, style in ((lo.loud_level_db, "loud", "--"), (lo.floor_db, "floor", ":")):
        ax.axhline(y, ls=style, color="gray", lw=0.8)
        ax.text(float(t[-1]), y, f" {name}", va="center", fontsize=7)
    ax.set_ylim(lo.loud_level_db - 70, lo.peak_db + 5)
    ax.set_ylabel("dBFS")
    ax.legend(loc="lower right", fontsize=7, ncol=3)

    ax = axes[2]
    for name, curve in (("full", bank.onset_full), ("harmonic", bank.onset_harmonic),
                        ("percussive", bank.onset_percussive)):
        ax.plot(t, curve, lw=0.6, label=name)
    ax.set_ylabel("onset (dB/frame)")
    ax.legend(loc="upper right", fontsize=7, ncol=3)

    ax = axes[3]
    for name, curve in bank.bands_db.items():
        ax.plot(t, curve, lw=0.7, label=name)
    ax.set_ylim(lo.loud_level_db - 70, lo.peak_db + 5)
    ax.set_ylabel("band dBFS")
    ax.legend(loc="lower right", fontsize=7, ncol=4)

    ax = axes[4]
    ax.plot(t, bank.novelty, lw=1.0, color="k", label="novelty")
    ax.plot(t, bank.novelty_timbre, lw=0.6, label="timbre (MFCC)")
    ax.plot(t, bank.novelty_harmony, lw=0.6, label="harmony (chroma)")
    ax.set_ylabel("novelty")
    ax.legend(loc="upper right", fontsize=7, ncol=3)

    if stems:
        ax = axes[5]
        for s in stems:
            ax.plot(t, np.asarray(s.envelope_db) - s.loud_level_db, lw=0.7, label=s.name)
        ax.axhline(0.0, color="gray", lw=0.6, ls="--")
        ax.set_ylim(-60, 10)
        ax.set_ylabel(f"stem dB re own loud\n({stems[0].backend})")
        ax.legend(loc="lower right", fontsize=7, ncol=len(stems))
    axes[-1].set_xlabel("time (s)")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
