"""The singing detector's reading of the real recordings in ``shared/realdata``: the model card's table.

For each recording: its first 35 s (the analysis window) at 44.1 kHz mono, brought to the
bank's loud level (``audio.input_loud_level_dbfs``) as scoring does, read on the mix; printed:
the mean P(speech), P(singing), P(music) and the share of 10-ms frames whose singing
probability exceeds 0.5.

Usage::

    .venv/bin/python tools/singing_figures.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

#: (group, path under realdata) of the recordings read.
RECORDINGS = (
    ("singing", "vocadito/Audio/vocadito_1.wav"),
    ("singing", "sms-tools/singing-female.wav"),
    ("singing", "sms-tools/vignesh.wav"),
    ("singing", "sms-tools/soprano-E4.wav"),
    ("singing", "librosa-data/Karissa_Hobbs_-_Lets_Go_Fishin.hq.ogg"),
    ("speech", "sms-tools/speech-female.wav"),
    ("speech", "sms-tools/speech-male.wav"),
    ("speech", "librosa-data/198-209-0000.hq.ogg"),
    ("speech", "librosa-data/3436-172162-0000.hq.ogg"),
    ("speech", "librosa-data/5703-47212-0000.hq.ogg"),
    ("instrumental", "sms-tools/sax-phrase.wav"),
    ("instrumental", "sms-tools/cello-phrase.wav"),
    ("ensemble, voice not labelled", "sms-tools/carnatic.wav"),
    ("instrumental", "librosa-data/sorohanro_-_solo-trumpet-06.hq.ogg"),
    ("instrumental", "librosa-data/Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg"),
    ("instrumental", "librosa-data/admiralbob77_-_Choice_-_Drum-bass.hq.ogg"),
    ("instrumental", "librosa-data/Kevin_MacLeod_-_Vibe_Ace.hq.ogg"),
    ("other", "librosa-data/glacier-bay-humpback.hq.ogg"),
    ("other", "librosa-data/pibble.hq.ogg"),
)


def main() -> int:
    """Print the table; 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parent.parent.parent / "shared"))
    args = ap.parse_args()
    from timingbench.audio import load_clip
    from timingbench.config import load_config
    from timingbench.features import compute_bank
    from timingbench.identity.singing import bank_singing

    cfg = load_config()
    print("| group | recording | s | P(speech) | P(singing) | P(music) | frames singing > 0.5 |")
    print("|---|---|---|---|---|---|---|")
    for group, rel in RECORDINGS:
        path = Path(args.shared) / "realdata" / rel
        clip = load_clip(path, cfg)
        entry = bank_singing(compute_bank(clip, cfg, separation="none"), cfg)
        p = np.asarray(entry["probs"], dtype=np.float64)
        m = p.mean(axis=0)
        print(f"| {group} | {Path(rel).name} | {clip.window_s:.1f} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} | "
              f"{np.mean(p[:, 1] > 0.5):.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
