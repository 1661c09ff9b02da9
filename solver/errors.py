"""Errors the solver reports to users.

`InvalidInput` is bad input: the CLI turns it into exit code 2 and one line naming the field path,
so an animator (or the Blender add-on) can point at exactly what is wrong.
"""


class InvalidInput(ValueError):
    """Input that cannot be used, with the path of the offending field (e.g. `character.bodies[3].mass`)."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)
