"""The tempo estimator's own error on exact-tempo references (``timingbench tempo-check``).

References are rendered by the reference renderer (:func:`timingbench.render.render_recipe`:
click tracks and drum patterns played at an exact tempo, plus half-time and double-time
feels) or synthesised with sample-accurate beats
(:mod:`timingbench.render.reference_signals`). :func:`check_references` runs
:func:`timingbench.detectors.tempo.estimate_tempo` on each and reports, per reference,
the error of the paper's estimator (``estimate_bpm``) and of the beat-line estimator
reported beside it (``precise_bpm``), and their maxima against their bounds
(``tempo.reference_max_error_pct``, the paper's figure, and
``tempo.reference_max_precise_error_pct``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.detectors.tempo import estimate_tempo, score_tempo
from timingbench.errors import ParameterError
from timingbench.render.reference_signals import click_track, drum_pattern

if TYPE_CHECKING:
    from timingbench.params.detectors import TempoParams

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


def reference_plan(kinds: Sequence[str], *, tempi: Sequence[float] | None,
                   params: TempoParams) -> list[tuple[str, float]]:
    """The (kind, target BPM) pairs to check.

    Parameters
    ----------
    kinds : sequence of str
        Kinds among :data:`KINDS`.
    tempi : sequence of float, optional
        Targets of the exact kinds; ``tempo.reference_tempi_bpm`` when omitted. The
        half/double-time kinds use ``tempo.reference_half_time_bpm`` and
        ``tempo.reference_double_time_bpm``.
    params : TempoParams
        The ``tempo`` section.

    Returns
    -------
    plan : list of (str, float)

    Raises
    ------
    ParameterError
        On an unknown kind.
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ParameterError(f"--kinds: unknown kind(s) {unknown}; choose from {list(KINDS)}")
    tp = params
    exact = [float(v) for v in (tp.reference_tempi_bpm if tempi is None else tempi)]
    variants = {"half_time": tp.reference_half_time_bpm, "double_time": tp.reference_double_time_bpm}
    plan: list[tuple[str, float]] = []
    for kind in kinds:
        if kind in EXACT_KINDS:
            plan += [(kind, bpm) for bpm in exact]
        else:
            plan += [(kind, float(bpm)) for bpm in variants[kind]]
    return plan


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


def renderer_available() -> bool:
    """Whether the FluidSynth reference renderer (:mod:`timingbench.render`) can be imported."""
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
    tp = config.params.tempo
    tol = float(tp.tolerance_pct)
    bound = float(tp.reference_max_error_pct)
    precise_bound = float(tp.reference_max_precise_error_pct)
    rows: list[dict[str, Any]] = []
    for ref in references:
        t0 = time.perf_counter()
        est = estimate_tempo(ref.samples, sr=_SR, tempo=config.params.tempo, audio=config.params.audio)
        seconds = time.perf_counter() - t0
        scored = score_tempo(est, target_bpm=ref.target_bpm, tolerance_pct=tol, tempo=config.params.tempo)
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


def print_table(rows: list[dict[str, Any]], summary: dict[str, Any], *, config: Config) -> None:
    """Print the per-reference table and the summary line of :func:`check_references`."""
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
