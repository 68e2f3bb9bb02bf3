"""Reference renderer: seeded MIDI arrangements rendered by FluidSynth with exact truth.

Public API::

    from timingbench.render import render_recipe, RECIPES, render_corpus, CORPORA, RenderedClip

Modules: :mod:`~timingbench.render.scenarios` (the scenario catalogue: recipe builders and
their plans), :mod:`~timingbench.render.pipeline` (:func:`render_recipe`: plan -> MIDI,
audio, prompt and truth), :mod:`~timingbench.render.truth_rules` (how truth is read from
the MIDI notes), :mod:`~timingbench.render.synth` (MIDI files, FluidSynth, gain envelope),
:mod:`~timingbench.render.arrangement` and :mod:`~timingbench.render.instruments` (notes,
parts, styles), :mod:`~timingbench.render.corpus` (fixed corpora) and
:mod:`~timingbench.render.reference_signals` (numpy click tracks and drum patterns with
sample-accurate beats).
"""

from __future__ import annotations

from timingbench.render.corpus import CORPORA, ClipSpec, CorpusDef, render_corpus, render_specs
from timingbench.render.pipeline import RenderedClip, default_clip_id, render_recipe
from timingbench.render.scenarios import RECIPE_PARAMS, RECIPES

__all__ = ["CORPORA", "ClipSpec", "CorpusDef", "render_corpus", "render_specs", "RECIPES", "RECIPE_PARAMS",
           "RenderedClip", "default_clip_id", "render_recipe"]
