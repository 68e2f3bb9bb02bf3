"""The dev corpora that calibration reads, checked so that no validation or held-out audio chooses a threshold.

:func:`check_dev_corpus` refuses a corpus with no ``dev`` truth rows, and one whose manifest
says it was rendered with a held-out soundfont (MuseScore General, every variant);
:func:`load_dev_corpora` analyses the dev rows of each corpus once (banks and family
evidence), for ``timingbench calibrate evidence`` and the figures tools.
:func:`write_values` writes fitted constants into a configuration file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timingbench.annotation_io import AnnotationSet, load_annotations
from timingbench.calibration.evaluate import Corpus, load_corpus
from timingbench.calibration.groups import scenarios_from_manifest
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config
from timingbench.errors import ConfigError, ParameterError
from timingbench.jsonio import iter_jsonl
from timingbench.runner import ScoreOptions

#: Soundfonts that may only measure (the held-out set of the evidence model).
HELD_OUT_SOUNDFONT = re.compile(r"musescore", re.IGNORECASE)


class CalibrationRefused(ParameterError):
    """A corpus that may not choose thresholds (a validation split or held-out audio)."""


@dataclass(frozen=True)
class DevCorpus:
    """A dev corpus with its banks, scenarios and the judged events to fit on."""

    root: Path
    corpus: Corpus
    scenarios: dict[str, str]


def check_dev_corpus(root: Path) -> int:
    """Refuse a corpus with no dev rows or rendered with a held-out soundfont; the number of dev rows.

    A corpus may hold both splits (the real corpus does): only its ``dev`` rows are ever
    scored by the fit, its ``validation`` rows are left out.

    Raises
    ------
    CalibrationRefused
        Naming the file, the row and the field that rule it out.
    ParameterError
        If ``root`` holds no ``truth.jsonl``.
    """
    truth = root / "truth.jsonl"
    if not truth.is_file():
        raise ParameterError(f"{root}: no truth.jsonl; --dev takes a rendered or annotated corpus folder")
    n_dev, first_other = 0, None
    for n, row in iter_jsonl(truth):
        if not isinstance(row, dict):
            continue  # a malformed row is reported, with its line, when the annotations load
        if row.get("split") == "dev":
            n_dev += 1
        elif first_other is None:
            first_other = (n, row.get("split"))
    if n_dev == 0:
        n, split = first_other or (0, None)
        raise CalibrationRefused(
            f"{truth}:{n}: field 'split' is {split!r}: only dev rows may choose thresholds, and this corpus has none; "
            "a validation corpus only measures")
    manifest = root / "manifest.jsonl"
    if manifest.is_file():
        for n, row in iter_jsonl(manifest):
            if not isinstance(row, dict):
                raise CalibrationRefused(f"{manifest}:{n}: not a JSON object ({row}): the soundfont the corpus was "
                                         "rendered with cannot be checked")
            sf = str(row.get("soundfont") or "")
            if HELD_OUT_SOUNDFONT.search(sf):
                raise CalibrationRefused(
                    f"{manifest}:{n}: field 'soundfont' is {sf!r}: MuseScore General is held out; "
                    "it measures, it never chooses a threshold")
    return n_dev


def load_dev_corpora(roots: Sequence[Path], config: Config, *,
                     progress: Callable[[int, int, str], None] | None = None, cache_dir: str | None = None,
                     jobs: int = 1) -> list[DevCorpus]:
    """Check and analyse every dev corpus once (``--separation dsp``, the default family evidence).

    ``cache_dir`` reuses (and fills) a feature cache; ``jobs`` worker processes analyse the clips.
    """
    from timingbench.executors import LocalExecutor

    for r in roots:
        check_dev_corpus(r)
    opts = ScoreOptions(separation="dsp", family_evidence=DEFAULT_FAMILY_EVIDENCE, cache_dir=cache_dir)
    out = []
    for r in roots:
        ann = load_annotations(r / "truth.jsonl")
        dev_only = AnnotationSet(layer1=[row for row in ann.layer1 if row.split == "dev"], errors=ann.errors,
                                 source=ann.source)
        corpus = load_corpus(r / "clips", r / "prompts.jsonl", dev_only, config, opts, progress=progress,
                             executor=LocalExecutor(jobs))
        out.append(DevCorpus(r, corpus, scenarios_from_manifest(r / "clips")))
    return out


def write_values(path: Path, config: Config, values: Mapping[str, Any], whys: Mapping[str, str]) -> None:
    """Rewrite the lines of the constants ``values`` names in the configuration file, ``calibrated`` with their why.

    Only those lines change; a constant keeps its ``loosening``.

    Raises
    ------
    ConfigError
        If a constant's section or line cannot be found in ``path``.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for key, value in values.items():
        section, name = key.split(".")
        try:
            start = next(i for i, ln in enumerate(lines) if ln.rstrip() == f"  {section}:")
        except StopIteration:
            raise ConfigError(f"{path}: no section '{section}' to write {key} into") from None
        idx = next((i for i in range(start + 1, len(lines))
                    if lines[i].startswith(f"    {name}:")), None)
        if idx is None:
            raise ConfigError(f"{path}: constant '{key}' not found")
        loosening = config.constants[key].loosening
        why = whys[key].replace('"', "'")
        loose = f", loosening: {loosening}" if loosening else ""
        lines[idx] = f"    {name}: {{value: {json.dumps(value)}, provenance: calibrated{loose}, why: \"{why}\"}}"
    path.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""), encoding="utf-8")
