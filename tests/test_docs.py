"""The docs a reader follows: every relative link resolves, every citation is listed in
docs/references.md, docs/index.md lists every doc, and what the docs state about defaults
and judged families is what the configuration and the command line say."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from timingbench.cli import build_parser
from timingbench.config import Config
from timingbench.prompts import EVENT_FAMILIES
from timingbench.summary import MIX_FAMILY, identity_exempt_families

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKDOWN = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
CITING = [*sorted((ROOT / "timingbench").rglob("*.py")), *MARKDOWN, *sorted((ROOT / "configs").glob("*.yaml"))]
#: Files owned by the family-evidence work that still say "SPEC section 1" (one rename when it lands).
SPEC_NOT_YET_RENAMED: set[str] = set()
PAPERS = ("TimingBench", "TAG-Bench", "MGBench", "AudioRAG")
#: Modules and docs of another benchmark: there, "paper" means that benchmark's paper.
AREAS = (("suites/tag", "TAG-Bench"), ("commands/tag", "TAG-Bench"), ("docs/tag.md", "TAG-Bench"),
         ("suites/mgbench", "MGBench"), ("mgbench_gen", "MGBench"), ("commands/mgbench", "MGBench"),
         ("docs/mgbench.md", "MGBench"), ("suites/audiorag", "AudioRAG"), ("commands/audiorag", "AudioRAG"),
         ("docs/audiorag.md", "AudioRAG"))
CITATION = re.compile(r"\b(Sec\.|Table|Fig\.)\s?([IVX]+(?:-[A-F])?|\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?)\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(md: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def broken_links(files: list[Path], root: Path) -> list[str]:
    """Relative links of ``files`` whose file is not inside ``root`` or whose heading is missing."""
    bad = []
    for md in files:
        text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not ours to check
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md.resolve()
            if not dest.exists() or root not in (dest, *dest.parents):
                bad.append(f"{md.name}: {target} (no such file in the repository)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{md.name}: {target} (no heading #{anchor} in {dest.name})")
    return bad


def test_every_relative_link_resolves_inside_the_repository() -> None:
    bad = broken_links(MARKDOWN, ROOT)
    assert not bad, "\n".join(bad)


def test_the_link_check_catches_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Some `heading` (here)\n", encoding="utf-8")
    a = tmp_path / "docs" / "a.md"
    a.write_text("[ok](b.md#some-heading-here) [gone](c.md) [anchor](b.md#nope) [out](../../x.md) "
                 "[web](https://example.org)\n```\n[in code](nowhere.md)\n```\n", encoding="utf-8")
    (tmp_path.parent / "x.md").write_text("x", encoding="utf-8")
    assert broken_links([a], tmp_path) == ["a.md: c.md (no such file in the repository)",
                                           "a.md: b.md#nope (no heading #nope in b.md)",
                                           "a.md: ../../x.md (no such file in the repository)"]


def _references() -> dict[str, set[str]]:
    """Paper -> the citations docs/references.md lists for it (``Sec. IV-B``, ``Table 2``)."""
    out: dict[str, set[str]] = {}
    paper = None
    for line in (DOCS / "references.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            paper = line[3:].strip()
            out[paper] = set()
        elif paper in PAPERS:
            for kind, sec in re.findall(r"\*\*(Sec\.|Table|Fig\.) ([^*]+)\*\*", line):
                out[paper].add(f"{kind} {sec}")
    return out


def citations() -> list[tuple[str, str, str]]:
    """(paper, citation, file:line) of every paper citation in the code, docs and configuration.

    The paper is the one named last before the citation in its paragraph (a possessive
    counts); else the TimingBench paper for Roman numbers; else the benchmark whose module or
    doc the file is; else the TimingBench paper. Lines citing other works (``IEEE``,
    ``et al.``) are skipped.
    """
    out = []
    for f in CITING:
        rel = _rel(f)
        if rel == "docs/references.md":
            continue  # the list itself
        area = next((p for a, p in AREAS if a in rel), None)
        named: str | None = None
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                named = None  # a paragraph ends
                continue
            if "IEEE" in line or "et al" in line:
                continue
            names = [(m.start(), m.group(0)) for m in re.finditer("|".join(map(re.escape, PAPERS)), line)]
            for m in CITATION.finditer(line):
                before = [p for pos, p in names if pos < m.start()]
                who = before[-1] if before else named
                kind, sec = m.groups()
                roman = re.fullmatch(r"[IVX]+(-[A-F])?", sec) is not None
                paper = who or ("TimingBench" if roman else area or "TimingBench")
                for part in sec.split("-") if "." in sec and "-" in sec else [sec]:
                    out.append((paper, f"{kind} {part}", f"{rel}:{n}"))
            if names:
                named = names[-1][1]
    return out


def test_every_paper_citation_is_listed_in_the_references() -> None:
    refs = _references()
    assert set(refs) >= set(PAPERS)
    missing = [f"{where}: {paper} {cite}" for paper, cite, where in citations() if cite not in refs[paper]]
    assert not missing, "not in docs/references.md:\n" + "\n".join(missing)


def test_the_citation_check_sees_the_usual_forms() -> None:
    found = {(p, c) for p, c, _ in citations()}
    assert ("TimingBench", "Sec. IV-B") in found and ("TimingBench", "Table II") in found
    assert ("MGBench", "Table 3") in found and ("TAG-Bench", "Sec. 4.2") in found
    assert ("AudioRAG", "Sec. 4.4") in found


def test_no_doc_or_module_points_to_a_file_outside_the_repository() -> None:
    bad = []
    for f in [*CITING, *sorted((ROOT / "tests").glob("*.py")), ROOT / "pyproject.toml", ROOT / "Makefile"]:
        rel = _rel(f)
        if f == Path(__file__).resolve():
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bSPEC\b", line) and rel not in SPEC_NOT_YET_RENAMED:
                bad.append(f"{rel}:{n}: {line.strip()} (cite formats §N, docs/formats.md)")
            if re.search(r"SPEC\.md|DESIGN\.md|STYLE\.md|/work/shared", line):
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_formats_sections_cited_exist() -> None:
    headings = {int(m) for m in re.findall(r"^## §(\d+) ", (DOCS / "formats.md").read_text(encoding="utf-8"), re.M)}
    cited = set()
    for f in CITING:
        cited |= {int(m) for m in re.findall(r"formats(?:\.md)? §(\d+)", f.read_text(encoding="utf-8"))}
    assert cited and cited <= headings, sorted(cited - headings)


def test_the_index_lists_every_doc() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {(DOCS / t.partition("#")[0]).resolve() for t in LINK.findall(index)}
    docs = {p.resolve() for p in DOCS.glob("*.md") if p.name != "index.md"}
    assert docs - linked == set(), sorted(p.name for p in docs - linked)


def _score_default(option: str) -> str:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    act = next(a for a in sub.choices["score"]._actions if option in a.option_strings)
    return str(act.default)


def _stated(pattern: str, text: str) -> list[str]:
    m = re.search(pattern, re.sub(r"<!--.*?-->", "", text))
    assert m is not None, pattern
    words = [w.strip(" `.") for w in m.group(1).split(",")]
    return [] if words == ["none"] else words


def test_the_defaults_and_families_the_docs_state_are_the_configs(config: Config) -> None:
    scoring = (DOCS / "scoring.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Default backends: separation `(\w+)`, family evidence `(\w+)`", scoring)
    assert m is not None
    assert (m.group(1), m.group(2)) == (_score_default("--separation"), _score_default("--family-evidence"))
    exempt = identity_exempt_families(config, m.group(2))
    judged = [f for f in EVENT_FAMILIES if f != MIX_FAMILY and f not in exempt]
    assert _stated(r"Judged families \(tagger evidence\): ([^\n]+)", scoring) == judged
    assert _stated(r"Exempt families \(tagger evidence\): ([^\n]+)", scoring) == [
        f for f in EVENT_FAMILIES if f in exempt]
    # the README says it in prose: "Four families are judged: a, b, c, d. The other seven (x, ...)"
    assert _stated(r"families are judged: ([^.]+)\.", readme) == judged
    assert _stated(r"The\s+other \w+ \(([^)]+)\)\s+are", readme) == [f for f in EVENT_FAMILIES if f in exempt]
    assert f"(`--family-evidence {m.group(2)}`, the default)" in readme


@pytest.mark.parametrize("text", ["Judged families (tagger evidence): percussion, bass.\n"])
def test_a_stated_list_that_drifts_is_caught(text: str, config: Config) -> None:
    exempt = identity_exempt_families(config, "tagger")
    judged = [f for f in EVENT_FAMILIES if f != MIX_FAMILY and f not in exempt]
    assert _stated(r"Judged families \(tagger evidence\): ([^\n]+)", text) != judged
