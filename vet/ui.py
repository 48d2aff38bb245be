"""Plain functions for the Gradio tab; this module must never import gradio.

The app wires these to components: ``label`` -> gr.Label, ``badge`` and
``advice`` -> gr.HTML/Markdown, ``heatmap`` -> gr.Image; a herd's ``table`` is
HTML that wraps to the screen (cards on a phone), and ``csv``/``json`` carry
every field for the download. Every word comes in the answer language. Inference and
words are apart (``triage_*_for_ui`` run the model; ``answer_words``/``herd_words`` and
``resay_*`` only write), so a language switch writes an answer again without a model run.
"""

from __future__ import annotations

import csv
import html
import io
import json
import logging
from pathlib import Path
from typing import Any

from ui_text import say
from vet.pipeline import Triage, table, triage, triage_many

log = logging.getLogger("borde.vet")

# Small photos shipped in the repository (licensed rows, held-out source groups of the
# shipped model; their credits in CREDITS.md beside them), so a Space has examples too.
EXAMPLES_DIR = Path(__file__).with_name("examples")
MISSING = "—"
STATUSES = ("ok", "uncertain", "not_livestock", "error")  # words: vet_status_<status>
# The herd table's columns, in order; their names are ``vet_col_<column>`` in ui_strings/vet.json.
COLUMNS = ("photo", "result", "species", "condition", "confidence", "urgency", "why", "advice")


def example_photos() -> list[str]:
    """The shipped example photos for gr.Examples (sorted by file name)."""
    return [str(p) for p in sorted(EXAMPLES_DIR.glob("*.jpg"))]


def warm_up() -> None:
    """One answer nobody sees, on the CPU, at start-up: the first farmer's answer then
    costs what the later ones do. The model is loaded and released as for any request."""
    photos = example_photos()
    if photos:
        triage_many(photos[:1], heatmap=True, device="cpu")


def _lang(lang: str) -> str:
    return lang if lang in ("en", "es") else "en"


def condition_name(label: str, lang: str = "en") -> str:
    info = table()["conditions"].get(label)
    return info["name"][_lang(lang)] if info else label


def species_word(species: str | None, lang: str = "en") -> str:
    """The species as a bare noun in ``lang`` ("vaca", not "una vaca"); "—" when none."""
    lang = _lang(lang)
    if not species:
        return MISSING
    if species == "unknown":
        return say(lang, "vet_species_unknown")
    word = table()["species_names"].get(species, {}).get(lang, species)
    article, _, noun = word.partition(" ")
    return noun if lang == "es" and article in ("un", "una") and noun else word


def status_word(t: Triage, lang: str = "en") -> str:
    """What the answer is, in the farmer's words: a notifiable suspicion never reads "OK"."""
    key = t.status if t.status in STATUSES else "error"
    if notifiable(t):
        key = "notifiable" if t.status == "ok" else "maybe_notifiable"
    return say(lang, f"vet_status_{key}")


def urgency_badge(t: Triage, lang: str = "en") -> str:
    """A coloured HTML badge: urgency for a result, otherwise the status."""
    lang = _lang(lang)
    if t.status in ("ok", "uncertain") and t.urgency:
        u = table()["urgency"][t.urgency]
        text, color = u[lang], u["color"]
        if t.status == "uncertain":
            text = f"{text} · {say(lang, 'vet_status_uncertain')}"
    else:
        text, color = status_word(t, lang), "#616161"
    return (f'<span class="vet-badge" style="display:inline-block;background:{color};'
            f'color:#fff;padding:4px 10px;border-radius:12px;font-weight:600">'
            f'{html.escape(text)}</span>')


def advice_text(t: Triage, lang: str = "en") -> str:
    """What to do, in ``lang``; a file that is not a photo gets a plain sentence."""
    lang = _lang(lang)
    if t.status == "error":
        return say(lang, "vet_no_photo" if not t.file else "vet_unreadable")
    return t.advice.get(lang, "") or MISSING


def advice_markdown(t: Triage, lang: str = "en") -> str:
    """Advice, species, reason and the one-line disclaimer as markdown."""
    lang = _lang(lang)
    lines = []
    if t.condition:
        lines.append(f"**{condition_name(t.condition, lang)}** ({t.confidence:.0%})")
    if t.species:
        lines.append(say(lang, "vet_species") + f": {species_word(t.species, lang)}")
    why = why_uncertain(t, lang)
    if why:  # the farmer sees why, not only "take another photo"
        lines.append(say(lang, "vet_why_unsure", why=why))
    lines.append(advice_text(t, lang))
    lines.append(f"_{t.disclaimer.get(lang, '')}_")
    return "\n\n".join(x for x in lines if x)


def answer_words(t: Triage, lang: str = "en") -> dict[str, Any]:
    """One photo's answer in words: ``{"label", "badge", "advice"}``.

    Without a condition to name, ``label`` is the status in words, so the box says why it
    holds no percentages. No model run: a language switch writes the answer again from it.
    """
    label: dict[str, float] | str = status_word(t, lang)
    if t.condition:
        label = {condition_name(d["label"], lang): d["p"] for d in t.top}
    return {"label": label, "badge": urgency_badge(t, lang), "advice": advice_markdown(t, lang)}


