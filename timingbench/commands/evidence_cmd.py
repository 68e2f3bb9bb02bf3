"""``timingbench evidence make-data | cache-arrays | train | eval``: the trained family evidence model."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_BACKENDS
from timingbench.commands.tagger_options import add_tagger_weights_option, with_tagger_weights_from
from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.identity.training.programs import CHOIR_FAMILIES, DEFAULT_CHOIR_FAMILY


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
                   help="sound set to render with: a GM soundfont (.sf2/.sf3) or a TiMidity++ configuration "
                        "(.cfg, e.g. freepats); repeatable; default: the four training soundfonts and freepats")
    m.add_argument("--real-kit-p", type=float, default=None,
                   help="share of clips whose drum kit is a real multi-sampled kit (avldrums, hydrogen-drumkits); "
                        "default evidence.real_kit_p; 0 with --test")
    m.add_argument("--test", action="store_true",
                   help="a test set: no effects, real singing only from vocadito's test part (before "
                        "evidence.vocadito_train_from_s); the only way to use MuseScore General")
    m.add_argument("--choir-family", choices=CHOIR_FAMILIES, default=DEFAULT_CHOIR_FAMILY,
                   help="family of GM choir aahs / voice oohs (52, 53), sampled voices without words "
                        f"(default {DEFAULT_CHOIR_FAMILY}; decide on dev figures)")
    m.add_argument("--no-arrays", action="store_true",
                   help="do not write the memory-mapped training arrays (write them later with cache-arrays)")
    _add_config_and_run(m, run_make_data)

    c = ev.add_parser("cache-arrays", help="write a rendered data folder's training arrays",
                      description="Turn the shards (part-*.npz) of a data folder into memory-mapped arrays "
                                  "(log-mel float16, labels uint8, presence float16, change int8), so training "
                                  "reads arrays and decodes nothing. make-data does this itself.")
    c.add_argument("--data", required=True, type=Path, help="data folder written by make-data")
    c.add_argument("--out", type=Path, default=None,
                   help="folder for the arrays (default: the data folder itself)")
    _add_config_and_run(c, run_cache_arrays)

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
    t.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: with the batch-prefetch thread this uses two cores; "
                        "benchmarks/evidence_training_speed.py measures the choice)")
    t.add_argument("--no-prefetch", action="store_true",
                   help="assemble batches on the training thread (default: a background thread prepares the next)")
    t.add_argument("--width", type=int, default=12, help="channels of the first conv block (default 12)")
    t.add_argument("--embed", type=int, default=96, help="embedding channels (default 96)")
    t.add_argument("--mel-pool", type=int, choices=[1, 2], default=2,
                   help="mel bands averaged before the trunk (default 2: 64 bands; 1: all 128)")
    t.add_argument("--limit", type=int, default=None, help="use only the first N training clips")
    t.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint written after every epoch (default: OUT with suffix .ckpt)")
    t.add_argument("--resume", type=Path, default=None,
                   help="continue the run of this checkpoint (same settings and data) bit-for-bit")
    t.add_argument("--stop-after", type=int, default=None,
                   help="end this sitting after epoch N (the checkpoint continues it with --resume)")
    _add_config_and_run(t, run_train)

    e = ev.add_parser("eval", help="per-family entrance/exit AUCs on a labelled data set",
                      description="AUC of true entrances (exits) against decoy entrances of other families "
                                  "and against pre-existing targets, per family and design.")
    what = e.add_mutually_exclusive_group(required=True)
    what.add_argument("--data", type=Path, help="labelled data folder (from make-data)")
    what.add_argument("--annotations", type=Path, help="annotation JSONL of a corpus (with --clips)")
    e.add_argument("--clips", type=Path, default=None, help="clips folder of --annotations")
    e.add_argument("--prompts", type=Path, default=None, help="prompt set of --annotations (default: beside the clips)")
    e.add_argument("--family-evidence", choices=FAMILY_EVIDENCE_BACKENDS, action="append", default=None,
                   help=f"backend(s) to evaluate on --annotations (repeatable; default {DEFAULT_FAMILY_EVIDENCE})")
    e.add_argument("--designs", action="store_true",
                   help="with --annotations: compare the designs of the tagger evidence (network, tagger, fusion), "
                        "every family judged")
    e.add_argument("--cache", default=None, help="feature cache folder (with --annotations)")
    add_tagger_weights_option(e)
    e.add_argument("--weights", type=Path, action="append", default=None,
                   help="weights file (repeatable, NAME=PATH allowed, PATH+PATH an ensemble averaging the "
                        "networks' logits, with --data; default: the shipped weights); with --annotations every "
                        "family of each file is scored")
    e.add_argument("--split", choices=["dev", "validation"], default=None,
                   help="with --annotations: only the rows of this split (dev selects models; validation "
                        "only measures)")
    e.add_argument("--out", type=Path, default=None, help="write the report JSON here")
    _add_config_and_run(e, run_eval)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _add_config_and_run(p: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int]) -> None:
    """End an action's options with ``--config`` (every action takes it) and make ``run`` its function."""
    p.add_argument("--config", type=Path, default=None, help="configuration YAML")
    p.set_defaults(func=run)


