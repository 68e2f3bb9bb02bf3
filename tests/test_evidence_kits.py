"""Sound sources of the evidence data: the Hydrogen kit sampler, real-kit choice, freepats programs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from timingbench.identity.training import dataset as ds
from timingbench.identity.training.layouts import sample_layout
from timingbench.render import kits

SR = 44100


def _kit(folder: Path) -> Path:
    """A two-instrument Hydrogen kit: a kick with two velocity layers and a closed hi-hat."""
    folder.mkdir()
    sf.write(folder / "k-soft.wav", np.full(100, 0.1), SR, subtype="FLOAT")
    sf.write(folder / "k-hard.wav", np.full(100, 0.5), SR, subtype="FLOAT")
    sf.write(folder / "hh.wav", np.stack([np.full(50, 0.2), np.full(50, 0.4)], axis=1), SR, subtype="FLOAT")  # stereo
    sf.write(folder / "sn.wav", np.full(80, 0.3), SR, subtype="FLOAT")
    (folder / "drumkit.xml").write_text("""<?xml version="1.0"?>
<drumkit_info xmlns="http://www.hydrogen-music.org/drumkit"><name>Test Kit</name><instrumentList>
 <instrument><id>0</id><name>Kick</name><volume>1</volume><gain>0.5</gain>
  <layer><filename>k-soft.wav</filename><min>0</min><max>0.5</max><gain>1</gain></layer>
  <layer><filename>k-hard.wav</filename><min>0.5</min><max>1</max><gain>1</gain></layer></instrument>
 <instrument><id>1</id><name>Closed HH</name><volume>1</volume><gain>1</gain>
  <layer><filename>hh.wav</filename><min>0</min><max>1</max><gain>1</gain></layer></instrument>
 <instrument><id>2</id><name>Snare Roll</name><volume>1</volume><gain>1</gain>
  <layer><filename>sn.wav</filename><min>0</min><max>1</max><gain>1</gain></layer></instrument>
</instrumentList></drumkit_info>""")
    return folder


def test_instrument_names_map_to_general_midi_kinds() -> None:
    assert kits._kind_of("Pearl Kick") == kits._kind_of("BassDrum") == "kick"
    assert kits._kind_of("Sabian Hat Closed") == kits._kind_of("Closed HH") == "hat_closed"
    assert kits._kind_of("Hi-Hat Open (Paiste)") == "hat_open" and kits._kind_of("Pedal HH") == "hat_pedal"
    assert kits._kind_of("Snare Rock") == "snare" and kits._kind_of("Snare Roll") is None
    assert kits._kind_of("Tom Low") == "tom" and kits._kind_of("Ride Bell") is None
    assert kits._kind_of("Djembe1 Slap") is None


def test_hydrogen_sampler_places_layers_by_velocity(tmp_path: Path) -> None:
    folder = _kit(tmp_path / "kit")
    kit = kits.parse_hydrogen_kit(folder)
    assert kit.name == "Test Kit" and set(kit.by_kind) == {"kick", "hat_closed"}
    y = kits.render_hydrogen(folder, [(0.0, 36, 127), (0.01, 36, 32), (0.02, 42, 127), (0.03, 38, 100)],
                             n_samples=2000, sr=SR)
    np.testing.assert_allclose(y[:100], 0.5 * 0.5)  # hard layer x velocity 1 x instrument gain 0.5
    s = int(round(0.01 * SR))
    np.testing.assert_allclose(y[s : s + 100], 0.1 * 32 / 127 * 0.5)  # soft layer
    h = int(round(0.02 * SR))
    np.testing.assert_allclose(y[h : h + 50], 0.3)  # the stereo sample's mean
    assert not y[int(round(0.03 * SR)) :].any()  # the kit has no usable snare: skipped


def test_kits_need_a_kick_a_snare_and_a_closed_hat(tmp_path: Path) -> None:
    _kit(tmp_path / "a")
    assert kits.hydrogen_kits(tmp_path) == []  # no snare
    xml = (tmp_path / "a" / "drumkit.xml").read_text().replace("Snare Roll", "Snare")
    (tmp_path / "a" / "drumkit.xml").write_text(xml)
    assert kits.hydrogen_kits(tmp_path) == [tmp_path / "a"]


def test_real_kit_choice_is_seeded_and_near_its_share() -> None:
    layouts = [sample_layout(i, seed=3, duration_s=9.0, edge_s=1.5, real_vocals_p=0.8, choir_family="synth")
               for i in range(400)]
    names = ["a.sf2", "/h/b"]
    got = [ds.choose_kit(lay, seed=3, kits=names, real_kit_p=0.5) for lay in layouts]
    assert got == [ds.choose_kit(lay, seed=3, kits=names, real_kit_p=0.5) for lay in layouts]
    drums = [g for g, lay in zip(got, layouts, strict=True) if any(q.program.is_drum for q in lay.parts)]
    assert all(g is None for g, lay in zip(got, layouts, strict=True) if not any(q.program.is_drum for q in lay.parts))
    share = sum(g is not None for g in drums) / len(drums)
    assert 0.4 < share < 0.6 and {g for g in drums if g} == set(names)


def test_a_program_a_sound_set_lacks_is_played_by_one_of_its_family(tmp_path: Path) -> None:
    cfg = tmp_path / "set.cfg"
    cfg.write_text("dir /x\ndrumset 0\n 36 Drum/kick.pat\nbank 0\n 0 Piano.pat\n 32 Bass.pat # comment\n 33 B2.pat\n")
    assert kits.available_programs(str(cfg)) == frozenset({0, 32, 33})
    layouts = [sample_layout(i, seed=1, duration_s=9.0, edge_s=1.5, real_vocals_p=0.8, choir_family="synth")
               for i in range(200)]
    part = next(q for lay in layouts for q in lay.parts if q.family == "bass" and q.program.program not in (32, 33))
    played = ds.played_program(part, kits.available_programs(str(cfg)), "synth")
    assert played in (32, 33) and ds.played_program(part, None, "synth") == part.program.program


@pytest.mark.skipif(not (shutil.which("timidity") and Path(kits.FREEPATS_CFG).is_file()),
                    reason="timidity and freepats are installed by `make setup`")
def test_freepats_renders_through_timidity(tmp_path: Path) -> None:
    import mido

    mid = mido.MidiFile(ticks_per_beat=480)
    tr = mido.MidiTrack()
    mid.tracks.append(tr)
    tr += [mido.Message("program_change", program=0, time=0), mido.Message("note_on", note=60, velocity=100, time=480),
           mido.Message("note_off", note=60, velocity=0, time=480)]
    mid.save(str(tmp_path / "a.mid"))
    y = kits.render_timidity(tmp_path / "a.mid", n_samples=2 * SR, cfg_path=kits.FREEPATS_CFG, sr=SR, timeout_s=60)
    assert y.shape == (2 * SR,)
    assert np.abs(y[: int(0.4 * SR)]).max() < 1e-3 < np.abs(y[int(0.5 * SR) : int(1.0 * SR)]).max()
