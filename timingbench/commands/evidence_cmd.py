"""``timingbench evidence make-data | train | eval``: the trained family evidence model."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from timingbench.choices import FAMILY_EVIDENCE_BACKENDS
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.evidence.programs import CHOIR_FAMILIES, DEFAULT_CHOIR_FAMILY


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``evidence`` command and its subcommands."""
    p = sub.add_parser("evidence", help="the trained family evidence model: make data, train, evaluate",
                       description="Build, train and evaluate the family evidence model (docs/evidence-model.md).")
    ev = p.add_subparsers(dest="evidence_command", metavar="SUBCOMMAND")

    m = ev.add_parser("make-data", help="render labelled multitrack training/test clips",
                      description="Render seeded multitrack layouts with several soundfonts and real audio "
                                  "effects; store log-mels and frame labels as shards in --out (resumable).")
    m.add_argument("--out", required=True, type=Path, help="data set folder")
    m.add_argument("--n", type=int, default=2048, help="number of clips (default 2048)")
    m.add_argument("--seed", type=int, default=1, help="data set seed (default 1)")
    m.add_argument("--soundfont", action="append", type=Path, default=None,
                   help="soundfont to render with (repeatable; default: the four training soundfonts)")
    m.add_argument("--test", action="store_true",
                   help="a test set: no effects, real singing only from vocadito's test part (before "
                        "evidence.vocadito_train_from_s); the only way to use MuseScore General")
    m.add_argument("--choir-family", choices=CHOIR_FAMILIES, default=DEFAULT_CHOIR_FAMILY,
                   help="family of GM choir aahs / voice oohs (52, 53), sampled voices without words "
                        f"(default {DEFAULT_CHOIR_FAMILY}; decide on dev figures)")
    m.add_argument("--config", type=Path, default=None, help="configuration YAML")
    m.set_defaults(func=run_make_data)

    t = ev.add_parser("train", help="train the network from data sets (seeded)",
                      description="Train the family evidence network on --data, select the epoch on --dev, "
                                  "and write the weights file with its training curve.")
    t.add_argument("--data", required=True, type=Path, action="append", help="training data folder (repeatable)")
    t.add_argument("--dev", required=True, type=Path, help="dev data folder (training soundfonts, other seed)")
    t.add_argument("--out", required=True, type=Path, help="weights file to write (.pt)")
    t.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    t.add_argument("--epochs", type=int, default=24, help="epochs (default 24, the shipped weights)")
    t.add_argument("--batch", type=int, default=24, help="batch size (default 24)")
    t.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (default 2e-3)")
    t.add_argument("--change-weight", type=float, default=1.0,
                   help="weight of the change head's loss (0 trains presence only; default 1)")
    t.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    t.add_argument("--limit", type=int, default=None, help="use only the first N training clips")
    t.add_argument("--config", type=Path, default=None, help="configuration YAML")
    t.set_defaults(func=run_train)

    e = ev.add_parser("eval", help="per-family entrance/exit AUCs on a labelled data set",
                      description="AUC of true entrances (exits) against decoy entrances of other families "
                                  "and against pre-existing targets, per family and design.")
    what = e.add_mutually_exclusive_group(required=True)
    what.add_argument("--data", type=Path, help="labelled data folder (from make-data)")
    what.add_argument("--annotations", type=Path, help="annotation JSONL of a corpus (with --clips)")
    e.add_argument("--clips", type=Path, default=None, help="clips folder of --annotations")
    e.add_argument("--prompts", type=Path, default=None, help="prompt set of --annotations (default: beside the clips)")
    e.add_argument("--family-evidence", choices=FAMILY_EVIDENCE_BACKENDS, action="append", default=None,
                   help="backend(s) to evaluate on --annotations (repeatable; default trained)")
    e.add_argument("--cache", default=None, help="feature cache folder (with --annotations)")
    e.add_argument("--weights", type=Path, action="append", default=None,
                   help="weights file (repeatable, NAME=PATH allowed; default: the shipped weights)")
    e.add_argument("--out", type=Path, default=None, help="write the report JSON here")
    e.add_argument("--config", type=Path, default=None, help="configuration YAML")
    e.set_defaults(func=run_eval)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_make_data(args: argparse.Namespace) -> int:
    """Render a data set."""
    from timingbench.evidence.dataset import HELD_OUT_SOUNDFONT, TRAIN_SOUNDFONTS, make_dataset

    cfg = load_config(args.config)
    fonts = [str(s) for s in args.soundfont] if args.soundfont else \
        ([HELD_OUT_SOUNDFONT] if args.test else list(TRAIN_SOUNDFONTS))
    man = make_dataset(args.out, cfg=cfg, n_clips=args.n, seed=args.seed, soundfonts=fonts,
                       augment=not args.test, allow_held_out=args.test, choir_family=args.choir_family)
    print(f"wrote {man['n_clips']} clips to {args.out} (recipe {man['recipe']}, choirs: "
          f"{man['params']['choir_family']}, soundfonts: {', '.join(Path(s).name for s in fonts)})")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """Train and write the weights file."""
    import numpy as np

    from timingbench.evidence.dataset import load_dataset, training_sources
    from timingbench.evidence.model import save_weights
    from timingbench.evidence.train import TrainParams, train_model

    cfg = load_config(args.config)
    mels, labs = [], []
    sources = training_sources([*args.data, args.dev])
    for folder in args.data:
        m, lab, _ = load_dataset(folder)
        mels.append(m)
        labs.append(lab)
    xm, xl = np.concatenate(mels), np.concatenate(labs)
    if args.limit:
        xm, xl = xm[: args.limit], xl[: args.limit]
    dm, dl, _ = load_dataset(args.dev)
    print(f"training on {len(xm)} clips, selecting on {len(dm)} dev clips", file=sys.stderr)
    params = TrainParams(epochs=args.epochs, batch=args.batch, lr=args.lr, change_weight=args.change_weight,
                         seed=args.seed, threads=args.threads)
    model, curve = train_model((xm, xl), (dm, dl), cfg=cfg, params=params)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"licence": "MIT (timingbench); trained only on renders of the Debian GM soundfonts listed in "
                       "data and on vocadito (CC BY 4.0)",
            "train_params": params.__dict__, "recipe": sources[0]["recipe"], "data": sources, "curve": curve,
            "config_version": cfg.version}
    save_weights(model, args.out, meta=meta)
    from timingbench.evidence.infer import reference_outputs
    from timingbench.jsonio import write_json

    write_json(args.out.with_suffix(".reference.json"), reference_outputs(args.out))
    print(f"wrote {args.out} (best epoch {curve.get('best_epoch')}, {curve['parameters']} parameters)")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Print (and optionally write) the per-family AUC table."""
    from timingbench.evidence.dataset import load_dataset, read_manifest
    from timingbench.evidence.evaluate import evaluate_dataset
    from timingbench.evidence.infer import WEIGHTS
    from timingbench.evidence.metrics import format_table
    from timingbench.evidence.model import load_weights
    from timingbench.jsonio import write_json

    cfg = load_config(args.config)
    if args.annotations is not None:
        return _eval_corpus(args, cfg)
    models = {}
    for item in args.weights or [WEIGHTS]:
        text = str(item)
        name, _, path = text.partition("=") if "=" in text else (Path(text).stem, "", text)
        try:
            models[name], _ = load_weights(Path(path))
        except (OSError, ValueError, RuntimeError) as exc:
            raise ParameterError(f"{path}: cannot load weights ({exc})") from None
    logmel, labels, meta = load_dataset(args.data)
    report = evaluate_dataset(models, logmel, labels, meta, cfg)
    man = read_manifest(args.data, for_training=False)
    report["data"] = str(args.data)
    report["recipe"] = {"recipe": man["recipe"], "params": man.get("params", {}),
                        "real_vocals_part": man.get("real_vocals_part")}
    print(f"data recipe {man['recipe']}, choirs: {man.get('params', {}).get('choir_family', 'vocals')}")
    print(format_table(report["tables"]))
    print("probes: " + ", ".join(f"{k} {v}" for k, v in sorted(report["n_probes"].items())))
    for name, fa in report["frame_presence_auc"].items():
        print(f"frame-level presence AUC ({name}): macro {fa['macro']}; "
              + ", ".join(f"{f} {v}" for f, v in fa["families"].items()))
    if args.out is not None:
        write_json(args.out, report)
        print(f"wrote {args.out}")
    return 0


def _eval_corpus(args: argparse.Namespace, cfg: Any) -> int:
    from timingbench.calibration.evidence_auc import evaluate_corpus
    from timingbench.evidence.metrics import format_table
    from timingbench.jsonio import write_json

    if args.clips is None:
        raise ParameterError("--annotations needs --clips (the folder of the annotated clips)")
    reports = {}
    for backend in args.family_evidence or ["trained"]:
        reports[backend] = evaluate_corpus(args.annotations, args.clips, cfg, backend=backend,
                                           prompts_path=args.prompts, cache_dir=args.cache)
    print(format_table({b: r["table"] for b, r in reports.items()}))
    first = next(iter(reports.values()))
    print("probes: " + ", ".join(f"{k} {v}" for k, v in sorted(first["n_probes"].items())))
    for e in first["errors"]:
        print(f"error: {e}", file=sys.stderr)
    if args.out is not None:
        write_json(args.out, {"annotations": str(args.annotations), "reports": reports})
        print(f"wrote {args.out}")
    return 0