def _as_shown(t: Triage, name: str | None = None) -> Triage:
    """The answer as the user may see it: the name they uploaded the photo under (``name``;
    else the path's last part, which gradio keeps but for a few characters such as ``:``
    or ``!``), never the server's path, in the reason either."""
    if t.file:
        full, t.file = t.file, Path(name or t.file).name
        if t.reason:
            t.reason = t.reason.replace(full, t.file)
    return t


def triage_one_for_ui(image: Any, lang: str = "en", model: str | None = None,
                      name: str | None = None) -> dict[str, Any]:
    """One photo for the tab; ``name``: what the user called it (else the path's name).

    Returns :func:`answer_words` plus ``"heatmap": PIL.Image | None, "status": str,
    "result": dict`` (the Triage JSON, which :func:`resay_one` writes again in words).
    """
    if image is None:
        t = Triage(file="", status="error", reason="no photo given", reason_code="no_photo",
                   disclaimer=dict(table()["disclaimer"]))
    else:
        t = _as_shown(triage(image, model=model, heatmap=True), name)
    if t.status == "error" and t.reason:
        log.info("photo not read: %s", t.reason)
    return {**answer_words(t, lang), "heatmap": t.heatmap, "status": t.status,
            "result": t.to_json()}


def resay_one(result: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """:func:`answer_words` for a kept Triage JSON (``triage_one_for_ui``'s ``result``)."""
    return answer_words(Triage(**result), lang)


def table_headers(lang: str = "en") -> list[str]:
    """Column names for :func:`herd_rows` and :func:`herd_table`."""
    return [say(lang, f"vet_col_{c}") for c in COLUMNS]


_URGENCY_RANK = {"emergency-notifiable": 0, "today": 1, "soon": 2, "routine": 3}


def notifiable(t: Triage) -> bool:
    """A suspicion of a notifiable disease, sure or not (status ok or uncertain)."""
    info = table()["conditions"].get(t.condition or "", {})
    return t.status in ("ok", "uncertain") and bool(info.get("notifiable"))


def herd_order(results: list[Triage]) -> list[Triage]:
    """Notifiable suspicions first, then by urgency; otherwise the upload order."""
    def key(it: tuple[int, Triage]) -> tuple:
        i, t = it
        return (not notifiable(t), t.status != "ok" if notifiable(t) else 0,
                _URGENCY_RANK.get(t.urgency or "", 4), i)

    return [t for _, t in sorted(enumerate(results), key=key)]


def reason_text(t: Triage, lang: str = "en") -> str:
    """The farmer-facing sentence for the answer's ``reason_code`` (empty without one)."""
    if not t.reason_code:
        return ""
    lang = _lang(lang)
    about = t.reason_about or ""
    names = table()["species_names"].get(about, {})
    return say(lang, f"vet_reason_{t.reason_code}",
               condition=condition_name(about, lang).lower(),
               species=names.get(lang, about),
               confidence=confidence_text(t))


def why_uncertain(t: Triage, lang: str = "en") -> str:
    """The reason for an ``uncertain`` row in words (empty otherwise)."""
    return reason_text(t, lang) if t.status == "uncertain" else ""


def herd_alert(results: list[Triage], lang: str = "en") -> str:
    """A red banner, in the answer's language, naming the photos with a notifiable suspicion."""
    hits = [t for t in results if notifiable(t)]
    if not hits:
        return ""
    names = ", ".join(html.escape(Path(t.file).name) for t in hits)
    words = say(lang, "vet_herd_alert", n=len(hits), names=names)
    return ('<div id="vet-herd-alert" style="background:#c62828;color:#fff;padding:10px 14px;'
            f'border-radius:8px;font-weight:600">⚠ {words}</div>')


def confidence_text(t: Triage) -> str:
    return f"{t.confidence:.0%}" if t.confidence is not None else MISSING


def herd_rows(results: list[Triage], lang: str = "en") -> list[list[str]]:
    """Rows in :func:`table_headers` order, notifiable suspicions first; "—" where empty."""
    lang = _lang(lang)
    rows = []
    for t in herd_order(results):
        urg = table()["urgency"][t.urgency][lang] if t.urgency else MISSING
        rows.append([
            Path(t.file).name, status_word(t, lang), species_word(t.species, lang),
            condition_name(t.condition, lang) if t.condition else MISSING,
            confidence_text(t), urg, why_uncertain(t, lang) or MISSING, advice_text(t, lang),
        ])
    return rows


def herd_table(results: list[Triage], lang: str = "en") -> str:
    """The herd as an HTML table that wraps to the screen; notifiable rows first, in red.

    Each cell carries its column name (``data-col``), so a phone shows one card per photo.
    """
    heads = table_headers(lang)
    head = "".join(f'<th class="c-{c}">{html.escape(h)}</th>'
                   for c, h in zip(COLUMNS, heads, strict=True))
    body = []
    for t, row in zip(herd_order(results), herd_rows(results, lang), strict=True):
        cls = ' class="notifiable"' if notifiable(t) else ""
        cells = "".join(f'<td class="c-{c}{" empty" if v == MISSING else ""}" '
                        f'data-col="{html.escape(h)}">{html.escape(v)}</td>'
                        for c, h, v in zip(COLUMNS, heads, row, strict=True))
        body.append(f"<tr{cls}>{cells}</tr>")
    return (f'<table class="vet-herd-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


# herd.csv: herd.json's fields under its names, the answer first, the numbers for logs last;
# the words the table shows follow the code they say (the status, then the result in
# words), under the table's column name in the answer's language.
CSV_ORDER = ("file", "status", "species", "species_p", "condition", "confidence", "urgency",
             "reason_code", "reason_about", "advice", "disclaimer", "top", "reason",
             "livestock_p", "ood_distance", "energy")
WORDS_AFTER = {"status": "result", "species": "species", "condition": "condition",
               "urgency": "urgency", "reason_code": "why"}


def csv_headers(lang: str = "en") -> list[str]:
    """herd.csv's one header row: each name once (a column of words named like a field,
    English "species", reads "species in words")."""
    fields = _csv_fields()
    heads = []
    for k in fields:
        heads.append(k)
        if k in WORDS_AFTER:
            word = say(lang, f"vet_col_{WORDS_AFTER[k]}")
            heads.append(say(lang, "vet_csv_words", name=word) if word in fields else word)
    return heads


def _csv_fields() -> list[str]:
    """:data:`CSV_ORDER`, then any field it does not name yet (none is ever left out)."""
    fields = [k for k in Triage.__dataclass_fields__ if k != "heatmap"]
    return [k for k in CSV_ORDER if k in fields] + [k for k in fields if k not in CSV_ORDER]


def _csv_words(t: Triage, column: str, lang: str) -> str:
    """A code in words, for herd.csv ("" where there is nothing to say)."""
    if column == "result":
        return status_word(t, lang)
    if column == "species":
        return species_word(t.species, lang) if t.species else ""
    if column == "condition":
        return condition_name(t.condition, lang) if t.condition else ""
    if column == "urgency":
        return table()["urgency"][t.urgency][lang] if t.urgency else ""
    return why_uncertain(t, lang)


def herd_csv(results: list[Triage], lang: str = "en") -> str:
    """Every field of every answer (codes and numbers), each code followed by its words, in
    table order: one header row (:func:`csv_headers`), one row a photo."""
    lang = _lang(lang)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csv_headers(lang))
    for t in herd_order(results):
        data, row = t.to_json(), []
        for k in _csv_fields():
            row.append(advice_text(t, lang) if k == "advice" else _cell(data[k], lang))
            if k in WORDS_AFTER:
                row.append(_csv_words(t, WORDS_AFTER[k], lang))
        writer.writerow(row)
    return buf.getvalue()


def _cell(value: Any, lang: str) -> str:
    if isinstance(value, dict) and set(value) >= {"en", "es"}:
        return value[lang]
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def herd_json(results: list[Triage]) -> str:
    """Every field of every answer, in table order (the same as ``python -m vet --json``)."""
    return json.dumps([t.to_json() for t in herd_order(results)], ensure_ascii=False, indent=1)


def herd_words(results: list[Triage], lang: str = "en") -> dict[str, Any]:
    """A herd's answers in words: ``{"rows", "headers", "table", "alert", "red", "csv",
    "json"}``. No model run: a language switch writes the herd again from it.

    ``red`` holds the indices of rows with a notifiable suspicion (always the first rows);
    ``table`` is the HTML the tab shows.
    """
    ordered = herd_order(results)
    return {"rows": herd_rows(results, lang), "headers": table_headers(lang),
            "table": herd_table(results, lang), "alert": herd_alert(results, lang),
            "red": [i for i, t in enumerate(ordered) if notifiable(t)],
            "csv": herd_csv(results, lang), "json": herd_json(results)}


def triage_many_for_ui(paths: list[Any], lang: str = "en", model: str | None = None,
                       names: list[str | None] | None = None) -> dict[str, Any]:
    """A herd for the tab: :func:`herd_words` plus ``"results"`` (each photo's Triage JSON,
    in upload order, which :func:`resay_herd` writes again in words). A photo's ``file`` is
    the name it was uploaded under (``names``, one a path; else the path's name), never the
    server's path."""
    files = [getattr(p, "name", p) for p in (paths or [])]
    names = list(names or []) + [None] * (len(files) - len(names or []))
    results = [_as_shown(t, n) for t, n in
               zip(triage_many(files, model=model, policy="release"), names, strict=True)]
    for t in results:
        if t.status == "error" and t.reason:
            log.info("photo not read: %s: %s", t.file, t.reason)
    return {**herd_words(results, lang), "results": [t.to_json() for t in results]}


def resay_herd(results: list[dict[str, Any]], lang: str = "en") -> dict[str, Any]:
    """:func:`herd_words` for kept Triage JSON (``triage_many_for_ui``'s ``results``)."""
    return herd_words([Triage(**r) for r in results], lang)
