"""Plain functions for the Gradio tab; this module must never import gradio.

The app wires these to components: ``label`` -> gr.Label, ``badge`` and
``advice`` -> gr.Markdown/HTML, ``heatmap`` -> gr.Image, the rows of
:func:`triage_many_for_ui` -> gr.Dataframe with :func:`table_headers`.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from vet.pipeline import Triage, table, triage, triage_many

# Photos from held-out source groups (test fold 0) of the conditions data set.
_EXAMPLES = (
    "livestock/conditions/lumpy_skin/00450f3e7622c1ff.jpg",
    "livestock/conditions/healthy/01f8946aa93fd1f9.jpg",
    "livestock/conditions/pinkeye/0044a0d9d2ad2386.jpg",
    "livestock/conditions/mastitis/01461284c225134b.jpg",
)
_STATUS = {
    "ok": {"en": "OK", "es": "OK"},
    "uncertain": {"en": "Uncertain", "es": "Incierto"},
    "not_livestock": {"en": "Not livestock", "es": "No es ganado"},
    "error": {"en": "Error", "es": "Error"},
}


def shared_data_dir() -> Path:
    """``BORDE_SHARED_DATA`` or ``../shared/data`` next to the repository."""
    env = os.environ.get("BORDE_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def example_photos() -> list[str]:
    """A few real photos for gr.Examples; [] where the shared data is not mounted."""
    root = shared_data_dir()
    return [str(root / rel) for rel in _EXAMPLES if (root / rel).is_file()]


def _lang(lang: str) -> str:
    return lang if lang in ("en", "es") else "en"


def condition_name(label: str, lang: str = "en") -> str:
    info = table()["conditions"].get(label)
    return info["name"][_lang(lang)] if info else label


def urgency_badge(t: Triage, lang: str = "en") -> str:
    """A coloured HTML badge: urgency for a result, otherwise the status."""
    lang = _lang(lang)
    if t.status in ("ok", "uncertain") and t.urgency:
        u = table()["urgency"][t.urgency]
        text, color = u[lang], u["color"]
        if t.status == "uncertain":
            text = f"{text} · {_STATUS['uncertain'][lang]}"
    else:
        text, color = _STATUS[t.status][lang], "#616161"
    return (f'<span style="background:{color};color:#fff;padding:4px 10px;border-radius:12px;'
            f'font-weight:600">{html.escape(text)}</span>')


def advice_markdown(t: Triage, lang: str = "en") -> str:
    """Advice, species, reason and the one-line disclaimer as markdown."""
    lang = _lang(lang)
    lines = []
    if t.condition:
        lines.append(f"**{condition_name(t.condition, lang)}** ({t.confidence:.0%})")
    if t.species:
        lines.append(f"{'Species' if lang == 'en' else 'Especie'}: {t.species}")
    if t.advice:
        lines.append(t.advice.get(lang, ""))
    if t.status == "error" and t.reason:
        lines.append(f"{'Could not read the photo' if lang == 'en' else 'No se pudo leer la foto'}"
                     f": {t.reason}")
    lines.append(f"_{t.disclaimer.get(lang, '')}_")
    return "\n\n".join(x for x in lines if x)


def triage_one_for_ui(image: Any, lang: str = "en", model: str | None = None) -> dict[str, Any]:
    """One photo for the tab.

    Returns ``{"label": {name: p}, "badge": html, "advice": markdown,
    "heatmap": PIL.Image | None, "status": str, "result": dict}``.
    """
    if image is None:
        t = Triage(file="", status="error", reason="no photo given",
                   disclaimer=dict(table()["disclaimer"]))
    else:
        t = triage(image, model=model, heatmap=True)
    label = {condition_name(d["label"], lang): d["p"] for d in t.top}
    return {"label": label, "badge": urgency_badge(t, lang), "advice": advice_markdown(t, lang),
            "heatmap": t.heatmap, "status": t.status, "result": t.to_json()}


def table_headers(lang: str = "en") -> list[str]:
    """Column names for :func:`triage_many_for_ui` rows."""
    if _lang(lang) == "es":
        return ["foto", "estado", "especie", "enfermedad", "confianza", "urgencia", "consejo"]
    return ["photo", "status", "species", "condition", "confidence", "urgency", "advice"]


def triage_many_for_ui(paths: list[Any], lang: str = "en",
                       model: str | None = None) -> list[list]:
    """Rows for a herd results table, in :func:`table_headers` order."""
    lang = _lang(lang)
    files = [getattr(p, "name", p) for p in (paths or [])]
    rows = []
    for t in triage_many(files, model=model, policy="release"):
        urg = table()["urgency"][t.urgency][lang] if t.urgency else ""
        rows.append([
            Path(t.file).name, _STATUS[t.status][lang], t.species or "",
            condition_name(t.condition, lang) if t.condition else "",
            round(t.confidence, 3) if t.confidence is not None else None, urg,
            t.advice.get(lang, "") or (t.reason or ""),
        ])
    return rows
