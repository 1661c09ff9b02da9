"""Keyframes appended or edited while a solve runs (for methods with `capabilities.appended_keyframes`).

The CLI (in `--jsonl` mode) reads lines like `{"append_keyframes": [ {…keyframe…}, … ]}` or
`{"edit_keyframes": [ {"index": k, "keyframe": {…}}, … ]}` from stdin, has the method check them against
the scene and appends them to `DIR/appended_keyframes.jsonl` (an edit as `{"edit": k, "keyframe": {…}}`);
every running seed polls that file between keyframes and changes its keyframe list: appended ones go
last, an edited one replaces keyframe k for a seed that has not started it (one that has keeps the old
and says so). A file rather than a pipe per worker: every seed sees every line, nothing is pickled, and
the record stays on disk.
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable

from ..core import schema
from ..core.errors import InvalidInput
from ..formats.events import Event

FILE_NAME = "appended_keyframes.jsonl"
KEY = "append_keyframes"
EDIT_KEY = "edit_keyframes"


def validate_line(line: str, check: Callable[[list, str], int], known: int | None = None) -> tuple[list, int | None]:
    """The items one stdin line adds to the run's file, and how many keyframes it appends (None: an edit);
    InvalidInput if anything is wrong. `check(items, path)` checks keyframe items and says how many they make;
    `known`: how many the solve has (an edit's index must be one of them; None: not checked)."""
    doc = schema.load_json_text(line, "stdin")  # also too deep, or numbers too long: one error line
    if not isinstance(doc, dict) or len(doc) != 1 or not set(doc) <= {KEY, EDIT_KEY}:
        raise InvalidInput("stdin", f'expected {{"{KEY}": [ … ]}} or {{"{EDIT_KEY}": [ … ]}}')
    if KEY in doc:
        items = doc[KEY]
        return items, check(items, KEY)
    edits = doc[EDIT_KEY]
    if not isinstance(edits, list) or not edits:
        raise InvalidInput(EDIT_KEY, 'must be a list of {"index": k, "keyframe": {…}}')
    out = []
    for i, edit in enumerate(edits):
        path = f"{EDIT_KEY}[{i}]"
        if not isinstance(edit, dict) or set(edit) != {"index", "keyframe"}:
            raise InvalidInput(path, 'must be {"index": k, "keyframe": {…}}')
        index = edit["index"]
        if not isinstance(index, int) or isinstance(index, bool) or index < 0 or \
                (known is not None and index >= known):
            raise InvalidInput(f"{path}.index", f"{index!r} is not a keyframe of this solve "
                               f"(it has {known if known is not None else 'fewer'})")
        try:
            if check([edit["keyframe"]], f"{path}.keyframe") != 1:
                raise InvalidInput(f"{path}.keyframe", "must be one keyframe (not an include)")
        except InvalidInput as e:  # the keyframe was checked as a list of one: its path is the edit's own
            raise InvalidInput(e.path.replace(f"{path}.keyframe[0]", f"{path}.keyframe", 1), e.message) from None
        out.append({"edit": index, "keyframe": edit["keyframe"]})
    return out, None


class KeyframeFeed:
    """Reads the keyframe items appended to the run's file since the last poll (one reader per seed)."""

    def __init__(self, out_dir: str):
        self.path = os.path.join(out_dir, FILE_NAME)
        self.offset = 0

    def poll(self) -> list:
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return []
        if size <= self.offset:
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read(size - self.offset)
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        return [item for line in complete.decode("utf-8").splitlines() if line.strip() for item in json.loads(line)]


def start_stdin_reader(stream, out_dir: str, check: Callable[[list, str], int], emit, on_eof=None,
                       known: int | None = None) -> threading.Thread:
    """Forward valid keyframe lines from `stream` to the run's file; report each as an event. `known`: how
    many keyframes the task has (appended ones are counted on). `on_eof` is called when the stream ends (see
    the CLI's --exit-with-stdin)."""
    path = os.path.join(out_dir, FILE_NAME)
    count = [known]

    def loop():
        for line in stream:
            if not line.strip():
                continue
            try:
                items, appended = validate_line(line, check, count[0])
            except InvalidInput as e:
                emit({"event": Event.ERROR, "kind": "invalid_input", "path": e.path, "message": str(e), "fatal": False})
                continue
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(items) + "\n")
                f.flush()
                os.fsync(f.fileno())
            if appended is None:
                emit({"event": Event.KEYFRAMES_EDITED, "keyframes": [item["edit"] for item in items]})
                continue
            if count[0] is not None:
                count[0] += appended
            emit({"event": Event.KEYFRAMES_APPENDED, "count": appended})
        if on_eof is not None:
            on_eof()

    thread = threading.Thread(target=loop, name="physkey-stdin", daemon=True)
    thread.start()
    return thread
