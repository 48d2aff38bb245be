"""The app's words: ``ui_strings/*.json`` (one file a tab, plus ``common``) in English and
Spanish, for labels and for messages.

Labels go to the browser as ``gr.I18n`` keys and follow its language, also after a
switch in Settings. Messages that a click produces (a status line, an error) are
written on the server in the page's language, which every event sends along as its
last input (``ui_lang``, filled in by :data:`UI_LANG_JS`). Facts known at start-up
(the upload limit, which base model is there) are written into the labels once.
No gradio here, so the packages' ``ui`` modules and the tests can use it too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

# One file a tab (and ``common.json``), so each tab's words sit beside each other.
STRINGS_DIR = Path(__file__).with_name("ui_strings")
LANGS = ("en", "es")
_FIELD = re.compile(r"\{(\w+)\}")

# Every event that writes words gets this as its ``js``: the page's language replaces
# the last input (a hidden ``ui_lang`` radio). svelte-i18n keeps it in <html lang>.
UI_LANG_JS = ("(...args) => { const l = (document.documentElement.lang || 'en').slice(0, 2); "
              "args[args.length - 1] = l === 'es' ? 'es' : 'en'; return args; }")

Say = Callable[..., str]
# What a message says, kept to be said again in another language (Settings -> Language):
# ui_strings keys with their fields, and literal strings; a field may itself be a Said.
Said = list
# Labels gradio 6.31 does not re-translate after Settings -> Language (tab buttons); app.js
# puts them right, with gradio's own upload-box words.
STALE_AFTER_SWITCH = ("tab_vet", "tab_archive", "tab_lora", "vet_one", "vet_herd")


def strings() -> dict[str, dict[str, str]]:
    """Every file's tables merged per language; a key written in two files is an error."""
    merged: dict[str, dict[str, str]] = {lang: {} for lang in LANGS}
    for path in sorted(STRINGS_DIR.glob("*.json")):
        for lang, table in json.loads(path.read_text(encoding="utf-8")).items():
            twice = set(table) & set(merged[lang])
            if twice:
                raise ValueError(f"{path.name}: keys already written elsewhere: {sorted(twice)}")
            merged[lang].update(table)
    return merged


_STRINGS = strings()


def lang_of(code: str | None) -> str:
    """'es', 'es-ES', 'ES' -> 'es'; anything that is not Spanish -> 'en'."""
    return "es" if str(code or "").strip().lower()[:2] == "es" else "en"


def answer_lang(choice: str | None, ui_lang: str | None) -> str:
    """The vet answer's language: the user's pick, else ("auto") the page's."""
    return lang_of(ui_lang) if choice in (None, "", "auto") else lang_of(choice)


def fill(text: str, values: Mapping[str, object]) -> str:
    """``{name}`` replaced where ``values`` has it; other braces (``{source}``) stay."""
    return _FIELD.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values
                      else m.group(0), text)


def say(lang: str, key: str, **values: object) -> str:
    """One message in ``lang`` (English where Spanish lacks the key)."""
    table = _STRINGS.get(lang_of(lang), {})
    return fill(table.get(key) or _STRINGS["en"][key], values)


def sayer(lang: str) -> Say:
    """``say`` bound to one language, for the packages' ``ui`` functions."""
    return lambda key, **values: say(lang, key, **values)


def size_words(limit: str) -> str:
    """gradio's ``max_file_size`` spelling ("2gb", "500mb") as people write it ("2 GB")."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([kmgt]?b)\s*", str(limit).lower())
    return f"{m.group(1)} {m.group(2).upper()}" if m else str(limit)


def i18n_tables(facts: Mapping[str, object]) -> dict[str, dict[str, str]]:
    """The ``gr.I18n`` tables with the start-up facts written in."""
    return {lang: {k: fill(v, facts) for k, v in table.items()}
            for lang, table in _STRINGS.items()}


def words(said: Said, say: Say) -> str:
    """What ``said`` holds, in the language of ``say``."""
    out = []
    for part in said:
        if isinstance(part, str):
            out.append(part)
            continue
        key, fields = part
        out.append(say(key, **{k: words(v, say) if isinstance(v, list) else v
                               for k, v in fields.items()}))
    return " ".join(w for w in out if w)
