"""Errors the solver reports to users.

`InvalidInput` is bad input: the CLI turns it into exit code 2 and one line naming the field path,
so an animator (or the Blender add-on) can point at exactly what is wrong.
"""

MAX_PATH = 300  # characters; a field path or message longer than this is cut in the middle
MAX_MESSAGE = 600


def one_line(text: str, limit: int) -> str:
    """`text` as printable single-line text: control, format and line-separator characters and lone
    surrogates escaped as Python writes them (`\\n`, `\\x00`, `\\u202e`, `\\ud800`), and cut in the
    middle to at most `limit` characters. Names come from user files and end up in error messages,
    where a newline or a 100,000-character name would break the CLI's one-line contract."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(text) > limit:
        keep = (limit - 3) // 2
        text = f"{text[:keep]}...{text[len(text) - keep:]}"
    return text


class InvalidInput(ValueError):
    """Input that cannot be used, with the path of the offending field (e.g. `character.bodies[3].mass`)."""

    def __init__(self, path: str, message: str):
        self.path = one_line(path, MAX_PATH)
        self.message = one_line(message, MAX_MESSAGE)
        super().__init__(f"{self.path}: {self.message}" if self.path else self.message)
