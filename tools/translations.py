"""The add-on's translation table, kept with Blender's own i18n tools (`_bl_i18n_utils`, what the
bundled "Manage UI Translations" add-on runs).

    python tools/translations.py             # re-extract the messages into addon/translations.py
    python tools/translations.py --po DIR    # ... and take the translations from DIR/<language>.po
    python tools/translations.py --export DIR  # write DIR/physkey.pot and a .po per language
    python tools/translations.py --check     # exit 1 when addon/translations.py misses a message

The messages are extracted from the *built and installed* extension, as Blender sees it: the labels,
tooltips and enum items of every class it registers, the literal `text=` of its panels, its
reports, and every `iface_(…)` / `rpt_(…)` template. Translations already in the table are kept; a
message that is gone from the code is dropped. docs/TRANSLATING.md is the translator's side.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "addon" / "translations.py"


def _settings():
    import bpy
    from _bl_i18n_utils import settings as i18n_settings
    settings = i18n_settings.I18nSettings()
    # Blender's extractor reads keymap presets from a source checkout by default; the module has them here.
    settings.PRESETS_DIR = bpy.utils.system_resource("SCRIPTS", path="presets")
    return settings


def extract():
    """(Blender's message catalogue of the installed extension, its i18n settings)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import blender_env
    finally:
        sys.path.pop(0)
    _bpy, module = blender_env.installed_extension()
    from _bl_i18n_utils import bl_extract_messages
    settings = _settings()
    pot = bl_extract_messages.dump_addon_messages(blender_env.MODULE, False, settings)
    _add_panel_labels(pot, settings, importlib.import_module(module.__name__ + ".addon")._classes())
    for msg in pot.msgs.values():  # sources as paths in the repository, not in a temporary Blender folder
        msg.comment_lines = [re.sub(r"\S*?physkey[\\/](?=addon[\\/])", "", c) for c in msg.comment_lines]
    return pot, settings


def _add_panel_labels(pot, settings, classes) -> None:
    """Blender's extractor drops the labels of an add-on's panels, lists and menus: it diffs against a
    pass with the add-on disabled, where Python still lists the unregistered classes (it skips only
    unregistered operators). Put them back as it would have written them."""
    from _bl_i18n_utils.utils import I18nMessage
    for cls in classes:
        for text in (getattr(cls, "bl_label", ""), getattr(cls, "bl_category", "")):
            key = (settings.DEFAULT_CONTEXT, text)
            if text and key not in pot.msgs and cls.__name__ != text:
                source = settings.PO_COMMENT_PREFIX_SOURCE_CUSTOM + "bpy.types." + cls.__name__
                pot.msgs[key] = I18nMessage([key[0]], [text], [""], [source], False, False, settings=settings)


def message_keys(pot, settings) -> set[tuple[str, str]]:
    """(context, message) of every message in a catalogue, as `bpy.app.translations` keys them."""
    return {key for key in pot.msgs if key != settings.PO_HEADER_KEY and not pot.msgs[key].is_commented}


def table_keys(table: Path = TABLE) -> set[tuple[str, str]]:
    """The (context, message) keys a translation table holds."""
    namespace: dict = {}
    exec(compile(table.read_text(encoding="utf8"), str(table), "exec"), namespace)
    return {entry[0] for entry in namespace["translations_tuple"]}


def write_table(pot, settings, po_dir: str | None, path: Path = TABLE) -> int:
    """Merge the catalogue (and any .po files) into the table at `path`; returns its languages."""
    from _bl_i18n_utils import utils as i18n_utils
    table = i18n_utils.I18n(kind="PY", src=str(path), settings=settings)
    if po_dir:
        for uid, po_file in i18n_utils.get_po_files_from_dir(po_dir):
            table.trans[uid] = i18n_utils.I18nMessages(uid, "PO", po_file, po_file, settings=settings)
    languages = set(table.trans) - {settings.PARSER_TEMPLATE_ID, settings.PARSER_PY_ID}
    for uid in languages:
        table.trans[uid].update(pot, keep_old_commented=False)
    table.trans[settings.PARSER_TEMPLATE_ID] = pot
    table.write(kind="PY")
    # Blender's writer heads a new file with its own licence; the extension's is the manifest's.
    path.write_text(path.read_text(encoding="utf8").replace("GPL-2.0-or-later", "GPL-3.0-or-later"), encoding="utf8")
    return len(languages)


def export(pot, settings, folder: str, path: Path = TABLE) -> None:
    """The catalogue as a .pot and each language of the table as a .po, for translators' tools."""
    from _bl_i18n_utils import utils as i18n_utils
    os.makedirs(folder, exist_ok=True)
    table = i18n_utils.I18n(kind="PY", src=str(path), settings=settings)
    pot.write("PO", os.path.join(folder, "physkey.pot"))
    for uid, messages in table.trans.items():
        if uid not in (settings.PARSER_TEMPLATE_ID, settings.PARSER_PY_ID):
            messages.update(pot, keep_old_commented=False)
            messages.write("PO", os.path.join(folder, f"{uid}.po"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--po", metavar="DIR", help="take translations from DIR/<language>.po")
    parser.add_argument("--export", metavar="DIR", help="write DIR/physkey.pot and DIR/<language>.po")
    parser.add_argument("--check", action="store_true", help="exit 1 if the table misses a message")
    parser.add_argument("--table", metavar="FILE", type=Path, default=TABLE,
                        help="the translation table (default: addon/translations.py)")
    args = parser.parse_args(argv)
    pot, settings = extract()
    if args.check:
        missing = sorted(message_keys(pot, settings) - table_keys(args.table))
        for ctxt, msgid in missing:
            print(f"not in {args.table}: ({ctxt!r}, {msgid!r})")
        if missing:
            print("run `python tools/translations.py` to add them")
        return 1 if missing else 0
    if args.export:
        export(pot, settings, args.export, args.table)
        print(f"wrote {args.export}/physkey.pot")
        return 0
    languages = write_table(pot, settings, args.po, args.table)
    print(f"{args.table}: {len(message_keys(pot, settings))} messages, {languages} language(s)")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # Blender's module may hang in its teardown (see tests/conftest.py)
