"""Convert the pretrained musicnn MTT_musicnn checkpoint into timingbench's embedded weights.

Run once, in a throwaway environment that has TensorFlow (never a timingbench
dependency)::

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu
    mkdir -p /tmp/musicnn_pkg && cd /tmp/musicnn_pkg \\
        && pip download --no-deps musicnn==0.1.0 && unzip -o musicnn-0.1.0-py3-none-any.whl
    TF_ENABLE_ONEDNN_OPTS=0 /tmp/tfenv/bin/python tools/convert_musicnn.py \\
        --package-dir /tmp/musicnn_pkg --wheel /tmp/musicnn_pkg/musicnn-0.1.0-py3-none-any.whl

It writes

- ``timingbench/data/musicnn/mtt_musicnn.npz``: the trained variables (float32; the Adam
  slots and step counters of the training checkpoint are dropped), keyed by their
  TensorFlow names with ``/`` replaced by ``.``, plus ``tags`` (the 50 MTT labels);
- ``timingbench/data/musicnn/LICENSE.md``: musicnn's ISC licence, copied verbatim;
- ``timingbench/data/musicnn/PROVENANCE.md``: where the weights came from (hashes);
- ``tests/data/musicnn_reference.npz``: inputs (187 x 96 log-mel patches) and the outputs
  of the *original* TensorFlow graph, imported from the shipped ``.meta`` file with
  ``import_meta_graph`` and restored from the checkpoint, run in TF1-compat graph mode with
  ``is_training=False``. The reimplementation in ``timingbench/models/musicnn.py`` is
  tested against these outputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
N_FRAMES = 187
N_MELS = 96
REFERENCE_SEED = 20260101

#: Tensors of the training graph saved as reference (name in the .meta -> npz key).
REFERENCE_TENSORS = {
    "model/Sigmoid:0": "probs",
    "model/dense_1/BiasAdd:0": "logits",
    "model/concat:0": "frontend",
    "model/concat_1:0": "midend",
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_weights(ckpt_prefix: str) -> dict[str, np.ndarray]:
    """Read the trained variables of a TF1 checkpoint (no Adam slots, no counters).

    Parameters
    ----------
    ckpt_prefix : str
        Checkpoint prefix (musicnn ships ``MTT_musicnn/`` with files ``.index``, ``.data-*``).

    Returns
    -------
    weights : dict of str to np.ndarray
        TensorFlow variable name -> float32 array.
    """
    import tensorflow as tf

    reader = tf.compat.v1.train.NewCheckpointReader(ckpt_prefix)
    out: dict[str, np.ndarray] = {}
    for name in sorted(reader.get_variable_to_shape_map()):
        if "Adam" in name or name.endswith("_power"):
            continue
        out[name] = np.asarray(reader.get_tensor(name), dtype=np.float32)
    return out


def reference_inputs(audio_patches: Path | None = None) -> dict[str, np.ndarray]:
    """Fixed network inputs: seeded random and structured log-mel patches.

    Returns
    -------
    inputs : dict of str to np.ndarray, each shape (n, 187, 96), float32
        ``random``: uniform in [0, 4] (the range of ``log10(10000 x + 1)`` for music);
        ``structured``: horizontal partials, vertical onsets, a smooth noise floor and an
        all-zero (digital silence) patch; ``audio`` (only with ``audio_patches``): log-mel
        patches of rendered music, an ``.npz`` with an array ``patches``.
    """
    rng = np.random.default_rng(REFERENCE_SEED)
    random = rng.uniform(0.0, 4.0, size=(3, N_FRAMES, N_MELS)).astype(np.float32)
    t = np.arange(N_FRAMES)[:, None]
    f = np.arange(N_MELS)[None, :]
    harmonic = np.zeros((N_FRAMES, N_MELS))
    for k, band in enumerate((12, 24, 31, 36, 40)):
        harmonic[:, band] = 3.5 - 0.4 * k
    onsets = np.zeros((N_FRAMES, N_MELS))
    onsets[::23, :] = 3.0
    onsets[1::23, :] = 2.0
    floor = 1.5 * np.exp(-f / 40.0) * (1.0 + 0.2 * np.sin(t / 9.0))
    entrance = np.where(t >= 90, harmonic, 0.0) + 0.3 * floor
    structured = np.stack(
        [harmonic + 0.2 * floor, onsets + floor, floor, entrance, np.zeros((N_FRAMES, N_MELS))]
    ).astype(np.float32)
    out = {"random": random, "structured": structured}
    if audio_patches is not None:
        with np.load(audio_patches) as z:
            out["audio"] = np.asarray(z["patches"], dtype=np.float32)
    return out


def run_tensorflow_graph(
    meta_path: Path, ckpt_prefix: str, batches: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run the original training graph (imported from the .meta) in inference mode.

    The shipped ``.meta`` was written by TensorFlow 1.12; its ``_output_shapes`` hints on
    gradient nodes are inconsistent for current TensorFlow's importer, so those hint
    attributes (and only those) are stripped before ``import_meta_graph``. The forward
    computation is untouched.
    """
    import tensorflow as tf
    from tensorflow.core.protobuf import meta_graph_pb2

    tf.compat.v1.disable_eager_execution()
    meta = meta_graph_pb2.MetaGraphDef()
    meta.ParseFromString(meta_path.read_bytes())
    for node in meta.graph_def.node:
        if "_output_shapes" in node.attr:
            del node.attr["_output_shapes"]
    graph = tf.Graph()
    out: dict[str, np.ndarray] = {}
    with graph.as_default():
        saver = tf.compat.v1.train.import_meta_graph(meta, clear_devices=True)
        x = graph.get_tensor_by_name("model/Placeholder:0")
        is_training = graph.get_tensor_by_name("model/Placeholder_2:0")
        fetch = {key: graph.get_tensor_by_name(name) for name, key in REFERENCE_TENSORS.items()}
        with tf.compat.v1.Session(graph=graph) as sess:
            saver.restore(sess, ckpt_prefix)
            for group, batch in batches.items():
                res = sess.run(fetch, feed_dict={x: batch, is_training: False})
                out[f"{group}/input"] = batch
                for key, val in res.items():
                    arr = np.asarray(val, dtype=np.float32)
                    # intermediate activations of the first patch only (debugging aid)
                    out[f"{group}/{key}"] = arr if key in ("probs", "logits") else arr[:1]
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package-dir", type=Path, required=True,
                   help="folder where the musicnn 0.1.0 wheel was unpacked")
    p.add_argument("--wheel", type=Path, default=None, help="the downloaded wheel (for its hash)")
    p.add_argument("--model", default="MTT_musicnn")
    p.add_argument("--out-dir", type=Path, default=REPO / "timingbench" / "data" / "musicnn")
    p.add_argument("--reference", type=Path, default=REPO / "tests" / "data" / "musicnn_reference.npz")
    p.add_argument("--audio-patches", type=Path, default=None,
                   help="optional .npz with 'patches' (n, 187, 96) of real log-mel input")
    args = p.parse_args(argv)

    pkg = args.package_dir / "musicnn"
    model_dir = pkg / args.model
    ckpt_prefix = str(model_dir) + "/"
    weights = read_weights(ckpt_prefix)
    n_params = int(sum(w.size for w in weights.values()))
    print(f"{len(weights)} variables, {n_params} weights")

    tags = _mtt_labels(pkg / "configuration.py")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    npz_path = args.out_dir / "mtt_musicnn.npz"
    arrays: dict[str, Any] = {k.replace("/", "."): v for k, v in weights.items()}
    arrays["tags"] = np.asarray(tags)
    np.savez_compressed(npz_path, **arrays)

    lic = next(args.package_dir.glob("musicnn-*.dist-info/LICENSE*"))
    shutil.copyfile(lic, args.out_dir / "LICENSE.md")

    files = {
        f"musicnn/{args.model}/{f.name}": _sha256(f)
        for f in sorted(model_dir.iterdir())
        if f.is_file()
    }
    wheel_line = f"- wheel `{args.wheel.name}` sha256 `{_sha256(args.wheel)}`\n" if args.wheel else ""
    config = json.loads((model_dir / "config.json").read_text())
    result = " ".join((model_dir / "experiment.result").read_text().split())
    (args.out_dir / "PROVENANCE.md").write_text(
        "# musicnn MTT_musicnn weights: provenance\n\n"
        "Source: the `musicnn` 0.1.0 package on PyPI (Jordi Pons, Xavier Serra, Music "
        "Technology Group, Universitat Pompeu Fabra; ISC licence, see LICENSE.md), model "
        f"`{args.model}` trained on MagnaTagATune ({result}).\n\n"
        f"{wheel_line}"
        + "".join(f"- `{k}` sha256 `{v}`\n" for k, v in files.items())
        + f"\nConverted by `tools/convert_musicnn.py` with TensorFlow "
        f"{_tf_version()} (`tf.compat.v1.train.NewCheckpointReader`): {len(weights)} trained "
        f"variables, {n_params} weights, stored as float32 in `mtt_musicnn.npz` (sha256 "
        f"`{_sha256(npz_path)}`). Adam slots and step counters of the training checkpoint are "
        "not kept. Training input (from the model's config.json): "
        f"{config['audio_rep']['resample_sr']} Hz, n_fft {config['audio_rep']['n_fft']}, hop "
        f"{config['audio_rep']['hop']}, {config['audio_rep']['n_mels']} mel bands, "
        f"pre-processing `{config['pre_processing']}` (log10(10000 x + 1)), "
        f"{config['n_frames']}-frame patches.\n"
    )

    ref = run_tensorflow_graph(model_dir / ".meta", ckpt_prefix, reference_inputs(args.audio_patches))
    ref["tags"] = np.asarray(tags)
    args.reference.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.reference, **ref)
    print(f"wrote {npz_path} ({npz_path.stat().st_size} bytes) and {args.reference}")
    return 0


def _tf_version() -> str:
    import tensorflow as tf

    return str(tf.__version__)


def _mtt_labels(configuration_py: Path) -> list[str]:
    namespace: dict[str, Any] = {}
    exec(compile(configuration_py.read_text(), str(configuration_py), "exec"), namespace)
    return list(namespace["MTT_LABELS"])


if __name__ == "__main__":
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    raise SystemExit(main())
