"""Where the labelling page's annotations live: an append-only journal and a compacted file.

Every change is first appended to the journal (``<out>.journal``, one JSON operation per
line, flushed and fsync'ed) and then the compacted file ``<out>`` is rewritten atomically
(temporary file + rename). ``<out>`` only ever holds complete, valid formats §5 rows,
so ``timingbench floors/confusion/sweep`` can read it at any moment; Layer-1 records that
are not yet valid rows (occurred set to yes but no onset or character yet) are *drafts*
and live in the journal only. A valid row whose salience is not yet rated is written
(salience null) but counts as not complete in the page's progress. On start the compacted file is loaded and the
journal replayed on top of it (every operation sets a whole record, so replaying twice is harmless): a server killed
between the two writes loses nothing.

Rows of every annotator are kept; a store edits only the rows of its own ``annotator``
and writes the others back unchanged. A lock file (``<out>.lock``) keeps a second server
from writing the same file at the same time.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from timingbench.annotation_io import (
    ONSET_CHARACTERS,
    SALIENCE_LEVELS,
    SPLITS,
    AnnotationRow,
    Layer1Row,
    Layer2Row,
    load_annotations,
    parse_annotation,
)
from timingbench.errors import AnnotationError
from timingbench.jsonio import atomic_write_text, dumps_row, write_json
from timingbench.prompts import EVENT_FAMILIES
from timingbench.text import shortlist

try:  # POSIX advisory locks; without them a second server is not detected
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LAYER1_EDITABLE = ("occurred", "onset_s", "onset_character", "salience")
LAYER2_EDITABLE = ("id", "source", "family", "onset_s", "salience")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _check_onset(v: Any, duration_s: float | None) -> float | None:
    if v is None:
        return None
    if not _is_number(v) or v < 0:
        raise AnnotationError(f"field 'onset_s': must be a number of seconds >= 0, got {v!r}")
    if duration_s is not None and v > duration_s:
        raise AnnotationError(
            f"field 'onset_s': {v} s lies after the end of the clip ({duration_s:.3f} s)"
        )
    return float(v)


def _check_salience(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v not in SALIENCE_LEVELS:
        raise AnnotationError(f"field 'salience': must be 1, 2 or 3, got {v!r}")
    return int(v)


def _check_unknown(fields: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise AnnotationError(f"unknown field(s) {unknown}; allowed: {list(allowed)}")


def layer1_valid(row: Mapping[str, Any]) -> bool:
    """Whether a Layer-1 record is a valid documented row (and so belongs in the compacted file)."""
    try:
        parse_annotation(row)
    except AnnotationError:
        return False
    return True


def layer1_complete(row: Mapping[str, Any]) -> bool:
    """Whether a Layer-1 record is finished: valid, and rated when the event occurred."""
    return layer1_valid(row) and (row.get("occurred") is False or row.get("salience") is not None)


class LabelStore:
    """Annotations of one output file, edited by one annotator.

    Parameters
    ----------
    out : str or Path
        The compacted formats §5 file (created if missing).
    annotator : str
        The name written on every row this store creates or edits.
    split : str
        ``dev`` or ``validation``: the split of rows this store creates.

    Raises
    ------
    AnnotationError
        If the annotator or split is invalid, the existing file has malformed rows (they
        would be lost by the next compaction, so the store refuses to start), or another
        process holds the file's lock.
    """

    def __init__(self, out: str | Path, *, annotator: str, split: str) -> None:
        if not isinstance(annotator, str) or not annotator.strip():
            raise AnnotationError("annotator must be a non-empty name (--annotator NAME)")
        if split not in SPLITS:
            raise AnnotationError(f"split must be one of {list(SPLITS)}, got {split!r}")
        self.out = Path(out)
        self.journal_path = self.out.with_name(self.out.name + ".journal")
        self.state_path = self.out.with_name(self.out.name + ".state.json")
        self.lock_path = self.out.with_name(self.out.name + ".lock")
        self.annotator = annotator.strip()
        self.split = split
        self._mutex = threading.RLock()
        self._l1: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._l2: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._state: dict[str, Any] = {"annotators": {}}
        self._lock_fh: TextIO | None = None
        self._journal_fh: TextIO | None = None
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        try:
            self._load()
            self._journal_fh = open(self.journal_path, "a", encoding="utf-8")  # noqa: SIM115
            self._compact()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ lifecycle

    def _acquire_lock(self) -> None:
        fh = open(self.lock_path, "a+", encoding="utf-8")  # noqa: SIM115
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.close()
                raise AnnotationError(
                    f"{self.out}: another labelling server is writing this file "
                    f"(lock {self.lock_path}); stop it or choose another --out"
                ) from None
        self._lock_fh = fh

    def close(self) -> None:
        """Close the journal and release the lock (idempotent)."""
        if self._journal_fh is not None:
            self._journal_fh.close()
            self._journal_fh = None
        if self._lock_fh is not None:
            if fcntl is not None:
                fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self) -> None:
        if self.out.exists():
            ann = load_annotations(self.out)
            if ann.errors:
                shown = shortlist(ann.errors, 3, sep="; ")
                raise AnnotationError(
                    f"{self.out}: {len(ann.errors)} malformed row(s) would be lost by saving; "
                    f"fix them first ({shown})"
                )
            for r in ann.layer1:
                self._l1[r.key] = r.to_dict()
            for i, r2 in enumerate(ann.layer2):
                row = r2.to_dict()
                if r2.id is None:  # rows from elsewhere get a stable id so they can be edited
                    digest = hashlib.sha256(dumps_row(row).encode()).hexdigest()[:10]
                    row["id"] = f"l2-{digest}-{i}"
                self._l2[(r2.annotator, r2.clip, row["id"])] = row
        if self.state_path.exists():
            try:
                state = json.loads(self.state_path.read_text(encoding="utf-8"))
                if isinstance(state, dict) and isinstance(state.get("annotators"), dict):
                    self._state = state
            except (OSError, json.JSONDecodeError):
                pass  # the journal replay below rebuilds it
        if self.journal_path.exists():
            with open(self.journal_path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    try:
                        op = json.loads(line)
                    except json.JSONDecodeError:
                        # only the last line can be torn by a kill mid-write
                        continue
                    try:
                        self._apply(op)
                    except (AnnotationError, KeyError, TypeError) as exc:
                        raise AnnotationError(
                            f"{self.journal_path}:{n}: cannot replay operation ({exc})"
                        ) from None

    # ------------------------------------------------------------------ persistence

    def _apply(self, op: Mapping[str, Any]) -> None:
        kind = op["op"]
        if kind == "l1":
            row = dict(op["row"])
            self._l1[(row["annotator"], row["clip"], row["event_id"])] = row
        elif kind == "l2":
            row = dict(op["row"])
            self._l2[(row["annotator"], row["clip"], row["id"])] = row
        elif kind == "l2del":
            self._l2.pop((op["annotator"], op["clip"], op["id"]), None)
        elif kind == "l2done":
            self._ann_state(op["annotator"]).setdefault("l2_done", {})[op["clip"]] = bool(op["done"])
        elif kind == "open":
            self._ann_state(op["annotator"])["last_clip"] = op["clip"]
        else:
            raise AnnotationError(f"unknown operation {kind!r}")

    def _ann_state(self, annotator: str) -> dict[str, Any]:
        anns: dict[str, Any] = self._state.setdefault("annotators", {})
        entry: dict[str, Any] = anns.setdefault(annotator, {})
        return entry

    def _commit(self, op: dict[str, Any]) -> None:
        """Journal one operation (durably), apply it, rewrite the compacted files."""
        fh = self._journal_fh
        if fh is None:
            raise AnnotationError(f"{self.out}: the store is closed")
        op = {**op, "t": round(time.time(), 3)}
        fh.write(dumps_row(op) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
        self._apply(op)
        self._compact()

    def _compact(self) -> None:
        done = [r for r in self._l1.values() if layer1_valid(r)]
        done.sort(key=lambda r: (r["annotator"], r["clip"], r["event_id"]))
        l2 = sorted(self._l2.values(),
                    key=lambda r: (r["annotator"], r["clip"], r["onset_s"], r["id"]))
        atomic_write_text(self.out, "".join(dumps_row(r) + "\n" for r in [*done, *l2]))
        write_json(self.state_path, self._state)

    # ------------------------------------------------------------------ reading

    def layer1(self, clip: str) -> dict[str, dict[str, Any]]:
        """This annotator's Layer-1 records of a clip (drafts included) by event id.

        Each record is the row plus ``complete`` (bool).
        """
        with self._mutex:
            return {
                eid: {**row, "complete": layer1_complete(row)}
                for (ann, c, eid), row in self._l1.items()
                if ann == self.annotator and c == clip
            }

    def layer2(self, clip: str) -> list[dict[str, Any]]:
        """This annotator's Layer-2 rows of a clip, by onset."""
        with self._mutex:
            rows = [dict(r) for (ann, c, _), r in self._l2.items()
                    if ann == self.annotator and c == clip]
        return sorted(rows, key=lambda r: (r["onset_s"], r["id"]))

    def layer2_done(self, clip: str) -> bool:
        """Whether this annotator marked the clip's Layer-2 inventory as finished."""
        with self._mutex:
            return bool(self._ann_state(self.annotator).get("l2_done", {}).get(clip, False))

    def last_clip(self) -> str | None:
        """The clip this annotator had open last, or None."""
        with self._mutex:
            v = self._ann_state(self.annotator).get("last_clip")
        return v if isinstance(v, str) else None

    def rows(self, clip: str) -> list[AnnotationRow]:
        """This annotator's complete rows of a clip as parsed rows (for export)."""
        out: list[AnnotationRow] = []
        for r in self.layer1(clip).values():
            r.pop("complete")
            if layer1_valid(r):
                out.append(parse_annotation(r))
        out.extend(parse_annotation(r) for r in self.layer2(clip))
        return out

    # ------------------------------------------------------------------ writing

    def put_layer1(
        self, *, clip: str, event_id: str, fields: Mapping[str, Any],
        duration_s: float | None = None,
    ) -> dict[str, Any]:
        """Update this annotator's Layer-1 record of one instructed event.

        Parameters
        ----------
        clip, event_id : str
            Which record (the caller checks that the event belongs to the clip).
        fields : mapping
            Any of ``occurred`` (bool or null), ``onset_s`` (seconds or null),
            ``onset_character``, ``salience``; fields left out keep their value. Setting
            ``occurred`` to false clears the onset and its character.
        duration_s : float, optional
            The clip's duration in seconds; an onset after it is refused.

        Returns
        -------
        record : dict
            The stored record with ``complete``.

        Raises
        ------
        AnnotationError
            Naming the field, for unknown fields or invalid values.
        """
        _check_unknown(fields, LAYER1_EDITABLE)
        if "occurred" in fields and fields["occurred"] is not None \
                and not isinstance(fields["occurred"], bool):
            raise AnnotationError(f"field 'occurred': must be true, false or null, "
                                  f"got {fields['occurred']!r}")
        if "onset_s" in fields:
            _check_onset(fields["onset_s"], duration_s)
        if "onset_character" in fields and fields["onset_character"] is not None \
                and fields["onset_character"] not in ONSET_CHARACTERS:
            raise AnnotationError(f"field 'onset_character': must be one of "
                                  f"{list(ONSET_CHARACTERS)}, got {fields['onset_character']!r}")
        if "salience" in fields:
            _check_salience(fields["salience"])
        with self._mutex:
            key = (self.annotator, clip, event_id)
            row = dict(self._l1.get(key) or {
                "clip": clip, "event_id": event_id, "occurred": None, "onset_s": None,
                "onset_character": None, "salience": None, "annotator": self.annotator,
                "split": self.split,
            })
            row.update(fields)
            if row.get("onset_s") is not None:
                row["onset_s"] = float(row["onset_s"])
            if row.get("occurred") is False:
                row["onset_s"] = None
                row["onset_character"] = None
            self._commit({"op": "l1", "row": row})
            return {**row, "complete": layer1_complete(row)}

    def put_layer2(
        self, *, clip: str, fields: Mapping[str, Any], duration_s: float | None = None
    ) -> dict[str, Any]:
        """Add (no ``id``) or replace (known ``id``) one of this annotator's Layer-2 rows.

        Parameters
        ----------
        clip : str
            The clip.
        fields : mapping
            ``source`` (text), ``family`` (formats §1), ``onset_s`` (seconds),
            ``salience`` (1-3 or null), optional ``id``.
        duration_s : float, optional
            The clip's duration in seconds; an onset after it is refused.

        Returns
        -------
        row : dict
            The stored row, with its ``id``.

        Raises
        ------
        AnnotationError
            For unknown fields, invalid values, or an ``id`` this annotator does not have.
        """
        _check_unknown(fields, LAYER2_EDITABLE)
        source = fields.get("source")
        if not isinstance(source, str) or not source.strip():
            raise AnnotationError(f"field 'source': must be a non-empty text, got {source!r}")
        family = fields.get("family")
        if family not in EVENT_FAMILIES:
            raise AnnotationError(f"field 'family': must be one of {list(EVENT_FAMILIES)}, "
                                  f"got {family!r}")
        if fields.get("onset_s") is None:
            raise AnnotationError("field 'onset_s': an observed event needs its onset in seconds")
        onset = _check_onset(fields["onset_s"], duration_s)
        salience = _check_salience(fields.get("salience"))
        rid = fields.get("id")
        with self._mutex:
            if rid is None:
                rid = f"l2-{uuid.uuid4().hex[:12]}"
                base: dict[str, Any] = {"split": self.split}
            else:
                if not isinstance(rid, str) or (self.annotator, clip, rid) not in self._l2:
                    raise AnnotationError(f"field 'id': no observed event {rid!r} of clip "
                                          f"{clip!r} for annotator {self.annotator!r}")
                base = dict(self._l2[(self.annotator, clip, rid)])
            row = {**base, "clip": clip, "source": source.strip(), "family": family,
                   "onset_s": onset, "salience": salience, "annotator": self.annotator,
                   "id": rid}
            row = parse_annotation(row).to_dict()  # documented key order, unknown keys kept
            self._commit({"op": "l2", "row": row})
            return row

    def delete_layer2(self, *, clip: str, row_id: str) -> None:
        """Delete one of this annotator's Layer-2 rows.

        Raises
        ------
        AnnotationError
            If this annotator has no such row.
        """
        with self._mutex:
            if (self.annotator, clip, row_id) not in self._l2:
                raise AnnotationError(f"field 'id': no observed event {row_id!r} of clip "
                                      f"{clip!r} for annotator {self.annotator!r}")
            self._commit({"op": "l2del", "annotator": self.annotator, "clip": clip, "id": row_id})

    def set_layer2_done(self, *, clip: str, done: bool) -> None:
        """Mark this annotator's Layer-2 inventory of a clip as finished (or not)."""
        with self._mutex:
            self._commit({"op": "l2done", "annotator": self.annotator, "clip": clip,
                          "done": bool(done)})

    def set_last_clip(self, clip: str) -> None:
        """Remember the clip this annotator has open (to resume there)."""
        with self._mutex:
            if self.last_clip() != clip:
                self._commit({"op": "open", "annotator": self.annotator, "clip": clip})

    def import_rows(self, rows: list[AnnotationRow]) -> int:
        """Store imported rows as this annotator's (Layer 1 replaces, Layer 2 adds).

        Returns
        -------
        n : int
            Number of rows stored.
        """
        with self._mutex:
            for r in rows:
                d = r.to_dict()
                d["annotator"] = self.annotator
                if isinstance(r, Layer1Row):
                    self._commit({"op": "l1", "row": d})
                elif isinstance(r, Layer2Row):
                    d["id"] = r.id or f"l2-{uuid.uuid4().hex[:12]}"
                    self._commit({"op": "l2", "row": d})
        return len(rows)
