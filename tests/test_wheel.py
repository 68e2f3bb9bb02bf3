"""The wheel works outside the repository: package data, the default config, `timingbench score`.

The wheel is built offline from a copy of the source (``pip wheel --no-build-isolation``),
installed into a fresh venv outside the repository whose only other packages are those of
the running interpreter (a ``.pth`` line naming its site-packages, so torch and numpy are not
installed again; a path line, so the repository's editable-install hook is not run), and
``timingbench score`` is run there from a folder outside the repository, with no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from timingbench.cli import main

REPO = Path(__file__).resolve().parent.parent
#: Package data that must come from the files docs/formats.md names in the repository, byte for byte.
PACKAGED = {
    "timingbench/data/configs/timingbench-v1.yaml": REPO / "configs" / "timingbench-v1.yaml",
    "timingbench/data/prompts/timingbench-v1.jsonl": REPO / "prompts" / "timingbench-v1.jsonl",
    "timingbench/data/label/index.html": REPO / "timingbench" / "data" / "label" / "index.html",
    "timingbench/data/label/app.js": REPO / "timingbench" / "data" / "label" / "app.js",
    "timingbench/data/label/style.css": REPO / "timingbench" / "data" / "label" / "style.css",
}


def test_packaged_config_and_prompts_are_links_to_the_spec_paths():
    for inside, spec_path in PACKAGED.items():
        p = REPO / inside
        assert p.is_file(), p
        assert p.resolve() == spec_path.resolve(), f"{p} must be (a link to) {spec_path}"
    from timingbench.config import DEFAULT_CONFIG_PATH
    from timingbench.packaged import DEFAULT_PROMPTS_PATH, LABEL_ASSETS

    # in the repository the packaged paths are the documented paths (summary.json records the config's)
    assert DEFAULT_CONFIG_PATH == (REPO / "configs" / "timingbench-v1.yaml").resolve()
    assert DEFAULT_PROMPTS_PATH == (REPO / "prompts" / "timingbench-v1.jsonl").resolve()
    assert DEFAULT_PROMPTS_PATH.read_bytes() == (REPO / "prompts" / "timingbench-v1.jsonl").read_bytes()
    assert (LABEL_ASSETS / "index.html").read_bytes().startswith(b"<!doctype html>")


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert res.returncode == 0, f"{cmd}: exit {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    return res


def _source_copy(root: Path) -> Path:
    """What a build needs, copied with the links as links (the working tree stays clean)."""
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("configs", "prompts"):
        shutil.copytree(REPO / name, src / name)
    shutil.copytree(REPO / "timingbench", src / "timingbench", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert (src / "timingbench" / "data" / "configs" / "timingbench-v1.yaml").is_symlink()
    return src


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline from a copy of the sources."""
    root = tmp_path_factory.mktemp("wheel")
    src = _source_copy(root)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-q", "-w", str(root / "dist"), str(src)], cwd=root, env=env)
    (whl,) = (root / "dist").glob("timingbench-*.whl")
    return whl


def test_sdist_carries_the_files_not_the_links(tmp_path):
    """`python -m build` goes through an sdist: it must hold the files, since it has no configs/."""
    import tarfile

    src = _source_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path / 'sdist')!r}))"
    name = _run([sys.executable, "-c", code], cwd=src, env=env).stdout.strip().splitlines()[-1]
    with tarfile.open(tmp_path / "sdist" / name) as tar:
        for inside, spec_path in PACKAGED.items():
            member = tar.getmember(f"{name.removesuffix('.tar.gz')}/{inside}")
            assert member.isfile(), f"{inside} is not a regular file in the sdist"
            fh = tar.extractfile(member)
            assert fh is not None and fh.read() == spec_path.read_bytes()


def test_wheel_holds_the_package_data(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for inside, spec_path in PACKAGED.items():
            assert inside in names, f"{inside} missing from {wheel.name}"
            assert z.read(inside) == spec_path.read_bytes(), f"{inside} differs from {spec_path}"
        assert "timingbench/data/evidence/family_evidence.pt" in names
        for name in ("mn04_as_mAP_432.pt", "LICENSE", "class_labels_indices.csv", "PROVENANCE.md"):
            inside = f"timingbench/data/tagger/{name}"
            assert z.read(inside) == (REPO / inside).read_bytes(), f"{inside} missing from {wheel.name} or differs"
        entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "timingbench = timingbench.cli:main" in z.read(entry).decode()


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv outside the repository with the wheel installed (dependencies borrowed)."""
    root = tmp_path_factory.mktemp("venv")
    env_dir = root / "env"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=root, env=clean)
    py = env_dir / "bin" / "python"
    purelib = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=root, env=clean).stdout.strip())
    # path lines only: the dependencies' folders, without running their .pth hooks
    dirs = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    borrowed = [p for p in dirs if Path(p).is_dir() and Path(p) != purelib]
    (purelib / "_timingbench_test_deps.pth").write_text("".join(p + "\n" for p in borrowed))
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q",
          str(wheel)], cwd=root, env=clean)
    return env_dir


def test_installed_wheel_reads_its_own_package_data(venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    code = (
        "import json, timingbench; from timingbench.config import DEFAULT_CONFIG_PATH as c; "
        "from timingbench.packaged import DEFAULT_PROMPTS_PATH as p, LABEL_ASSETS as a; "
        "print(json.dumps([timingbench.__file__, str(c), c.is_symlink(), str(p), "
        "len(timingbench.load_prompts().prompts), timingbench.load_config().content_hash, "
        "len((a / 'app.js').read_bytes())]))"
    )
    out = json.loads(_run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, env=env).stdout)
    init, cfg_path, is_link, prompts_path, n_prompts, cfg_hash, app_js = out
    for p in (init, cfg_path, prompts_path):
        assert Path(p).is_relative_to(venv) and not Path(p).is_relative_to(REPO), p
    assert not is_link and n_prompts == 250
    from timingbench.config import load_config

    assert cfg_hash == load_config().content_hash
    assert app_js == (REPO / "timingbench" / "data" / "label" / "app.js").stat().st_size


def test_timingbench_score_runs_outside_the_repository(venv, tmp_path):
    from timingbench.render import render_recipe

    work = tmp_path / "work"
    rows = [render_recipe("silence_then_start", seed=3201, out_dir=work, duration_s=10.0).prompt,
            render_recipe("tempo_click", seed=3202, out_dir=work, duration_s=10.0).prompt]
    (work / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    res = _run([str(venv / "bin" / "timingbench"), "score", "clips", "--prompts", "prompts.jsonl",
                "--out", "results", "--separation", "dsp"], cwd=work, env=env, timeout=300)
    assert "wrote results/events.jsonl" in res.stdout
    summary = json.loads((work / "results" / "summary.json").read_text())
    assert summary["counts"]["scored_clips"] == 2
    # the installed package scores exactly as the repository does
    assert main(["score", str(work / "clips"), "--prompts", str(work / "prompts.jsonl"), "--out",
                 str(tmp_path / "repo"), "--separation", "dsp", "--cache", str(tmp_path / "cache")]) == 0
    for name in ("events.jsonl", "clips.jsonl"):
        assert (work / "results" / name).read_bytes() == (tmp_path / "repo" / name).read_bytes()
    events = [json.loads(x) for x in (work / "results" / "events.jsonl").read_text().splitlines()]
    assert [e["outcome"] for e in events] == ["on_time"]
