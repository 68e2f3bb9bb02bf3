"""Reference renderer: seeded MIDI arrangements rendered by FluidSynth with exact truth.

Public API::

    from timingbench.render import render_recipe, RECIPES, render_corpus, CORPORA, RenderedClip
"""

from __future__ import annotations

from timingbench.render.corpus import CORPORA, ClipSpec, CorpusDef, render_corpus, render_specs
from timingbench.render.recipes import (
    RECIPE_PARAMS,
    RECIPES,
    RenderedClip,
    default_clip_id,
    render_recipe,
)

__all__ = ["CORPORA", "ClipSpec", "CorpusDef", "render_corpus", "render_specs", "RECIPES", "RECIPE_PARAMS", "RenderedClip", "default_clip_id", "render_recipe"]
