"""``timingbench tempo-check``: the tempo estimator's own error on exact-tempo references.

Renders references whose tempo is exact by construction (click tracks and drum patterns
over the configured 50-174 BPM grid, plus half-time and double-time renderings), runs
:func:`timingbench.detectors.tempo.estimate_tempo` on each and reports, per reference,
the error of the paper's estimator (``estimate_bpm``) and of the beat-line estimator
reported beside it (``precise_bpm``), and their maxima against their bounds
(``tempo.reference_max_error_pct``, the paper's figure, and
``tempo.reference_max_precise_error_pct``).

References come from the reference renderer (:mod:`timingbench.render`) when it is
installed (``--source render``; the default ``auto`` prefers it) or from numpy synthesis
with sample-accurate beat positions (``--source synth``). Either way the table says which.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.audio import load_clip
from timingbench.config import Config, load_config
from timingbench.detectors.tempo import estimate_tempo, score_tempo
from timingbench.errors import ParameterError
from timingbench.jsonio import write_json

#: Reference kinds: (renderer recipe, factor of the rendered tempo to the target).
KINDS: dict[str, tuple[str, float]] = {
    "click": ("tempo_click", 1.0),
    "drums": ("tempo_drums", 1.0),
    "half_time": ("tempo_half_time", 0.5),
    "double_time": ("tempo_double_time", 2.0),
}
#: Kinds whose rendered tempo equals the target: the estimator-error population.
EXACT_KINDS = ("click", "drums")

_SR = 44100
#: Hi-hat level relative to kick/snare in the synthetic drum pattern (about -22 dB).
HAT_GAIN = 0.08


def _plain(doc: str) -> str:
    """A docstring without reStructuredText markup, for ``--help``."""
    doc = re.sub(r":(?:func|mod|class|data):`~?([^`]+)`", r"\1", doc)
    return doc.replace("``", "")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tempo-check`` subcommand."""
    p = sub.add_parser(
        "tempo-check",
        help="measure the tempo estimator's error on exact-tempo references",
        description=_plain(__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", default="tempo-check-out", help="output folder (default: tempo-check-out)")
    p.add_argument("--config", default=None, help="configuration YAML (default: packaged v1)")
    p.add_argument(
        "--source", choices=("auto", "render", "synth"), default="auto",
        help="reference audio: the FluidSynth renderer, numpy synthesis, or auto (renderer if present)",
    )
    p.add_argument(
        "--tempi", default=None,
        help="comma-separated target BPMs for click/drums (default: tempo.reference_tempi_bpm)",
    )
    p.add_argument(
        "--kinds", default=",".join(KINDS),
        help=f"comma-separated reference kinds among {', '.join(KINDS)} (default: all)",
    )
    p.add_argument("--duration-s", type=float, default=30.0, help="reference length in seconds (default 30)")
    p.add_argument("--seed", type=int, default=0, help="renderer seed (default 0)")
    p.add_argument(
        "--soundfont", default=None,
        help="General MIDI .sf2/.sf3 for --source render (default: render.soundfont_path)",
    )
    p.set_defaults(func=run_tempo_check)


# --------------------------------------------------------------------------- synthesis


def _place(
    out: npt.NDArray[np.float64], times_s: npt.NDArray[np.float64], grain: npt.NDArray[np.float64]
) -> None:
    for t in times_s:
        i = int(round(t * _SR))
        if 0 <= i < out.size:
            seg = out[i : i + grain.size]
            seg += grain[: seg.size]


def click_track(
    *, bpm: float, duration_s: float, offset_s: float = 0.1, sr: int = _SR
) -> npt.NDArray[np.float32]:
    """A metronome click track whose beats fall on the nearest sample to ``offset + k*60/bpm``.

    Parameters
    ----------
    bpm : float
        Tempo in beats per minute (> 0).
    duration_s : float
        Length in seconds (> 0).
    offset_s : float
        Time of the first click in seconds (>= 0).
    sr : int
        Sample rate in Hz; only 44100 is supported.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5; every fourth click (the downbeat) is pitched higher.

    Raises
    ------
    ParameterError
        If ``bpm``/``duration_s`` are not positive, ``offset_s`` is negative or ``sr``
        is not 44100.
    """
    beats = _beat_grid(bpm=bpm, duration_s=duration_s, offset_s=offset_s, sr=sr)
    return click_track_at(beats, duration_s=duration_s, sr=sr)


def click_track_at(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int = _SR
) -> npt.NDArray[np.float32]:
    """A click track with one click on the nearest sample to each given beat time.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing (a drifting or humanised grid); every fourth
        click from the first (the downbeat) is pitched higher.
    duration_s : float
        Length in seconds (> 0).
    sr : int
        Sample rate in Hz; only 44100 is supported.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5.

    Raises
    ------
    ParameterError
        If the beats are not finite and increasing, ``duration_s`` is not positive or
        ``sr`` is not 44100.
    """
    beats = _checked_beats(beats_s, duration_s=duration_s, sr=sr)
    n = int(round(duration_s * sr))
    k = np.arange(int(0.015 * sr)) / sr
    env = np.exp(-k / 0.002)
    hi = env * np.sin(2 * np.pi * 1500.0 * k)
    lo = env * np.sin(2 * np.pi * 1000.0 * k)
    out = np.zeros(n, dtype=np.float64)
    _place(out, beats[::4], hi)
    _place(out, np.delete(beats, np.s_[::4]), lo)
    return (0.5 * out / max(1e-12, float(np.max(np.abs(out))))).astype(np.float32)


def drum_pattern(
    *, bpm: float, duration_s: float, offset_s: float = 0.1, sr: int = _SR, seed: int = 0
) -> npt.NDArray[np.float32]:
    """A kick/snare/hi-hat backbeat with sample-accurate beats (numpy only).

    Kick on beats 1 and 3, snare on 2 and 4, closed hi-hat on every beat at
    :data:`HAT_GAIN` relative level. Every hit falls on a beat, so the beat is the only
    pulse in the signal and the tempo is exact by construction at one metrical level
    (off-beat hats would make it an equally valid pattern at twice the tempo; the
    half/double-time kinds test that ambiguity separately).

    Parameters
    ----------
    bpm : float
        Tempo in beats per minute (> 0).
    duration_s : float
        Length in seconds (> 0).
    offset_s : float
        Time of the first beat in seconds (>= 0).
    sr : int
        Sample rate in Hz; only 44100 is supported.
    seed : int
        Seed of the noise in snare and hi-hat.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5.

    Raises
    ------
    ParameterError
        As :func:`click_track`.
    """
    beats = _beat_grid(bpm=bpm, duration_s=duration_s, offset_s=offset_s, sr=sr)
    return drum_pattern_at(beats, duration_s=duration_s, sr=sr, seed=seed)


def drum_pattern_at(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int = _SR, seed: int = 0
) -> npt.NDArray[np.float32]:
    """The :func:`drum_pattern` backbeat with its hits on the given beat times.

    Parameters
    ----------
    beats_s : array_like of float, shape (b,)
        Beat times in seconds, increasing (a drifting or humanised grid).
    duration_s : float
        Length in seconds (> 0).
    sr : int
        Sample rate in Hz; only 44100 is supported.
    seed : int
        Seed of the noise in snare and hi-hat.

    Returns
    -------
    samples : np.ndarray of float32, shape (round(duration_s * sr),)
        Mono signal, peak 0.5.

    Raises
    ------
    ParameterError
        As :func:`click_track_at`.
    """
    beats = _checked_beats(beats_s, duration_s=duration_s, sr=sr)
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * sr))
    k = np.arange(int(0.25 * sr)) / sr
    kick = np.exp(-k / 0.08) * np.sin(2 * np.pi * (50.0 * k + 60.0 * 0.03 * (1 - np.exp(-k / 0.03))))
    snare = np.exp(-k / 0.05) * (0.6 * rng.standard_normal(k.size) + 0.4 * np.sin(2 * np.pi * 190.0 * k))
    kh = k[: int(0.05 * sr)]
    hat = HAT_GAIN * np.exp(-kh / 0.01) * np.diff(rng.standard_normal(kh.size + 1))
    out = np.zeros(n, dtype=np.float64)
    _place(out, beats[0::2], kick)
    _place(out, beats[1::2], 0.8 * snare)
    _place(out, beats, hat)
    return (0.5 * out / max(1e-12, float(np.max(np.abs(out))))).astype(np.float32)


