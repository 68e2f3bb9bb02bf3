"""``timingbench models``: fetch through a loopback stand-in of the hosts, verify, list, offline.

The stand-in (``hub_stub_server``) serves random-initialised models saved in the real
formats: a small HTDemucs package (``torch.save`` of klass/args/kwargs/state, as demucs
writes them) and a small ``transformers`` CLAP checkpoint with its processor files.
"""

from __future__ import annotations

import hashlib
import json
import socket
import time
import warnings
from pathlib import Path

import pytest
from hub_stub_server import Hub, serving

import timingbench.features.separation as sep
from timingbench.cli import main
from timingbench.config import load_config
from timingbench.errors import ModelUnavailableError
from timingbench.model_registry import (
    DEMUCS_HOST,
    fetch_clap,
    fetch_demucs,
    list_models,
    verify_clap,
)

SIGS = {"htdemucs": "955717e8", "htdemucs_6s": "5c90dfd2"}
SOURCES = {"htdemucs": ["drums", "bass", "other", "vocals"],
           "htdemucs_6s": ["drums", "bass", "other", "vocals", "guitar", "piano"]}


def _tiny_demucs_package(sources: list[str]) -> dict:
    import torch
    from demucs.htdemucs import HTDemucs

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HTDemucs(sources=sources, samplerate=8000, segment=1.0, channels=8, depth=2, nfft=256,
                         t_layers=1, t_heads=1, bottom_channels=0, dconv_depth=1, dconv_comp=4,
                         t_hidden_scale=1.0)
    args, kwargs = model._init_args_kwargs
    return {"klass": type(model), "args": args, "kwargs": kwargs, "state": model.state_dict()}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The demucs download tree: one tiny package per bag, named <sig>-<sha256 prefix>.th."""
    import torch

    root = tmp_path_factory.mktemp("host")
    folder = root / "hybrid_transformer"
    folder.mkdir()
    urls = {}
    for name, sig in SIGS.items():
        tmp = folder / "tmp.th"
        torch.save(_tiny_demucs_package(SOURCES[name]), tmp)
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:8]
        fname = f"{sig}-{digest}.th"
        tmp.rename(folder / fname)
        urls[sig] = f"{DEMUCS_HOST}hybrid_transformer/{fname}"
    return {"root": root, "urls": urls}


@pytest.fixture
def demucs_table(host: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """demucs's own URL table (``remote/files.txt``) naming the stand-in files; an empty torch hub cache."""
    import demucs.pretrained

    monkeypatch.setattr(demucs.pretrained, "_parse_remote_files", lambda path: dict(host["urls"]))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    sep._load_cached.cache_clear()
    yield tmp_path / "torch" / "hub" / "checkpoints"
    sep._load_cached.cache_clear()


def _tiny_clap(d: Path) -> None:
    import torch
    from transformers import (
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapProcessor,
        RobertaTokenizer,
    )

    d.mkdir(parents=True, exist_ok=True)
    chars = list("abcdefghijklmnopqrstuvwxyz,")
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", "<mask>", *chars,
                                         *("\u0120" + c for c in chars)])}
    (d / "vocab.json").write_text(json.dumps(vocab))
    (d / "merges.txt").write_text("#version: 0.2\n")
    tok = RobertaTokenizer(str(d / "vocab.json"), str(d / "merges.txt"))
    ClapProcessor(feature_extractor=ClapFeatureExtractor(truncation="rand_trunc", padding="repeatpad"),
                  tokenizer=tok).save_pretrained(d)
    torch.manual_seed(0)
    cfg = ClapConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 16, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "intermediate_size": 16,
                     "max_position_embeddings": 96, "pad_token_id": 1},
        audio_config={"patch_embeds_hidden_size": 8, "depths": [1, 1], "num_attention_heads": [1, 1],
                      "hidden_size": 16},
        projection_dim=8,
    )
    ClapModel(cfg).eval().save_pretrained(d)
    (d / "README.md").write_text("model card\n")


@pytest.fixture(scope="module")
def clap_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("clap_repo")
    _tiny_clap(d)
    return d


# ------------------------------------------------------------------ demucs