def run_make_data(args: argparse.Namespace) -> int:
    """Render a data set."""
    from timingbench.identity.training.dataset import HELD_OUT_SOUNDFONT, TRAIN_SOURCES, make_dataset

    cfg = load_config(args.config)
    fonts = [str(s) for s in args.soundfont] if args.soundfont else \
        ([HELD_OUT_SOUNDFONT] if args.test else list(TRAIN_SOURCES))
    man = make_dataset(args.out, cfg=cfg, n_clips=args.n, seed=args.seed, soundfonts=fonts,
                       augment=not args.test, allow_held_out=args.test, choir_family=args.choir_family,
                       real_kit_p=args.real_kit_p)
    if not args.no_arrays:
        from timingbench.identity.training.arrays import write_arrays

        write_arrays(args.out, cfg=cfg)
    print(f"wrote {man['n_clips']} clips to {args.out} (recipe {man['recipe']}, choirs: "
          f"{man['params']['choir_family']}, sound sets: {', '.join(Path(s).name for s in fonts)}; real kits in "
          f"{man['kits']['real_kit_p']:.0%} of the kit parts)")
    return 0


def run_cache_arrays(args: argparse.Namespace) -> int:
    """Write a data folder's training arrays."""
    from timingbench.identity.training.arrays import write_arrays

    rec = write_arrays(args.data, args.out, cfg=load_config(args.config))
    print(f"wrote the arrays of {rec['n_clips']} clips to {args.out or args.data}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """Train (or continue training) and write the weights file, its curve and its PNG."""
    from timingbench.commands.score_cmd import progress_bar
    from timingbench.identity.training.arrays import ArraySet, open_arrays
    from timingbench.identity.training.dataset import training_sources
    from timingbench.identity.training.train import TrainParams, plot_curve, train_model
    from timingbench.jsonio import write_json
    from timingbench.models.family_net import save_weights
    from timingbench.models.family_net_infer import reference_outputs

    cfg = load_config(args.config)
    sources = training_sources([*args.data, args.dev])
    train = ArraySet([open_arrays(f, cfg=cfg) for f in args.data], limit=args.limit)
    dev = ArraySet([open_arrays(args.dev, cfg=cfg)])
    print(f"training on {len(train)} clips, selecting on {len(dev)} dev clips", file=sys.stderr)
    params = TrainParams(epochs=args.epochs, batch=args.batch, lr=args.lr, change_weight=args.change_weight,
                         seed=args.seed, threads=args.threads, width=args.width,
                         embed=args.embed, mel_pool=args.mel_pool,
                         prefetch=not args.no_prefetch, stop_after=args.stop_after)
    ckpt = args.checkpoint or args.out.with_suffix(".ckpt")
    with progress_bar() as bar:
        task = bar.add_task("training", total=None, clip="")
        state = {"last": ""}

        def tick(epoch: int, epochs: int, done: int, n_batches: int, row: dict[str, Any] | None) -> None:
            if row is not None:
                state["last"] = f"loss {row['train_loss']:.4f}  dev AUC {row['dev_auc']}"
            bar.update(task, completed=done, total=n_batches, description=f"epoch {epoch}/{epochs}",
                       clip=state["last"])

        model, curve, complete = train_model(train, dev, cfg=cfg, params=params, checkpoint=ckpt,
                                             resume=args.resume, progress=tick)
    if not complete:
        print(f"stopped after epoch {len(curve['epochs'])}/{params.epochs}; continue with --resume {ckpt}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"licence": "MIT (timingbench); trained only on renders of the Debian sound sets listed in "
                       "data and on vocadito (CC BY 4.0)",
            "train_params": params.__dict__, "recipe": sources[0]["recipe"], "data": sources, "curve": curve,
            "config_version": cfg.version}
    save_weights(model, args.out, meta=meta)
    reference = reference_outputs(args.out, sr=cfg.params.audio.sample_rate_hz, hop=cfg.params.features.hop)
    write_json(args.out.with_suffix(".reference.json"), reference)
    plot_curve(curve, args.out.with_suffix(".curve.png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.curve.png').name} (best epoch {curve.get('best_epoch')}, "
          f"{curve['parameters']} parameters)")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Print (and optionally write) the per-family AUC table."""
    from timingbench.identity.training.dataset import load_dataset, read_manifest
    from timingbench.identity.training.evaluate import evaluate_dataset
    from timingbench.identity.training.metrics import format_table
    from timingbench.jsonio import write_json
    from timingbench.models.family_net import Ensemble, load_weights
    from timingbench.models.family_net_infer import WEIGHTS

    cfg = with_tagger_weights_from(args, load_config(args.config))
    if args.annotations is not None:
        return _eval_corpus(args, cfg)
    models: dict[str, Any] = {}
    for name, path in _named_weights(args.weights or [WEIGHTS]).items():
        try:
            parts = [load_weights(Path(p))[0] for p in str(path).split("+")]
            models[name] = parts[0] if len(parts) == 1 else Ensemble(parts)
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


def _named_weights(items: list[Path]) -> dict[str, Path]:
    """``NAME=PATH`` (or ``PATH``, named by its stem) items as name -> path."""
    out = {}
    for item in items:
        text = str(item)
        name, _, path = text.partition("=") if "=" in text else (Path(text).stem, "", text)
        out[name] = Path(path)
    return out


def _eval_corpus(args: argparse.Namespace, cfg: Any) -> int:
    from timingbench.calibration.evidence_auc import evaluate_corpus
    from timingbench.identity.training.metrics import format_table
    from timingbench.jsonio import write_json

    if args.clips is None:
        raise ParameterError("--annotations needs --clips (the folder of the annotated clips)")
    if args.weights or args.designs:
        from timingbench.calibration.evidence_auc import evaluate_corpus_designs, evaluate_corpus_weights

        if args.designs:
            rep = evaluate_corpus_designs([(args.annotations, args.clips)], cfg, split=args.split,
                                          prompts_path=args.prompts, cache_dir=args.cache)
        else:
            rep = evaluate_corpus_weights(args.annotations, args.clips, cfg, weights=_named_weights(args.weights),
                                          split=args.split, prompts_path=args.prompts, cache_dir=args.cache)
        print(format_table(rep["tables"]))
        print("probes: " + ", ".join(f"{k} {v}" for k, v in sorted(rep["n_probes"].items())))
        for e in rep["errors"]:
            print(f"error: {e}", file=sys.stderr)
        if args.out is not None:
            write_json(args.out, {"annotations": str(args.annotations), **rep})
            print(f"wrote {args.out}")
        return 0
    reports = {}
    for backend in args.family_evidence or [DEFAULT_FAMILY_EVIDENCE]:
        reports[backend] = evaluate_corpus(args.annotations, args.clips, cfg, backend=backend,
                                           prompts_path=args.prompts, cache_dir=args.cache, split=args.split)
    print(format_table({b: r["table"] for b, r in reports.items()}))
    first = next(iter(reports.values()))
    print("probes: " + ", ".join(f"{k} {v}" for k, v in sorted(first["n_probes"].items())))
    for e in first["errors"]:
        print(f"error: {e}", file=sys.stderr)
    if args.out is not None:
        write_json(args.out, {"annotations": str(args.annotations), "reports": reports})
        print(f"wrote {args.out}")
    return 0