def _checked_beats(
    beats_s: npt.ArrayLike, *, duration_s: float, sr: int
) -> npt.NDArray[np.float64]:
    b = np.asarray(beats_s, dtype=np.float64)
    if not (np.isfinite(duration_s) and duration_s > 0):
        raise ParameterError(f"duration_s must be a positive number of seconds, got {duration_s!r}")
    if sr != _SR:
        raise ParameterError(f"only sr={_SR} Hz is supported, got {sr!r}")
    if b.ndim != 1 or not np.all(np.isfinite(b)) or np.any(np.diff(b) <= 0):
        raise ParameterError("beats_s must be a 1-D array of finite, increasing seconds")
    return b


def _beat_grid(*, bpm: float, duration_s: float, offset_s: float, sr: int) -> npt.NDArray[np.float64]:
    if not (np.isfinite(bpm) and bpm > 0):
        raise ParameterError(f"bpm must be a positive number of beats per minute, got {bpm!r}")
    if not (np.isfinite(duration_s) and duration_s > 0):
        raise ParameterError(f"duration_s must be a positive number of seconds, got {duration_s!r}")
    if not (np.isfinite(offset_s) and offset_s >= 0):
        raise ParameterError(f"offset_s must be >= 0 seconds, got {offset_s!r}")
    if sr != _SR:
        raise ParameterError(f"only sr={_SR} Hz is supported, got {sr!r}")
    period = 60.0 / bpm
    count = int(np.floor((duration_s - offset_s) / period)) + 1
    beats = offset_s + period * np.arange(max(count, 0), dtype=np.float64)
    return np.asarray(beats[beats < duration_s], dtype=np.float64)


