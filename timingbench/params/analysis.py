"""Parameter sets of audio decoding, the feature bank, separation and family evidence.

(Fields and their generated docstrings: :mod:`timingbench.params`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timingbench.errors import ConfigError
from timingbench.params.base import Params, register
from timingbench.params.families import FamiliesParams


@register
@dataclass(frozen=True)
class AudioParams(Params):
    """Constants of the ``audio`` section.

    Attributes
    ----------
    sample_rate_hz : int
        paper Sec. IV-A: audio is decoded to 44.1 kHz mono (convention)
    analysis_window_s : float
        paper Sec. III-B: per-clip reference statistics on the leading 35 s (convention)
    silent_peak_dbfs : float
        a clip whose peak is below -90 dBFS carries no measurable music (below 16-bit dither)
        (convention)
    min_duration_s : float
        shorter than ~4 analysis frames cannot be analysed (convention)
    min_sample_rate_hz : int
        below telephone band (8 kHz) a file holds no audio above 4 kHz, where the percussion route
        and most timbre live: such a file is rejected, not scored as a miss (convention)
    level_frame_s : float
        level normalisation of the musicnn and madmom inputs reads the frame RMS over 2048 samples
        at 44.1 kHz (the feature bank's n_fft), scaled with the rate (convention)
    level_percentile : float
        level normalisation: the loud level is the 95th percentile of the frame RMS, as the feature
        bank's loud_percentile (convention)
    input_loud_level_dbfs : float
        every model whose front end is not gain-invariant (madmom's beat tracker, the taggers, the
        singing detector) reads its input brought to one loud level: the clip's 95th-percentile
        frame RMS at -14 dBFS, a typical mastered level, so no verdict moves with the mastering
        level (convention)
    """

    SECTION = "audio"
    #: Embedded in the sets of the models it levels (``tempo``, ``semantic``, ``tagger``): one reference.
    OWN_SECTION = True

    sample_rate_hz: int
    analysis_window_s: float
    silent_peak_dbfs: float
    min_duration_s: float
    min_sample_rate_hz: int
    level_frame_s: float
    level_percentile: float
    input_loud_level_dbfs: float


@register
@dataclass(frozen=True)
class FeaturesParams(Params):
    """Constants of the ``features`` section.

    Attributes
    ----------
    hop : int
        paper Sec. IV-A: common ~11.6 ms frame grid (512 samples at 44.1 kHz) (convention)
    n_fft : int
        46 ms Hann window at 44.1 kHz, librosa's default music STFT; 4x overlap with the hop
        (convention)
    n_mels : int
        librosa's default mel resolution for onset strength and the labelling page's log-mel
        (convention)
    db_range : float
        log spectra are clipped 80 dB below the clip's own maximum (librosa top_db), so every dB
        feature is level-relative (convention)
    level_range_db : float
        level envelopes are floored 120 dB below their own maximum so digital silence has a finite,
        gain-invariant value (convention)
    hpss_kernel_frames : int
        librosa decompose.hpss default harmonic median length (31 frames = 0.36 s) (convention)
    hpss_kernel_bins : int
        librosa decompose.hpss default percussive median length (31 bins = 670 Hz) (convention)
    hpss_mask_power : float
        librosa decompose.hpss default Wiener soft-mask exponent (convention)
    band_edges_hz : dict[str, Any]
        standard mixing-engineer bands: sub bass, bass/kick body, vocal and instrument fundamentals,
        presence and air (convention)
    chroma_tuning : float
        chroma bins centred on A440 equal temperament; a fixed tuning keeps harmony novelty
        deterministic and cheap (convention)
    n_mfcc : int
        classic MFCC timbre dimension; coefficient 0 (overall level) is dropped so timbre novelty is
        gain-invariant (convention)
    novelty_half_s : float
        checkerboard kernel half width (Foote 2000 uses a few seconds); 1.5 s resolves section
        changes a few seconds apart (convention)
    novelty_taper_sigma : float
        Gaussian taper of the checkerboard kernel, in units of its half width (Foote's radially
        symmetric taper) (convention)
    loud_percentile : float
        the clip's loud level is the 95th percentile of its frame RMS in dB, robust to single peaks
        (convention)
    floor_percentile : float
        the leading-window noise floor is the 5th percentile of frame RMS in dB (convention)
    """

    SECTION = "features"

    hop: int
    n_fft: int
    n_mels: int
    db_range: float
    level_range_db: float
    hpss_kernel_frames: int
    hpss_kernel_bins: int
    hpss_mask_power: float
    band_edges_hz: dict[str, Any]
    chroma_tuning: float
    n_mfcc: int
    novelty_half_s: float
    novelty_taper_sigma: float
    loud_percentile: float
    floor_percentile: float

    def validate(self) -> None:
        """Check the bank geometry.

        Raises
        ------
        ConfigError
            If a frame/band count is not positive, ``n_fft`` is odd, an HPSS kernel is even,
            ``n_mfcc < 2`` (coefficient 0 is dropped), a percentile is outside [0, 100], or
            ``band_edges_hz`` is not a non-empty map of band names to ``[low_hz, high_hz]``.
        """
        super().validate()
        for name in ("hop", "n_fft", "n_mels", "n_mfcc", "hpss_kernel_frames", "hpss_kernel_bins"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"'features.{name}' must be positive")
        if self.n_fft % 2:
            raise ConfigError("'features.n_fft' must be even")
        for name in ("hpss_kernel_frames", "hpss_kernel_bins"):
            if getattr(self, name) % 2 == 0:
                raise ConfigError(f"'features.{name}' must be odd (an HPSS median kernel)")
        if self.n_mfcc < 2:
            raise ConfigError("'features.n_mfcc' must be >= 2 (coefficient 0 is dropped)")
        for name in ("loud_percentile", "floor_percentile"):
            if not 0 <= getattr(self, name) <= 100:
                raise ConfigError(f"'features.{name}' must lie in [0, 100]")
        if not isinstance(self.band_edges_hz, dict) or not self.band_edges_hz:
            raise ConfigError("'features.band_edges_hz' must map band names to [low, high] Hz")
        for name, pair in self.band_edges_hz.items():
            if (not isinstance(pair, list | tuple) or len(pair) != 2
                    or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in pair)):
                raise ConfigError(f"'features.band_edges_hz.{name}' must be [low_hz, high_hz]")

    @property
    def bands(self) -> tuple[tuple[str, float, float], ...]:
        """The band table, ``(name, low_hz, high_hz)`` in configuration order."""
        return tuple((str(name), float(pair[0]), float(pair[1])) for name, pair in self.band_edges_hz.items())


@register
@dataclass(frozen=True)
class SeparationParams(Params):
    """Constants of the ``separation`` section.

    Attributes
    ----------
    model_4stem : str
        paper Sec. IV-A: hybrid transformer demucs for drums, bass, vocals, other (convention)
    model_6stem : str
        paper Sec. IV-A: piano and guitar stems need the 6-source hybrid transformer model
        (convention)
    demucs_repo : str | None
        local demucs model folder; null means --demucs-repo or the torch hub cache (convention)
    demucs_overlap : float
        demucs apply_model default overlap between chunks (convention)
    demucs_shifts : int
        no random shift trick, so separation is deterministic (convention)
    dsp_bass_cutoff_hz : float
        dsp fallback: harmonic energy below 250 Hz is routed to the bass stem (convention)
    onnx_threads : int
        htdemucs ONNX export: one onnxruntime intra-op thread per scoring process; --jobs gives the
        parallelism, and a fixed count keeps the stems the same whatever --jobs
        (benchmarks/separation_speed.py: 2 threads cost more CPU-s per audio second for less wall
        time) (calibrated)
    onnx_cpu_arena : bool
        htdemucs ONNX export: onnxruntime's CPU memory arena off: on, 0.69 CPU-s per audio second
        but 4.1 GB peak, over the 4 GB a scoring process may take (benchmarks/separation_speed.py,
        benchmarks/RESULTS.md) (calibrated)
    onnx_memory_pattern : bool
        htdemucs ONNX export: pre-planned memory patterns on: 0.95 CPU-s per audio second and 3.2 GB
        peak against 1.15 and 2.8 GB off (less allocation churn; identical stems;
        benchmarks/separation_speed.py, benchmarks/RESULTS.md) (calibrated)
    onnx_spinning : bool
        htdemucs ONNX export: idle onnxruntime threads sleep instead of spinning, which only burns
        CPU time (benchmarks/separation_speed.py) (calibrated)
    """

    SECTION = "separation"

    model_4stem: str
    model_6stem: str
    demucs_repo: str | None
    demucs_overlap: float
    demucs_shifts: int
    dsp_bass_cutoff_hz: float
    onnx_threads: int
    onnx_cpu_arena: bool
    onnx_memory_pattern: bool
    onnx_spinning: bool


@register
@dataclass(frozen=True)
class SemanticParams(Params):
    """Constants of the ``semantic`` section.

    Attributes
    ----------
    audio : AudioParams
        the ``audio`` section, whose ``input_loud_level_dbfs`` is the one loud level every model
        input is brought to (its own section)
    hop_s : float
        evidence windows every 0.5 s: the same order as the on-time tolerance, 6x overlap of the 3 s
        musicnn patch (convention)
    clap_window_s : float
        CLAP windows as long as musicnn's 3 s training patch, so both backends have the same time
        resolution (convention)
    clap_dir : str | None
        local LAION-CLAP checkpoint folder (transformers ClapModel); null means --clap-dir or none
        (no download ever) (convention)
    musicnn_tag_families : dict[str, Any]
        MagnaTagATune tags that name an instrument of the formats §1 family; a family's evidence is
        the max over its tags; negated tags (no vocals) never count (convention)
    clap_family_texts : dict[str, Any]
        one zero-shot text per family in CLAP's 'the sound of X' style; evidence is the softmax over
        the families (convention)
    musicnn_exempt_families : dict[str, Any]
        families musicnn does not judge although a tag names one of their instruments (disclosed):
        over the 14 true woodwind/plucked entrances of dev + tonal_dev the median evidence in the 3
        s after is at most 0.018 (flute tag at most 0.010; strings 0.08-0.31), so the gate vetoed 4
        of 5 on-time woodwind entrances on noise (few_shot)
    exempt_families : dict[str, Any]
        paper Sec. IV-B: families on which the embedding is unreliable for generated audio (synths,
        pads) are exempted and disclosed (convention)
    context_s : float
        evidence before/after a candidate is read over 3 s, the paper's strict absence window
        (convention)
    context_s_by_family : dict[str, Any]
        per-family override of context_s for the gate (families not listed use context_s) (few_shot)
    after_statistic_by_family : dict[str, Any]
        per-family statistic of the windows after a candidate: median (default) or max (few_shot)
    pre_percentile : float
        'quiet before' reads a high percentile of the windows before the candidate, robust to one
        stray window (convention)
    prob_clip : float
        probabilities are clipped to [0.001, 0.999] before log-odds, so a rise from
        digital-silence-level evidence stays finite (convention)
    min_logit_rise : float | None
        the family's evidence must rise by 0.5 log-odds (x1.65 odds) across the candidate; set on
        the dev split of rendered entrances (benchmarks/semantic_speed.py) to keep ~80 % of true
        entrances; log-odds because tag base rates differ by orders of magnitude (calibrated)
    quiet_max : float | None
        before an entrance the tagger must not already judge the family more likely present than
        absent; dev renders: 0.2-0.7 changed no decision (calibrated)
    """

    SECTION = "semantic"

    audio: AudioParams
    hop_s: float
    clap_window_s: float
    clap_dir: str | None
    musicnn_tag_families: dict[str, Any]
    clap_family_texts: dict[str, Any]
    musicnn_exempt_families: dict[str, Any]
    exempt_families: dict[str, Any]
    context_s: float
    context_s_by_family: dict[str, Any]
    after_statistic_by_family: dict[str, Any]
    pre_percentile: float
    prob_clip: float
    min_logit_rise: float | None
    quiet_max: float | None


@register
@dataclass(frozen=True)
class EvidenceParams(Params):
    """Constants of the ``evidence`` section.

    Attributes
    ----------
    clip_s : float
        training clips are 9 s: room for a 3 s before/after context around entrances placed 1.5-7.5
        s in (convention)
    edge_s : float
        entrances and exits of the training layouts lie at least 1.5 s inside the clip (convention)
    render_gap_s : float
        silence between clips on one FluidSynth timeline, longer than the release tails of the GM
        sets (reverb is off) (convention)
    label_present_db : float
        a family sounds in a frame when its stem is within 40 dB of the mix's loudest frame (the
        bank's 80 dB log-mel range halved: clearly audible in the mix) (convention)
    real_vocals_p : float
        share of vocals parts that are real singing (vocadito) where the recipe also has soundfont
        voices (choirs made vocals); otherwise every vocals part is real singing. Vocals means sung
        words, which no soundfont sings, so real singing is the main positive source (convention)
    real_kit_p : float
        share of training clips with a drum kit whose kit part is played by a real multi-sampled kit
        (avldrums SF2 or a Hydrogen WAV kit) instead of the GM soundfont's kit: half keeps the
        soundfont kits the earlier data had, half brings recorded drums (convention)
    vocadito_train_from_s : float
        only vocadito after 12 s is trained on; its first vocal entrance (before 12 s) is kept for
        testing (convention)
    frame_stride : int
        the model's output hop is 4 bank frames = 46.4 ms at 44.1 kHz (the issue asks <= 50 ms)
        (convention)
    context_s : float
        the entered/left/nothing question compares the 3 s before a frame with the 3 s after it, the
        paper's strict absence window (convention)
    guard_s : float
        the 0.25 s either side of the frame are left out of the before/after context (the transition
        itself) (convention)
    label_absent_max : float
        training target: a family is absent over a context when it sounds in at most 10 % of its
        frames (convention)
    label_near_min : float
        training target: 'entered' also needs the family sounding in 70 % of the 0.5 s just after
        the guard (mirror for 'left'), so the label sits on the entrance (convention)
    gate_reach_s : float
        the change head is read within 0.25 s of the candidate, half the on-time tolerance
        (convention)
    quiet_percentile : float
        'absent before' reads a high percentile of the presence over the context, robust to one
        stray frame (convention)
    entry_min_prob : float | None
        chosen by timingbench calibrate evidence on dev corpora only (dev, dev-identity,
        dev-identity-timgm, real; rule absolute; judged families percussion, bass, guitar, piano,
        vocals, strings, brass, woodwinds, keys, plucked, synth): entrances 18/56 on-time credited,
        1/77 negatives credited; exits 16/40 and 0/2 (calibrated)
    exit_min_prob : float | None
        chosen by timingbench calibrate evidence on dev corpora only (dev, dev-identity,
        dev-identity-timgm, real; rule absolute; judged families percussion, bass, guitar, piano,
        vocals, strings, brass, woodwinds, keys, plucked, synth): entrances 18/56 on-time credited,
        1/77 negatives credited; exits 16/40 and 0/2 (calibrated)
    label_present_min : float
        training target: a family is present over a context when it sounds in at least 60 % of its
        frames (parts rest between phrases) (convention)
    prob_clip : float
        presence is clipped to [0.01, 0.99] before log-odds: the network's probabilities below 1 %
        are not resolved, so a rise from 0.001 and one from 0.01 count the same (convention)
    tagger_rise_mid : float
        the tagger's change across an instant is the log-odds rise of the family's presence (median
        of the columns over the 3 s after minus the 3 s before); a rise of 2 (odds x7.4) reads as
        change probability 0.5, the scale of the network's change head, so the two fuse by their
        maximum (convention)
    design_by_family : dict[str, Any]
        which evidence judges each family under --family-evidence tagger: network (the
        render-trained network alone), tagger (the AudioSet tagger's presence and change), fusion
        (the tagger's presence; the larger of the two change probabilities). Chosen per family by
        the entrance AUC of the gate's score pooled over the dev corpora (dev, dev-identity,
        dev-identity-timgm, real dev split; timingbench evidence eval --designs): percussion fusion
        0.64 (network 0.57, tagger 0.47), bass network 0.78 (fusion 0.76, tagger 0.61), piano tagger
        0.30 (network and fusion 0.25), vocals fusion 0.73 (network 0.71, tagger 0.64), strings
        fusion 0.96 (network 0.93, tagger 0.63); the families with no or too few dev entrances keep
        fusion (calibrated)
    families : FamiliesParams
        The family registry (the ``families`` section): which families are judged.
    """

    SECTION = "evidence"

    clip_s: float
    edge_s: float
    render_gap_s: float
    label_present_db: float
    real_vocals_p: float
    real_kit_p: float
    vocadito_train_from_s: float
    frame_stride: int
    context_s: float
    guard_s: float
    label_absent_max: float
    label_near_min: float
    gate_reach_s: float
    quiet_percentile: float
    entry_min_prob: float | None
    exit_min_prob: float | None
    label_present_min: float
    prob_clip: float
    tagger_rise_mid: float
    design_by_family: dict[str, Any]
    families: FamiliesParams
