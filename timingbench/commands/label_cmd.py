"""``timingbench label CLIPS_DIR --prompts P.jsonl --out annotations.jsonl``: the labelling page."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from timingbench.annotation_io import SPLITS
from timingbench.config import load_config
from timingbench.label.server import LabelApp, is_loopback, make_server
from timingbench.label.store import LabelStore


def _default_annotator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "annotator"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``label`` subcommand."""
    p = sub.add_parser(
        "label",
        help="annotate clips in a local web page (docs/formats.md §5 rows)",
        description=(
            "Serve a labelling page for the clips of CLIPS_DIR: audio player, zoomable "
            "log-mel spectrogram, Layer 1 (instructed events) and Layer 2 (observed events). "
            "Every change is saved at once to --out (plus OUT.journal). Re-run the same "
            "command to resume. Binds to 127.0.0.1 unless --host is given."
        ),
    )
    p.add_argument("clips_dir", metavar="CLIPS_DIR", help="folder of clips named <prompt_id>[__k].<ext>")
    p.add_argument("--prompts", required=True, help="prompt set (JSONL, docs/formats.md §1)")
    p.add_argument("--out", required=True, help="annotation file to write (JSONL, docs/formats.md §5)")
    p.add_argument("--annotator", default=None,
                   help="name written on every row (default: the login name)")
    p.add_argument("--split", choices=SPLITS, default=None,
                   help="split of new rows (default: label.default_split, 'validation')")
    p.add_argument("--host", default=None,
                   help="address to bind (default 127.0.0.1; anything else exposes the page)")
    p.add_argument("--port", type=int, default=None, help="port (default: label.port, 8765; 0 = any free)")
    p.add_argument("--config", default=None, help="configuration file (default: the packaged one)")
    p.add_argument("--results", default=None,
                   help="a `timingbench score` results folder: show its verdicts as a read-only layer")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    p.set_defaults(func=run_label)


def run_label(args: argparse.Namespace) -> int:
    """Start the labelling server and serve until interrupted; exit status 0."""
    cfg = load_config(args.config)
    lp = cfg.params.label
    host = args.host if args.host is not None else lp.host
    port = args.port if args.port is not None else lp.port
    split = args.split if args.split is not None else lp.default_split
    annotator = args.annotator if args.annotator is not None else _default_annotator()
    store = LabelStore(Path(args.out), annotator=annotator, split=split)
    try:
        app = LabelApp(clips_dir=args.clips_dir, prompts_path=args.prompts, store=store, cfg=cfg,
                       results=args.results)
        for err in app.prompt_set.errors:
            print(f"warning: {err}", file=sys.stderr)
        server = make_server(app, host=host, port=port, verbose=args.verbose,
                             allow_remote=args.host is not None)
        if not is_loopback(host):
            print(f"warning: the page is reachable from other machines on {host}; anyone who "
                  "reaches it can edit the annotations", file=sys.stderr)
        print(f"timingbench label: {len(app.clips)} clips, annotator {store.annotator!r}, "
              f"split {store.split!r}, saving to {store.out}")
        print(f"open {server.url}  (Ctrl+C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\nstopped; everything was saved", file=sys.stderr)
        finally:
            server.server_close()
    finally:
        store.close()
    return 0
