"""Keyframes appended while a solve runs (for methods with `capabilities.appended_keyframes`).

The CLI (in `--jsonl` mode) reads lines like `{"append_keyframes": [ {…keyframe…}, … ]}` from stdin,
has the method check them against the scene and appends them to `DIR/appended_keyframes.jsonl`;
every running seed polls that file between control steps and extends its keyframe list. A file
rather than a pipe per worker: every seed sees every line, nothing is pickled, and the record
stays on disk.
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


def validate_line(line: str, check: Callable[[list, str], None]) -> list:
    """The keyframe JSON objects of one stdin line, checked by `check(items, path)`; InvalidInput if
    anything is wrong."""
    doc = schema.load_json_text(line, "stdin")  # also too deep, or numbers too long: one error line
    if not isinstance(doc, dict) or set(doc) != {KEY}:
        raise InvalidInput("stdin", f'expected {{"{KEY}": [ … ]}}')
    items = doc[KEY]
    check(items, KEY)
    return items


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


def start_stdin_reader(stream, out_dir: str, check: Callable[[list, str], None], emit, on_eof=None) -> threading.Thread:
    """Forward valid keyframe lines from `stream` to the run's file; report each as an event.
    `on_eof` is called when the stream ends (see the CLI's --exit-with-stdin)."""
    path = os.path.join(out_dir, FILE_NAME)

    def loop():
        for line in stream:
            if not line.strip():
                continue
            try:
                items = validate_line(line, check)
            except InvalidInput as e:
                emit({"event": Event.ERROR, "kind": "invalid_input", "path": e.path, "message": str(e), "fatal": False})
                continue
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(items) + "\n")
                f.flush()
                os.fsync(f.fileno())
            emit({"event": Event.KEYFRAMES_APPENDED, "count": len(items)})
        if on_eof is not None:
            on_eof()

    thread = threading.Thread(target=loop, name="physkey-stdin", daemon=True)
    thread.start()
    return thread
