"""Reference renderer: seeded MIDI arrangements rendered by FluidSynth with exact truth.

Public API::

    from timingbench.render import render_recipe, RECIPES, render_corpus, CORPORA, RenderedClip
"""

from __future__ import annotations

from timingbench.render.corpus import CORPORA, ClipSpec, CorpusDef, render_corpus, render_specs
from timingbench.render.pipeline import RenderedClip, default_clip_id, render_recipe
from timingbench.render.scenarios import RECIPE_PARAMS, RECIPES

__all__ = ["CORPORA", "ClipSpec", "CorpusDef", "render_corpus", "render_specs", "RECIPES", "RECIPE_PARAMS", "RenderedClip", "default_clip_id", "render_recipe"]
