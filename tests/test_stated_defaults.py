"""The defaults the help, the README, the docs and the API docstrings state are the ones the
code resolves: ``--family-evidence``, ``--separation``, ``--jobs`` (cores capped by
``runtime.default_jobs_max``) and the API's ``family_evidence`` / ``separation``."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

import timingbench.api as api
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_CHOICES
from timingbench.cli import build_parser
from timingbench.commands import executor_options
from timingbench.config import Config

ROOT = Path(__file__).resolve().parents[1]
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Options whose default the docs state in prose.
STATED = ("--family-evidence", "--separation", "--executor")


def _parsers(parser: argparse.ArgumentParser, path: str = "timingbench") -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(path, parser)]
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                out += _parsers(sp, f"{path} {name}")
    return out


def _option_helps(parser: argparse.ArgumentParser, option: str) -> list[tuple[str, argparse.Action, str]]:
    """(command, action, its help as printed, whitespace collapsed) of every parser with ``option``."""
    out = []
    for path, p in _parsers(parser):
        for a in p._actions:
            if option in a.option_strings:
                fmt = p._get_formatter()
                out.append((path, a, " ".join(fmt._expand_help(a).split())))
    return out


def _score_default(option: str) -> object:
    return next(a.default for path, a, _ in _option_helps(build_parser(), option) if path == "timingbench score")


def test_family_evidence_help_names_the_default_backend() -> None:
    helps = [(path, a, text) for path, a, text in _option_helps(build_parser(), "--family-evidence")
             if a.default is not None]
    assert {path for path, _, _ in helps} >= {"timingbench score", "timingbench sweep", "timingbench confusion"}
    for path, action, text in helps:
        assert action.default == DEFAULT_FAMILY_EVIDENCE, path
        assert f"(default: {DEFAULT_FAMILY_EVIDENCE}" in text, (path, text)
        for choice in FAMILY_EVIDENCE_CHOICES:  # every choice is described once, by its name
            assert text.count(f"{choice}: ") == 1, (path, choice, text)


def test_separation_help_names_its_default() -> None:
    for path, action, text in _option_helps(build_parser(), "--separation"):
        if action.default is None:  # explain: the run's own
            continue
        assert f"(default: {action.default}" in text, (path, text)


@pytest.mark.parametrize(("cores", "want"), [(1, 1), (2, 2), (16, 4)])
def test_jobs_help_prints_the_resolved_number(config: Config, monkeypatch: pytest.MonkeyPatch, cores: int,
                                              want: int) -> None:
    monkeypatch.setattr(executor_options, "available_cores", lambda: cores)
    cap = config.params.runtime.default_jobs_max
    assert executor_options.resolve_jobs(argparse.Namespace(jobs=None), config) == want
    helps = _option_helps(build_parser(), "--jobs")
    assert {"timingbench score", "timingbench demo", "timingbench sweep"} <= {path for path, _, _ in helps}
    for path, _, text in helps:
        assert f"(default: {want} = the cores available ({cores}), at most runtime.default_jobs_max ({cap});" in text, \
            (path, text)


def _stated_values(text: str, option: str) -> list[str]:
    """The values a text says ``option`` takes by default: a backticked ``--option VALUE`` in
    the same clause as the word "default" (no sentence end, semicolon or table cell between)."""
    found = []
    for m in re.finditer(rf"`{re.escape(option)} (\w+)", text):
        before = re.split(r"[.;|\n]\s|[;|]", text[max(0, m.start() - 60):m.start()])[-1]
        after = re.split(r"[.;|]\s|[;|]|`\s*;", text[m.end():m.end() + 40])[0]
        if "default" in before or "default" in after:
            found.append(m.group(1))
    return found


def test_the_docs_state_the_code_defaults(config: Config) -> None:
    bad = []
    for md in MARKDOWN:
        text = md.read_text(encoding="utf-8")
        for option in STATED:
            for value in _stated_values(text, option):
                if value != _score_default(option):
                    bad.append(f"{md.name}: {option} {value} stated as the default; the code's is "
                               f"{_score_default(option)}")
        # "family evidence, X (default `Y`)" in tables, without the option's name
        for m in re.finditer(r"family[ -]evidence[^|\n]*?\(default,? `(?:--family-evidence )?(\w+)`", text):
            if m.group(1) != DEFAULT_FAMILY_EVIDENCE:
                bad.append(f"{md.name}: family evidence `{m.group(1)}` stated as the default")
        for m in re.finditer(r"`--jobs` defaults to the cores available, at most\s+(\d+)", text):
            if int(m.group(1)) != config.params.runtime.default_jobs_max:
                bad.append(f"{md.name}: --jobs capped at {m.group(1)}")
        if re.search(r"trained model\W+by\s+default|by\s+default[^.]{0,40}trained model", text):
            bad.append(f"{md.name}: the trained model named as the default family evidence")
    assert not bad, bad


@pytest.mark.parametrize("text", [
    "Family evidence comes from the embedded trained model by default (`--family-evidence trained`; `musicnn` ...",
    "| family evidence, trained presence model (default `trained`; model loading excluded) | 0.42 |",
    "(`--family-evidence musicnn`, the default)",
])
def test_a_stated_default_that_drifts_is_caught(text: str) -> None:
    table = re.findall(r"family[ -]evidence[^|\n]*?\(default,? `(?:--family-evidence )?(\w+)`", text)
    assert [v for v in _stated_values(text, "--family-evidence") + table if v != DEFAULT_FAMILY_EVIDENCE]


def test_the_api_docstrings_state_the_signature_defaults() -> None:
    for func in (api.score_audio, api.score_folder):
        doc = inspect.getdoc(func) or ""
        for name in ("family_evidence", "separation"):
            default = inspect.signature(func).parameters[name].default
            m = re.search(rf"^{name}(?:, [^\n]*)? : [^\n]*\n((?:    [^\n]*\n)+)", doc, re.M)
            if m is None:  # described together with others ("As score_audio")
                assert re.search(rf"^[\w, ]*\b{name}\b[\w, ]*\n    As :func:`score_audio`", doc, re.M), func
                continue
            assert f"(default ``{default}``" in " ".join(m.group(1).split()), (func.__name__, name, m.group(1))
