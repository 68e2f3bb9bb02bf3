"""The predominant-pitch melody measure (harmonic-summation salience) on synthetic signals."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from timingbench.audio import Clip
from timingbench.config import Config
from timingbench.controls import salience as sal
from timingbench.controls.frames import pool, spectral_frames
from timingbench.controls.melody import melody_accuracy, produced_pitch_class
from timingbench.controls.schema import Controls
from timingbench.controls.score import ControlSections, score_controls
from timingbench.errors import ParameterError
from timingbench.features import compute_bank
from timingbench.features.spectral import stft_magnitude

SR = 44100
HOP_S = 0.05
NOTE_S = 0.5
#: A reed-like tone: strong odd harmonics, the third nearly as loud as the fundamental.
REED = {1: 1.0, 2: 0.1, 3: 0.9, 4: 0.1, 5: 0.6, 6: 0.05, 7: 0.4, 9: 0.25}


def _tone(midi: float, n: int, amp: float, partials: dict[int, float]) -> np.ndarray:
    t = np.arange(n) / SR
    f0 = 440.0 * 2 ** ((midi - 69) / 12)
    return sum(amp * a * np.sin(2 * np.pi * h * f0 * t) for h, a in partials.items() if h * f0 < SR / 2)


def _pad(n: int, amp: float) -> np.ndarray:
    """A sustained C major triad in the lead's register (C4 E4 G4), five decaying harmonics each."""
    return sum(_tone(p, n, amp, {h: 0.6 ** (h - 1) for h in range(1, 6)}) for p in (60, 64, 67))


