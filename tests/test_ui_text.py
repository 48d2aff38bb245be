"""The app's words: both languages for every key, the same blanks, and how they are filled."""

from __future__ import annotations

import logging
import re
import sys

import ui_text
from ondemand import warm_imports

FIELD = re.compile(r"\{(\w+)\}")


def test_every_key_is_in_both_languages_with_the_same_blanks():
    strings = ui_text.strings()
    assert set(strings) == set(ui_text.LANGS)
    assert strings["en"].keys() == strings["es"].keys()
    for key, en in strings["en"].items():
        es = strings["es"][key]
        assert en.strip() and es.strip(), key
        assert sorted(FIELD.findall(en)) == sorted(FIELD.findall(es)), key


def test_messages_are_filled_and_other_braces_stay():
    assert ui_text.say("es", "archive_progress", done=3, total=9, items=4, speed="2.0") == \
        "Página 3 de 9 · 4 figura(s) hasta ahora · 2.0 páginas/s"
    assert ui_text.say("fr-FR", "lora_err_prompt") == "Write a prompt first."
    # a caption template's own blanks are not start-up facts
    tables = ui_text.i18n_tables({"max_upload": "2 GB", "max_pages": 3000})
    assert "{source}" in tables["en"]["archive_caption"]
    assert tables["es"]["archive_limits"] == ("Límite de subida: 2 GB por archivo, 3000 páginas "
                                              "por trabajo.")


def test_languages_and_sizes_as_people_write_them():
    assert [ui_text.lang_of(x) for x in ("es-ES", "ES", "en", "fr", None)] == \
        ["es", "es", "en", "en", "en"]
    assert ui_text.answer_lang("auto", "es") == "es"
    assert ui_text.answer_lang("en", "es") == "en"
    assert ui_text.answer_lang(None, None) == "en"
    assert ui_text.size_words("2gb") == "2 GB" and ui_text.size_words("750MB") == "750 MB"


def test_heavy_imports_warm_in_the_background_and_a_bad_one_is_only_logged(caplog):
    sys.modules.pop("colorsys", None)
    ran = []
    with caplog.at_level(logging.WARNING, logger="borde.ondemand"):
        warm_imports(["colorsys", "no_such_module_anywhere"], then=lambda: ran.append(1)
                     ).join(timeout=30)
        warm_imports([], then=lambda: 1 / 0).join(timeout=30)
    assert "colorsys" in sys.modules and ran == [1]
    assert "no_such_module_anywhere" in caplog.text and "division by zero" in caplog.text


def test_every_key_is_used_by_the_code():
    """A key no code names is a string nobody sees; those made from codes name their prefix."""
    root = ui_text.STRINGS_DIR.parent
    code = "\n".join(p.read_text(encoding="utf-8") for p in root.glob("*.py"))
    code += "\n".join(p.read_text(encoding="utf-8") for pkg in ("vet", "archive", "lora", "tabs")
                      for p in (root / pkg).glob("*.py"))
    dynamic = ("lora_err_", "lora_base_", "lora_style_", "vet_reason_", "vet_status_",
               "vet_col_", "archive_error_")
    unused = [k for k in ui_text.strings()["en"]
              if f'"{k}"' not in code and not k.startswith(dynamic)]
    assert not unused


def test_a_request_waits_for_the_warm_up_so_no_import_is_seen_half_done():
    """diffusers seen mid-import by a second thread says "cannot import name"."""
    import importlib.abc
    import time

    from ondemand import OnDemand

    order = []

    class SlowImport(importlib.abc.MetaPathFinder):  # a module that takes 0.5 s to import
        def find_spec(self, name, path=None, target=None):
            if name == "borde_slow_module":
                time.sleep(0.5)
                order.append("imported")
            return None

    import torch  # noqa: F401 - imported before, so the 2 s below is only the answer's

    sys.meta_path.insert(0, SlowImport())
    try:
        warm_imports(["borde_slow_module"], then=lambda: (time.sleep(2), order.append("answer")))
        holder = OnDemand(lambda device: order.append("load") or object(), name="gate")
        with holder.use("cpu"):
            pass
    finally:
        sys.meta_path.pop(0)
    assert order == ["imported", "load"]  # after the imports, not after the warm-up answer
