"""Regenerate ``tag_parser_corpus.jsonl``: free-form answers with the intervals they state.

Expected intervals are written by hand (first list) or computed from the numbers put into
a template (second part), never by running the parser. Run from the repository root:
``.venv/bin/python tests/data/tag_make_corpus.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HAND: list[tuple[str, list[list[float]]]] = [
    # interval expressions
    ("The dog barks from 12.5-14s.", [[12.5, 14.0]]),
    ("12.5s - 14.0s", [[12.5, 14.0]]),
    ("The sound occurs between 3.2 and 4.8 seconds.", [[3.2, 4.8]]),
    ("From 1:02 to 1:05.", [[62.0, 65.0]]),
    ("[3.2, 4.8]", [[3.2, 4.8]]),
    ("The answer is [3.2s, 4.8s].", [[3.2, 4.8]]),
    ("(7.0, 9.5)", [[7.0, 9.5]]),
    ("<0.5, 1.25>", [[0.5, 1.25]]),
    ("Segment: 00:00:03,200 --> 00:00:04,800", [[3.2, 4.8]]),
    ("The laughter is heard at 0:45–0:52.", [[45.0, 52.0]]),
    ("The word appears around 2.1 ~ 2.6 s.", [[2.1, 2.6]]),
    ("Timestamp: 5s~7s", [[5.0, 7.0]]),
    ("It happens from 10 seconds until 15 seconds.", [[10.0, 15.0]]),
    ("It lasts from 10 s till 12 s.", [[10.0, 12.0]]),
    ("The engine runs from 8 through 19 seconds in the clip.", [[8.0, 19.0]]),
    ("from the 12th second to the 15th second", [[12.0, 15.0]]),
    ("from 12 seconds up to 15 seconds", [[12.0, 15.0]]),
    ("The applause: 1:30.5 - 1:41.25", [[90.5, 101.25]]),
    ("The discussion of interest rates runs 00:03:10 - 00:04:45.", [[190.0, 285.0]]),
    ("It is discussed at 01:02:03 to 01:02:10.", [[3723.0, 3730.0]]),
    ("Between 00:12 and 00:15.", [[12.0, 15.0]]),
    ("between 300 and 500 ms", [[0.3, 0.5]]),
    ("The click is at 250ms-400ms.", [[0.25, 0.4]]),
    ("About 2-3 minutes into the recording.", [[120.0, 180.0]]),
    ("The music plays 1.5 min to 2 min.", [[90.0, 120.0]]),
    ("From 1m05s to 1m12s.", [[65.0, 72.0]]),
    ("From 1h2m3s to 1h2m9s.", [[3723.0, 3729.0]]),
    ("The segment goes from 1 minute 5 seconds to 1 minute 12.5 seconds.", [[65.0, 72.5]]),
    ("From 2 min 30 s to 2 min 45 s.", [[150.0, 165.0]]),
    ("from 55 seconds to 1 minute 10 seconds", [[55.0, 70.0]]),
    ("from 1:02 to 65s", [[62.0, 65.0]]),
    # start and duration
    ("The alarm starts at 12 s, lasting 3 seconds.", [[12.0, 15.0]]),
    ("The siren starts at 0:45, lasting 10 seconds.", [[45.0, 55.0]]),
    ("From 1:05 for 4 s.", [[65.0, 69.0]]),
    ("The speech begins at 2 minutes and lasts about 30 seconds.", [[120.0, 150.0]]),
    ("from 10 for 2.5 seconds", [[10.0, 12.5]]),
    ("The dog barks for 3 seconds.", []),
    # start / end patterns
    ("Start: 00:12, End: 00:15", [[12.0, 15.0]]),
    ("Start time: 3.2s\nEnd time: 4.8s", [[3.2, 4.8]]),
    ("start_time=3.2, end_time=4.8", [[3.2, 4.8]]),
    ("The event starts at 14.2 seconds and ends at 16.9 seconds.", [[14.2, 16.9]]),
    ("It begins at 0:33 and stops at 0:41.", [[33.0, 41.0]]),
    ("Onset: 1.25 s, offset: 2.5 s.", [[1.25, 2.5]]),
    ("start_ms: 3200, end_ms: 4800", [[3.2, 4.8]]),
    ("The speaker starts talking about the budget at 2:15 and finishes at 3:02.", [[135.0, 182.0]]),
    ("Starting at 7 s, ending at 9 s.", [[7.0, 9.0]]),
    # JSON and arrays
    ('{"start": 1.5, "end": 3.0}', [[1.5, 3.0]]),
    ('{"intervals": [[1, 2.5], [6, 7.5]]}', [[1.0, 2.5], [6.0, 7.5]]),
    ('```json\n[{"start_time": "00:01.5", "end_time": "00:03.0"}]\n```', [[1.5, 3.0]]),
    ('[{"start_ms": 3200, "end_ms": 4800}]', [[3.2, 4.8]]),
    ('{"segments": [{"begin": 10, "end": 12}, {"begin": 20, "end": 22.5}]}',
     [[10.0, 12.0], [20.0, 22.5]]),
    ('{"timestamps": ["0:10-0:12", "0:20-0:25"]}', [[10.0, 12.0], [20.0, 25.0]]),
    ("[[0.5, 1.2], [3.4, 4.0], [7.7, 8.1]]", [[0.5, 1.2], [3.4, 4.0], [7.7, 8.1]]),
    ('Here is the result: {"onset": 4, "offset": 6}. Hope this helps!', [[4.0, 6.0]]),
    ('{"answer": {"start": "1:05", "end": "1:09"}}', [[65.0, 69.0]]),
    ("{'start': 2.0, 'end': 3.5}", [[2.0, 3.5]]),
    # several intervals
    ("The dog barks at 1.0-2.0s, 5.5-6.0s and 9-10s.", [[1.0, 2.0], [5.5, 6.0], [9.0, 10.0]]),
    ("Footsteps occur from 0:03 to 0:05 and again from 0:17 to 0:21.", [[3.0, 5.0], [17.0, 21.0]]),
    ("1. 2.0s - 3.5s\n2. 10.0s - 11.2s\n3. 20.1s - 21.0s", [[2.0, 3.5], [10.0, 11.2], [20.1, 21.0]]),
    ("- [00:05, 00:08]\n- [00:30, 00:33]", [[5.0, 8.0], [30.0, 33.0]]),
    ("about 5 to 7 seconds and again 12–15 s", [[5.0, 7.0], [12.0, 15.0]]),
    ("Bird calls: 0.0-1.2 s; 4.4-5.0 s; 8.8-9.9 s.", [[0.0, 1.2], [4.4, 5.0], [8.8, 9.9]]),
    ("The phrase is repeated twice: 3-4s, then 3-4s again.", [[3.0, 4.0]]),
    # spelled-out time words
    ("It starts at two minutes and five seconds and ends at two minutes and ten seconds.",
     [[125.0, 130.0]]),
    ("From three seconds to five seconds.", [[3.0, 5.0]]),
    ("Between twenty-five and thirty seconds.", [[25.0, 30.0]]),
    ("from one hundred and five seconds to one hundred and twelve seconds", [[105.0, 112.0]]),
    ("From three point five seconds to four point two seconds.", [[3.5, 4.2]]),
    ("from a minute to a minute and a half", [[60.0, 90.0]]),
    ("from half a minute to 40 seconds", [[30.0, 40.0]]),
    ("from one and a half minutes to two minutes", [[90.0, 120.0]]),
    ("From zero to four seconds.", [[0.0, 4.0]]),
    # failures: refusals, no-event statements, single timestamps, non-times
    ("I'm sorry, I cannot listen to audio.", []),
    ("I cannot find this sound in the audio.", []),
    ("There is no dog barking in this recording.", []),
    ("There is no dog barking between 0 and 30 seconds.", []),
    ("No such event occurs in the audio.", []),
    ("The word is spoken at 3.5 s.", []),
    ("The siren can be heard at around 1:20.", []),
    ("The audio is 30 seconds long and contains speech.", []),
    ("There are 2-3 dogs barking.", []),
    ("In 2019-2020 the speaker worked in finance.", []),
    ("Sales grew 10-15% last year.", []),
    ("The speaker mentions chapters 4 to 6 of the report.", []),
    ("Throughout the whole clip.", []),
    ("The event happens near the end of the recording.", []),
    ("0s~0s", []),
    ("From 15 s to 12 s.", []),
    ("The answer is 42.", []),
    ("", []),
    ("The bass comes in at the 6th second.", []),
    ("The car horn is not present in this audio.", []),
    ("The keyword does not appear anywhere in the clip.", []),
    ("Unable to locate the requested segment.", []),
    ("It plays 3 times during the clip.", []),
    ("The model mp3 128 kbps file.", []),
    # hedged answers that still state an interval
    ("I'm not completely sure, but it seems to be between 4 and 6 seconds.", [[4.0, 6.0]]),
    ("Approximately 00:10-00:14, though the boundaries are unclear.", [[10.0, 14.0]]),
    ("The relevant part (about the merger) is 5:10 to 6:02; nothing else matches.",
     [[310.0, 362.0]]),
    ("No problem! The cough is from 2.2 to 2.9 s.", [[2.2, 2.9]]),
    ("The 3 knocks happen from 4.0 s to 6.5 s.", [[4.0, 6.5]]),
    ("Answer: 0.84-1.32", [[0.84, 1.32]]),
    ("Time range 17.2 to 19.0.", [[17.2, 19.0]]),
    ("The speaker (2nd voice) talks from 8 to 12 s.", [[8.0, 12.0]]),
]


def _clock(t: float, *, hours: bool = False) -> str:
    h, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    if hours:
        return f"{int(h):02d}:{int(m):02d}:{s:05.2f}"
    return f"{int(m + 60 * h):02d}:{s:05.2f}"


TEMPLATES = [
    lambda s, e: (f"The event occurs from {s:.1f}s to {e:.1f}s.", 1),
    lambda s, e: (f"The target segment is {s:.2f}-{e:.2f} seconds.", 2),
    lambda s, e: (f"Timestamps: [{s:.2f}, {e:.2f}]", 2),
    lambda s, e: (f"It starts at {s:.1f} seconds and ends at {e:.1f} seconds.", 1),
    lambda s, e: (f"Between {_clock(s)} and {_clock(e)}.", 2),
    lambda s, e: (f"{_clock(s, hours=True)} --> {_clock(e, hours=True)}", 2),
    lambda s, e: (f'{{"start": {s:.3f}, "end": {e:.3f}}}', 3),
    lambda s, e: (f"Start: {round(s * 1000)} ms, End: {round(e * 1000)} ms", 3),
    lambda s, e: (f"You can hear it from {s:.1f} until {e:.1f} seconds into the audio.", 1),
    lambda s, e: (f"The matching content spans {_clock(s)}–{_clock(e)} in the recording.", 2),
]


def main() -> None:
    rng = random.Random(20260101)
    rows = [{"response": r, "expected": e, "source": "hand"} for r, e in HAND]
    for k in range(100):
        tmpl = TEMPLATES[k % len(TEMPLATES)]
        dur = rng.choice([10.0, 60.0, 600.0, 1200.0])
        s = rng.uniform(0, dur * 0.9)
        e = s + rng.uniform(0.3, min(30.0, dur - s))
        text, decimals = tmpl(s, e)
        rows.append({
            "response": text,
            "expected": [[round(s, decimals), round(e, decimals)]],
            "source": f"template{k % len(TEMPLATES)}",
        })
    out = Path(__file__).resolve().parent / "tag_parser_corpus.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