# --------------------------------------------------------------------------- references


@dataclass(frozen=True)
class Reference:
    """One exact-tempo reference clip.

    ``rendered_bpm`` is the tempo the audio is played at; ``expected_factors`` are the
    octave factors (of ``target_bpm``) an estimate may legitimately match: ``(1.0,)`` for
    straight references, ``(0.5,)`` / ``(2.0,)`` for synthetic half/double-tempo
    renderings, and ``1.0`` plus the renderer's ``ambiguous_factors`` for its half/double
    *feel* renderings (which are played at the target tempo).
    """

    kind: str
    target_bpm: float
    rendered_bpm: float
    samples: npt.NDArray[np.float32]
    audio_path: str | None
    source: str
    expected_factors: tuple[float, ...] = (1.0,)


def _render_recipe_fn() -> Any:
    try:
        from timingbench.render import render_recipe  # type: ignore[attr-defined]
    except ImportError:
        try:
            from timingbench.render.pipeline import render_recipe  # type: ignore[no-redef]
        except ImportError:
            return None
    return render_recipe


def _renderer_available() -> bool:
    return _render_recipe_fn() is not None


def make_reference(
    kind: str, *, target_bpm: float, duration_s: float, seed: int, source: str,
    out_dir: Path, config: Config, soundfont: Path | None = None,
) -> Reference:
    """Render or synthesise one reference.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    target_bpm : float
        The instructed tempo in BPM; half/double-time kinds play at 0.5x / 2x of it.
    duration_s : float
        Length in seconds.
    seed : int
        Renderer / synthesis seed.
    source : str
        ``render`` (FluidSynth reference renderer) or ``synth`` (numpy).
    out_dir : Path
        Folder for rendered audio.
    config : Config
        Used to decode rendered files.
    soundfont : Path, optional
        General MIDI soundfont for ``render`` (``render.soundfont_path`` when omitted).

    Returns
    -------
    reference : Reference

    Raises
    ------
    ParameterError
        On an unknown kind or source.
    """
    if kind not in KINDS:
        raise ParameterError(f"unknown reference kind {kind!r}; choose from {list(KINDS)}")
    recipe, factor = KINDS[kind]
    rendered_bpm = target_bpm * factor
    if source == "synth":
        # half/double-time variants are click tracks: one unambiguous metrical level
        if kind == "drums":
            x = drum_pattern(bpm=rendered_bpm, duration_s=duration_s, seed=seed)
        else:
            x = click_track(bpm=rendered_bpm, duration_s=duration_s)
        return Reference(kind, target_bpm, rendered_bpm, x, None, "synth", (factor,))
    if source != "render":
        raise ParameterError(f"source must be 'render' or 'synth', got {source!r}")
    render_recipe = _render_recipe_fn()
    if render_recipe is None:
        raise ParameterError("timingbench.render is not available; use --source synth")
    clip_dir = out_dir / "references"
    clip_dir.mkdir(parents=True, exist_ok=True)
    extra = {"pattern": "beat"} if kind == "drums" else {}
    rendered = render_recipe(
        recipe, seed=seed, out_dir=clip_dir, duration_s=duration_s, bpm=target_bpm,
        clip_id=f"{kind}-{target_bpm:g}bpm-s{seed}", soundfont=soundfont, **extra,
    )
    meta: dict[str, Any] = dict(getattr(rendered, "meta", {}) or {})
    # the renderer plays every tempo recipe at the target; half/double are feels
    rendered_bpm = float(meta.get("bpm", target_bpm))
    expected = (1.0, *(float(f) for f in meta.get("ambiguous_factors", [])))
    clip = load_clip(rendered.audio_path, config)
    return Reference(
        kind, target_bpm, rendered_bpm, clip.samples, str(rendered.audio_path), "render", expected
    )


