"""The add-on's messages can be translated the way Blender's own are: every message with numbers or
names in it goes through `iface_`/`rpt_` as a template, Blender's extractor finds every message of
the installed extension, addon/translations.py holds them all, and a translator's .po file comes
back as a table Blender registers.

The PyPI `bpy` builds have no international support (`bpy.app.build_options.international` is
False), so the lookup itself (`pgettext` returning French) cannot run here; everything up to it does.
"""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "translations.py"
GETTEXT = {"iface_", "rpt_", "n_"}


def _translatable(node, literal_ok: bool) -> bool:
    """Whether a message expression reaches the animator translated (or is data, e.g. a name)."""
    if isinstance(node, ast.Constant):
        return literal_ok or not isinstance(node.value, str) or not any(c.isalpha() for c in node.value)
    if isinstance(node, ast.JoinedStr):  # an f-string: only when it has no words of its own
        return not any(isinstance(v, ast.Constant) and any(c.isalpha() for c in v.value) for v in node.values)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in GETTEXT:
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            return _translatable(node.func.value, literal_ok=False)
        return True  # str(e), a helper's message: translated where it was made
    if isinstance(node, ast.BinOp):
        return _translatable(node.left, literal_ok) and _translatable(node.right, literal_ok)
    if isinstance(node, ast.IfExp):
        return _translatable(node.body, literal_ok) and _translatable(node.orelse, literal_ok)
    return True  # a name or an attribute: data, or a message translated when it was made


def _messages(tree):
    """(node, message expression, whether Blender translates a literal there by itself)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and n.exc.args:
            yield n, n.exc.args[0], False  # shown through str(e): Blender never sees the literal
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "report" and len(n.args) == 2:
                yield n, n.args[1], True
            if n.func.attr == "poll_message_set" and n.args:
                yield n, n.args[0], True
            for kw in n.keywords:
                if kw.arg == "text":
                    yield n, kw.value, True
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "status" for t in n.targets):
            yield n, n.value, False  # shown later with translate=False


def test_every_message_with_words_is_a_template():
    bad = []
    for path in sorted((ROOT / "addon").glob("*.py")):
        if path.name == "translations.py":
            continue
        for node, message, literal_ok in _messages(ast.parse(path.read_text())):
            if not _translatable(message, literal_ok):
                bad.append(f"{path.name}:{node.lineno}: {ast.unparse(message)[:80]}")
    assert not bad, "messages Blender cannot translate (use iface_/rpt_ templates):\n" + "\n".join(bad)


def _already_translated(node) -> bool:
    """A label that is a filled-in template, an f-string or a name: Blender must not look it up again."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return True
    return isinstance(node, ast.Attribute) and node.attr in ("name", "status", "problem")


def test_formatted_labels_are_not_translated_twice():
    """As in Blender's own UI, a label already translated (or a name) says translate=False."""
    bad = []
    for path in sorted((ROOT / "addon").glob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if not isinstance(n, ast.Call):
                continue
            kws = {kw.arg: kw.value for kw in n.keywords}
            if "text" in kws and _already_translated(kws["text"]):
                flag = kws.get("translate")
                if not (isinstance(flag, ast.Constant) and flag.value is False):
                    bad.append(f"{path.name}:{n.lineno}: {ast.unparse(kws['text'])[:80]}")
    assert not bad, "labels translated twice:\n" + "\n".join(bad)


def test_the_checker_catches_an_untranslatable_message():
    """The rule above fails where it should: an f-string report and a literal raise."""
    tree = ast.parse('def f(self, x):\n    self.report({"INFO"}, f"Kept {x}")\n    raise ValueError("no x")\n'
                     'def g(self, x):\n    self.report({"INFO"}, rpt_("Kept {}").format(x))\n'
                     '    raise ValueError(rpt_("no x"))\n')
    verdicts = [_translatable(m, ok) for _n, m, ok in _messages(tree)]
    assert verdicts.count(False) == 2 and verdicts.count(True) == 2


def _run_tool(*args, timeout=900):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("BLENDER_USER_RESOURCES", None)
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def table_with_french(tmp_path_factory):
    """A translator's French .po (two messages) merged by the tool into a copy of the table."""
    folder = tmp_path_factory.mktemp("i18n")
    table = folder / "translations.py"
    table.write_bytes((ROOT / "addon" / "translations.py").read_bytes())
    (folder / "po").mkdir()
    (folder / "po" / "fr_FR.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr_FR\\n"\n\n'
        "msgid \"Kept as action '{}'\"\nmsgstr \"Gardé comme action « {} »\"\n\n"
        'msgctxt "Operator"\nmsgid "Solve from Here"\nmsgstr "Résoudre à partir d\'ici"\n', encoding="utf8")
    done = _run_tool("--po", str(folder / "po"), "--table", str(table))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return table, done


def test_the_table_holds_every_message_of_the_installed_extension(table_with_french):
    """Blender's extractor on the installed extension finds nothing addon/translations.py lacks."""
    done = _run_tool("--check")
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_translators_po_becomes_a_table_blender_registers(table_with_french):
    table, done = table_with_french
    namespace: dict = {}
    exec(compile(table.read_text(encoding="utf8"), str(table), "exec"), namespace)
    french = namespace["translations_dict"]["fr_FR"]
    assert french[("*", "Kept as action '{}'")] == "Gardé comme action « {} »"
    assert french[("Operator", "Solve from Here")] == "Résoudre à partir d'ici"  # an operator's label
    assert "Gardé comme action « {} »".format("walk") == "Gardé comme action « walk »"
    keys = {entry[0] for entry in namespace["translations_tuple"]}
    for message in ("Kept as action '{}'", "cost {:.3g}", "furthest keyframe {}/{}", "Contact Keyframes"):
        assert any(msgid == message for _ctxt, msgid in keys), message
    # Blender takes the table as it takes its bundled add-ons' tables
    code = ("import bpy, sys; ns = {}; exec(open(sys.argv[1], encoding='utf8').read(), ns); "
            "bpy.app.translations.register('physkey_test', ns['translations_dict']); "
            "bpy.app.translations.unregister('physkey_test'); print('registered')")
    out = subprocess.run([sys.executable, "-c", code, str(table)], capture_output=True, text=True, timeout=300)
    assert "registered" in out.stdout, out.stderr[-2000:]