def _line(rng: np.random.Generator, n_notes: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """A reed line of 0.5 s notes, MIDI 62-78, and its request on the 0.05 s hop."""
    pitches = rng.integers(62, 79, size=n_notes).astype(float)
    note = int(NOTE_S * SR)
    y = np.concatenate([_tone(p, note, 0.1, REED) for p in pitches])
    return y, np.repeat(pitches, int(round(NOTE_S / HOP_S)))


def _both(y: np.ndarray, midi: np.ndarray, config: Config) -> tuple[float, float]:
    """(chroma argmax accuracy, salience accuracy) of ``y`` against ``midi``."""
    c = config.params.controls
    mag = stft_magnitude(y.astype(np.float32), n_fft=2048, hop=512)
    fr = spectral_frames(mag, sr=SR, n_fft=2048, hop=512, tuning=0.0,
                         highpass_hz=c.melody_highpass_hz, salience=c)
    pc = produced_pitch_class(pool(fr["chroma"], frame_hop_s=fr["hop_s"], hop_s=HOP_S, n=midi.size))
    prior = sal.range_prior(centre_midi=c.melody_prior_centre_midi, width_semitones=c.melody_prior_width_semitones)
    spc = sal.predominant_pitch_class(pool(fr["salience"], frame_hop_s=fr["hop_s"], hop_s=HOP_S, n=midi.size), prior)
    return melody_accuracy(midi, pc)[0], melody_accuracy(midi, spc)[0]


def test_a_lone_reed_line_is_its_fundamental_not_its_third_harmonic(config: Config, rng: np.random.Generator):
    y, midi = _line(rng)
    chroma, salience = _both(y, midi, config)
    assert salience == pytest.approx(1.0)
    assert chroma < 0.6  # the chroma argmax often lands on the fifth (the third harmonic's pitch class)


def test_a_lead_over_a_pad_chord_as_loud_as_it(config: Config, rng: np.random.Generator):
    y, midi = _line(rng)
    pad = _pad(y.size, 0.075)
    assert np.sum(pad**2) > np.sum(y**2)  # the chord carries more energy than the lead
    chroma, salience = _both(y + pad, midi, config)
    assert salience >= 0.9
    assert chroma < 0.6


def test_a_pad_twice_the_lead_wins_every_measure(config: Config, rng: np.random.Generator):
    """The limit: no frame-wise measure finds a lead that is not the predominant voice."""
    y, midi = _line(rng)
    chroma, salience = _both(y + _pad(y.size, 0.13), midi, config)
    assert salience < 0.5 and chroma < 0.5


def test_an_octave_off_is_right_and_a_fifth_off_is_wrong(config: Config, rng: np.random.Generator):
    y, midi = _line(rng)
    assert _both(y, midi + 12.0, config)[1] == pytest.approx(1.0)  # pitch-class accuracy is octave-blind
    assert _both(y, midi - 12.0, config)[1] == pytest.approx(1.0)
    assert _both(y, midi + 7.0, config)[1] < 0.1


def test_rests_are_not_scored_and_requested_silence_is_wrong(config: Config, rng: np.random.Generator):
    y, midi = _line(rng, n_notes=8)
    note = int(NOTE_S * SR)
    per = int(round(NOTE_S / HOP_S))
    y[2 * note:3 * note] = 0.0  # the third note rests in the audio ...
    req = midi.copy()
    req[5 * per:6 * per] = np.nan  # ... and the sixth in the request
    c = config.params.controls
    mag = stft_magnitude(y.astype(np.float32), n_fft=2048, hop=512)
    fr = spectral_frames(mag, sr=SR, n_fft=2048, hop=512, tuning=0.0,
                         highpass_hz=c.melody_highpass_hz, salience=c)
    pooled = pool(fr["salience"], frame_hop_s=fr["hop_s"], hop_s=HOP_S, n=req.size)
    spc = sal.predominant_pitch_class(pooled, sal.range_prior(centre_midi=72.0, width_semitones=12.0))
    inner = spc[2 * per + 1:3 * per - 1]
    assert np.all(inner == -1)  # digital silence has no pitch
    acc, n = melody_accuracy(req, spc)
    assert n == 7 * per
    # the rested note's frames count as misses; the rest is right but for the window's overlap at its edges
    assert 5 / 7 <= acc <= 6 / 7 + 1e-9


def test_score_controls_reports_both_measures_with_chance(config: Config, rng: np.random.Generator):
    y, midi = _line(rng, n_notes=24)
    y = (y + _pad(y.size, 0.075)).astype(np.float32)
    clip = Clip(path=Path("lead.wav"), samples=y, sr=SR, duration_s=y.size / SR, source_sr=SR,
                source_channels=1, content_hash=hashlib.sha256(y.tobytes()).hexdigest()[:16])
    bank = compute_bank(clip, config, separation="dsp")
    m = score_controls(bank, Controls(melody_hop_s=HOP_S, melody_midi=midi), ControlSections.of(config),
                       span_s=y.size / SR,
                       key="lead.wav")["melody"]
    s = m["salience"]
    assert s["accuracy"] >= 0.9 and s["accuracy"] > m["accuracy"]
    assert s["shuffled_accuracy"] < 0.3 and s["chance"]["mean"] < 0.3 and s["chance"]["p_chance"] == 0.0
    assert set(s) == {"accuracy", "shuffled_accuracy", "chance"}


def test_salience_peaks_sit_on_the_fundamental_grid():
    y = _tone(69.0, SR, 0.3, REED)
    from timingbench.features.spectral import stft_magnitude

    mag = stft_magnitude(y.astype(np.float32), n_fft=2048, hop=512)
    s = sal.semitone_salience(mag, sr=SR, n_fft=2048, n_harmonics=20, alpha=0.8, beta=1.0, peak_range_db=40.0,
                              max_hz=20000.0)
    assert s.shape == (sal.N_SEMITONES, mag.shape[1])
    assert int(np.argmax(s[:, 20])) + sal.REF_MIDI == 69
    frame, freq, _ = sal.spectral_peaks(mag[:, 20:21], sr=SR, n_fft=2048, peak_range_db=40.0, max_hz=20000.0)
    assert np.min(np.abs(freq - 440.0)) < 2.0  # interpolated well inside the 21.5 Hz bin


@pytest.mark.parametrize("kw", [{"n_harmonics": 0}, {"alpha": 1.5}, {"alpha": 0.0}, {"beta": 0.0},
                                {"peak_range_db": 0.0}, {"max_hz": -1.0}])
def test_salience_rejects_parameters_out_of_range(kw):
    args = {"sr": SR, "n_fft": 2048, "n_harmonics": 20, "alpha": 0.8, "beta": 1.0, "peak_range_db": 40.0,
            "max_hz": 20000.0} | kw
    with pytest.raises(ParameterError):
        sal.semitone_salience(np.ones((1025, 3)), **args)


def test_prior_rejects_a_non_positive_width_and_silence_has_no_pitch():
    with pytest.raises(ParameterError, match="positive"):
        sal.range_prior(centre_midi=72.0, width_semitones=0.0)
    prior = sal.range_prior(centre_midi=72.0, width_semitones=12.0)
    assert prior[72 - sal.REF_MIDI] == pytest.approx(1.0)
    s = np.zeros((sal.N_SEMITONES, 3))
    s[:, 1] = np.nan  # a control frame past the clip's end
    assert sal.predominant_pitch_class(s, prior).tolist() == [-1, -1, -1]


@pytest.mark.parametrize(("key", "value"), [("melody_salience_alpha", 1.5), ("melody_salience_beta", 0.0),
                                            ("melody_prior_width_semitones", 0.0),
                                            ("melody_salience_peak_range_db", -3.0)])
def test_config_rejects_salience_constants_out_of_range(config: Config, key: str, value: float):
    from timingbench.errors import ConfigError

    with pytest.raises(ConfigError, match=f"controls.{key}"):
        config.with_value(f"controls.{key}", value).params.controls  # noqa: B018