# --------------------------------------------------------------------------- check


def check_references(
    references: list[Reference], *, config: Config
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Estimate each reference's tempo and summarise the estimator's error.

    Parameters
    ----------
    references : list of Reference
    config : Config
        Reads the ``tempo`` section.

    Returns
    -------
    rows : list of dict
        Per reference: ``kind``, ``target_bpm``, ``rendered_bpm``, ``estimate_bpm``,
        ``error_pct`` (vs the rendered tempo), ``precise_bpm``, ``precise_error_pct``
        (vs the rendered tempo), ``credited`` and ``octave_equivalent``
        (vs the target at ``tempo.tolerance_pct``), ``steady``, ``reason``, ``seconds``,
        ``audio``, ``source``.
    summary : dict
        ``max_abs_error_pct`` over the exact kinds, the bound,
        ``max_abs_precise_error_pct`` and its bound ``precise_bound_pct``,
        ``n_octave_errors``
        (exact references tracked at another metrical level),
        ``max_abs_error_pct_at_tracked_level`` (error against the matched octave factor
        times the target, i.e. precision with octave errors set aside), ``exact_ok``,
        ``variants_ok`` (each half/double-time reference matched one of its expected
        octave factors, and credited only at factor 1), ``precise_ok`` and
        ``passed`` (both estimators within their bounds and the variants ok).
    """
    tol = float(config.value("tempo.tolerance_pct"))
    bound = float(config.value("tempo.reference_max_error_pct"))
    precise_bound = float(config.value("tempo.reference_max_precise_error_pct"))
    rows: list[dict[str, Any]] = []
    for ref in references:
        t0 = time.perf_counter()
        est = estimate_tempo(ref.samples, sr=_SR, config=config)
        seconds = time.perf_counter() - t0
        scored = score_tempo(est, target_bpm=ref.target_bpm, tolerance_pct=tol, config=config)
        err = (
            None if est.estimate_bpm is None
            else 100.0 * (est.estimate_bpm - ref.rendered_bpm) / ref.rendered_bpm
        )
        precise_err = (
            None if est.precise_bpm is None
            else 100.0 * (est.precise_bpm - ref.rendered_bpm) / ref.rendered_bpm
        )
        rows.append({
            "kind": ref.kind,
            "target_bpm": ref.target_bpm,
            "rendered_bpm": ref.rendered_bpm,
            "estimate_bpm": est.estimate_bpm,
            "error_pct": err,
            "precise_bpm": est.precise_bpm,
            "precise_error_pct": precise_err,
            "credited": scored["credited"],
            "octave_equivalent": scored["octave_equivalent"],
            "steady": bool(est.beat_stability.get("steady", False)),
            "reason": est.reason,
            "seconds": round(seconds, 3),
            "audio": ref.audio_path,
            "source": ref.source,
            "expected_factors": list(ref.expected_factors),
        })
    exact = [r for r in rows if r["kind"] in EXACT_KINDS]
    errs = [abs(r["error_pct"]) for r in exact if r["error_pct"] is not None]
    precise_errs = [abs(r["precise_error_pct"]) for r in exact if r["precise_error_pct"] is not None]
    # precision at the metrical level the tracker locked to (octave errors set aside)
    level_errs = [
        abs(100.0 * (r["estimate_bpm"] - r["octave_equivalent"] * r["target_bpm"])
            / (r["octave_equivalent"] * r["target_bpm"]))
        for r in exact
        if r["estimate_bpm"] is not None and r["octave_equivalent"] is not None
    ]
    octave_errors = [
        r for r in exact if r["octave_equivalent"] is not None and r["octave_equivalent"] != 1.0
    ]
    max_err = max(errs) if errs else None
    exact_ok = bool(exact) and len(errs) == len(exact) and max_err is not None and max_err <= bound
    max_precise = max(precise_errs) if precise_errs else None
    precise_ok = (
        bool(exact) and len(precise_errs) == len(exact) and max_precise is not None
        and max_precise <= precise_bound
    )
    variants = [r for r in rows if r["kind"] not in EXACT_KINDS]
    variants_ok = all(
        r["octave_equivalent"] is not None
        and any(abs(r["octave_equivalent"] - f) < 1e-9 for f in r["expected_factors"])
        and r["credited"] == (r["octave_equivalent"] == 1.0)
        for r in variants
    )
    summary = {
        "n_references": len(rows),
        "n_exact": len(exact),
        "max_abs_error_pct": max_err,
        "bound_pct": bound,
        "max_abs_precise_error_pct": max_precise,
        "precise_bound_pct": precise_bound,
        "precise_ok": precise_ok,
        "n_octave_errors": len(octave_errors),
        "max_abs_error_pct_at_tracked_level": max(level_errs) if level_errs else None,
        "n_no_estimate": sum(1 for r in exact if r["estimate_bpm"] is None),
        "exact_ok": exact_ok,
        "n_variants": len(variants),
        "variants_ok": variants_ok,
        "passed": exact_ok and precise_ok and variants_ok if exact else variants_ok,
        "mean_seconds_per_clip": float(np.mean([r["seconds"] for r in rows])) if rows else None,
    }
    return rows, summary


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _print_table(rows: list[dict[str, Any]], summary: dict[str, Any], *, config: Config) -> None:
    print(f"{'kind':<12}{'target':>8}{'played':>9}{'estimate':>11}{'error %':>10}"
          f"{'precise':>11}{'error %':>10}  {'credited':<9}{'octave':<8}{'source':<7}reason")
    for r in rows:
        print(
            f"{r['kind']:<12}{r['target_bpm']:>8.2f}{r['rendered_bpm']:>9.2f}"
            f"{_fmt(r['estimate_bpm'], '.4f'):>11}{_fmt(r['error_pct'], '+.4f'):>10}"
            f"{_fmt(r['precise_bpm'], '.4f'):>11}{_fmt(r['precise_error_pct'], '+.4f'):>10}  "
            f"{'yes' if r['credited'] else 'no':<9}{_fmt(r['octave_equivalent'], '.3g'):<8}"
            f"{r['source']:<7}{r['reason'] or ''}"
        )
    print(
        f"max |error| on {summary['n_exact']} exact references: "
        f"{_fmt(summary['max_abs_error_pct'], '.4f')} % (bound {summary['bound_pct']} %) -> "
        f"{'ok' if summary['exact_ok'] else 'FAIL'} ({summary['n_octave_errors']} octave errors; "
        f"max |error| at the tracked level {_fmt(summary['max_abs_error_pct_at_tracked_level'], '.4f')} %)"
        f"; precise: {_fmt(summary['max_abs_precise_error_pct'], '.4f')} % "
        f"(bound {summary['precise_bound_pct']} %) -> {'ok' if summary['precise_ok'] else 'FAIL'}"
        f"; half/double-time variants: "
        f"{'ok' if summary['variants_ok'] else 'FAIL'} ({summary['n_variants']}); "
        f"config {config.version} ({config.content_hash})"
    )


def _parse_tempi(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"--tempi must be comma-separated numbers of BPM, got {text!r}") from None
    if not values or any(not (np.isfinite(v) and v > 0) for v in values):
        raise ParameterError(f"--tempi must list positive BPM values, got {text!r}")
    return values


def run_tempo_check(args: argparse.Namespace) -> int:
    """Run the check; exit status 0 when every criterion holds, 1 otherwise."""
    cfg = load_config(args.config)
    kinds = [k.strip() for k in str(args.kinds).split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ParameterError(f"--kinds: unknown kind(s) {unknown}; choose from {list(KINDS)}")
    source = args.source
    if source == "auto":
        source = "render" if _renderer_available() else "synth"
    elif source == "render" and not _renderer_available():
        raise ParameterError("--source render: timingbench.render is not available; use --source synth")
    if args.soundfont and source != "render":
        raise ParameterError("--soundfont applies to rendered references only (--source render)")
    tempi = (
        _parse_tempi(args.tempi) if args.tempi
        else [float(v) for v in cfg.value("tempo.reference_tempi_bpm")]
    )
    plan: list[tuple[str, float]] = []
    for kind in kinds:
        if kind in EXACT_KINDS:
            plan += [(kind, bpm) for bpm in tempi]
        else:
            key = f"tempo.reference_{kind}_bpm"
            plan += [(kind, float(bpm)) for bpm in cfg.value(key)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    refs = [
        make_reference(kind, target_bpm=bpm, duration_s=float(args.duration_s), seed=int(args.seed),
                       source=source, out_dir=out, config=cfg,
                       soundfont=Path(args.soundfont) if args.soundfont else None)
        for kind, bpm in plan
    ]
    rows, summary = check_references(refs, config=cfg)
    summary.update({"source": source, "duration_s": float(args.duration_s),
                    "config_version": cfg.version, "config_hash": cfg.content_hash})
    write_json(out / "tempo-check.json", {"summary": summary, "references": rows})
    _print_table(rows, summary, config=cfg)
    print(f"wrote {out / 'tempo-check.json'}")
    return 0 if summary["passed"] else 1