def test_fetch_htdemucs_into_the_torch_hub_cache_then_list_and_verify(
    host: dict, demucs_table: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert sep.find_demucs_weights("htdemucs", repo=None) is None
    hub = Hub(host["root"], {})
    with serving(hub) as url:
        assert main(["models", "fetch", "htdemucs", "--mirror", f"{url}/files/"]) == 0
        assert sep.find_demucs_weights("htdemucs", repo=None) == ("hub", demucs_table)
        n = len(hub.requests)
        assert main(["models", "fetch", "htdemucs", "--mirror", f"{url}/files/"]) == 0
        assert len(hub.requests) == n  # present and matching its checksum: nothing downloaded
    fname = host["urls"][SIGS["htdemucs"]].rsplit("/", 1)[-1]
    assert (demucs_table / fname).read_bytes() == (host["root"] / "hybrid_transformer" / fname).read_bytes()
    assert f"fetched into {demucs_table}" in capsys.readouterr().out
    rows = {r.name: r for r in list_models()}
    assert rows["htdemucs"].present and rows["htdemucs"].size_bytes == (demucs_table / fname).stat().st_size
    assert not rows["htdemucs_6s"].present and rows["htdemucs"].licence.startswith("MIT")
    assert sep.resolve("auto", cfg=load_config()).backend == "demucs"
    assert main(["models", "verify"]) == 0
    assert "htdemucs: ok, separated 1 s into drums, bass, other, vocals" in capsys.readouterr().out


def test_fetch_into_a_demucs_repo_folder(host: dict, demucs_table: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "models"
    with serving(Hub(host["root"], {})) as url:
        assert main(["models", "fetch", "htdemucs_6s", "htdemucs", "--dir", str(repo),
                     "--mirror", f"{url}/files/"]) == 0
    assert (repo / "htdemucs_6s.yaml").is_file() and (repo / "htdemucs.yaml").is_file()
    assert sep.find_demucs_weights("htdemucs_6s", repo=repo) == ("repo", repo)
    assert f"--demucs-repo {repo}" in capsys.readouterr().out
    assert main(["models", "verify", "htdemucs_6s", "--demucs-repo", str(repo)]) == 0
    assert "guitar, piano" in capsys.readouterr().out
    assert main(["models", "list", "--json", "--demucs-repo", str(repo)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["htdemucs_6s"]["present"] and rows["htdemucs_6s"]["where"] == str(repo)


def test_a_file_that_does_not_match_its_checksum_is_refused(host: dict, demucs_table: Path, tmp_path: Path) -> None:
    fname = host["urls"][SIGS["htdemucs"]].rsplit("/", 1)[-1]
    hub = Hub(host["root"], {})
    hub.tamper[f"/files/hybrid_transformer/{fname}"] = b"not the published weights"
    with serving(hub) as url:
        for dest in (None, tmp_path / "repo"):
            with pytest.raises(ModelUnavailableError, match="hash"):
                fetch_demucs("htdemucs", dest=dest, mirror=f"{url}/files/")
            folder = dest if dest is not None else demucs_table
            assert not (folder / fname).exists() and not list(folder.glob("*.partial"))
    # a damaged file already in place is named, not trusted
    demucs_table.mkdir(parents=True, exist_ok=True)
    (demucs_table / fname).write_bytes(b"damaged")
    with pytest.raises(ModelUnavailableError, match=f"{fname}: checksum .* does not match the published"):
        fetch_demucs("htdemucs", mirror="http://127.0.0.1:9/")


# ------------------------------------------------------------------ clap


def test_fetch_clap_snapshot_checks_hashes_and_verifies(clap_repo: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    hub = Hub(tmp_path, {"laion/larger_clap_music": clap_repo})
    dest = tmp_path / "clap"
    with serving(hub) as url:
        assert main(["models", "fetch", "clap", "--clap-dir", str(dest), "--mirror", url]) == 0
    assert f"--clap-dir {dest}" in capsys.readouterr().out
    for name in ("config.json", "model.safetensors", "processor_config.json", "vocab.json", "merges.txt"):
        assert (dest / name).read_bytes() == (clap_repo / name).read_bytes(), name
    assert not (dest / "README.md").exists()
    src = json.loads((dest / "timingbench-source.json").read_text())
    assert src["repo_id"] == "laion/larger_clap_music" and len(src["revision"]) == 40
    assert "clap: ok, embedded 1 s of audio" in verify_clap(dest)
    row = next(r for r in list_models(clap_dir=dest) if r.name == "clap")
    assert row.present and row.size_bytes >= (clap_repo / "model.safetensors").stat().st_size


def test_fetch_clap_refuses_a_file_that_differs_from_the_listing(clap_repo: Path, tmp_path: Path) -> None:
    hub = Hub(tmp_path, {"laion/larger_clap_music": clap_repo})
    with serving(hub) as url:
        hub.tamper = {f"/laion/larger_clap_music/resolve/{'0123456789abcdef' * 2}01234567/model.safetensors": b"x" * 64}
        with pytest.raises(ModelUnavailableError, match="sha256 does not match"):
            fetch_clap(dest=tmp_path / "clap", mirror=url)
        with pytest.raises(ModelUnavailableError, match="HTTP 404"):
            fetch_clap("laion/no-such-model", dest=tmp_path / "none", mirror=url)
    assert not (tmp_path / "clap" / "model.safetensors").exists()


# ------------------------------------------------------------------ offline


def test_offline_each_fetch_fails_at_once_naming_url_and_folder(
    host: dict, demucs_table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def blocked(self, *a, **k):
        raise OSError("network is blocked")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket.socket, "connect_ex", blocked)
    t0 = time.perf_counter()
    rc = main(["models", "fetch", "htdemucs", "clap", "--clap-dir", str(tmp_path / "c")])
    assert rc == 1 and time.perf_counter() - t0 < 5.0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert host["urls"][SIGS["htdemucs"]] in lines[0] and f"into {demucs_table}" in lines[0]
    assert "https://huggingface.co/api/models/laion/larger_clap_music" in lines[1]
    assert f"into {tmp_path / 'c'}" in lines[1]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="HF_HUB_OFFLINE"):
        fetch_clap(dest=tmp_path / "c")


def test_verify_with_nothing_present_says_what_to_do(demucs_table: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "verify", "--clap-dir", str(tmp_path / "none")]) == 1
    assert "timingbench models fetch" in capsys.readouterr().err
    assert main(["models", "verify", "htdemucs"]) == 1
    assert "htdemucs: not present" in capsys.readouterr().err
