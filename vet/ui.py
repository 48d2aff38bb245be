"""Plain functions for the Gradio tab; this module must never import gradio.

The app wires these to components: ``label`` -> gr.Label, ``badge`` and
``advice`` -> gr.Markdown/HTML, ``heatmap`` -> gr.Image, the rows of
:func:`triage_many_for_ui` -> gr.Dataframe with :func:`table_headers`.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from vet.pipeline import Triage, table, triage, triage_many

# Small photos shipped in the repository (licensed rows, held-out source groups of the
# shipped model; credits in vet/examples/CREDITS.md), so a Space has examples too.
EXAMPLES_DIR = Path(__file__).with_name("examples")
_STATUS = {
    "ok": {"en": "OK", "es": "OK"},
    "uncertain": {"en": "Uncertain", "es": "Incierto"},
    "not_livestock": {"en": "Not livestock", "es": "No es ganado"},
    "error": {"en": "Error", "es": "Error"},
}


def example_photos() -> list[str]:
    """The shipped example photos for gr.Examples (sorted by file name)."""
    return [str(p) for p in sorted(EXAMPLES_DIR.glob("*.jpg"))]


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
    label = {condition_name(d["label"], lang): d["p"] for d in t.top} if t.condition else {}
    return {"label": label, "badge": urgency_badge(t, lang), "advice": advice_markdown(t, lang),
            "heatmap": t.heatmap, "status": t.status, "result": t.to_json()}


def table_headers(lang: str = "en") -> list[str]:
    """Column names for :func:`triage_many_for_ui` rows."""
    if _lang(lang) == "es":
        return ["foto", "estado", "especie", "enfermedad", "confianza", "urgencia",
                "por qué incierto", "consejo"]
    return ["photo", "status", "species", "condition", "confidence", "urgency",
            "why uncertain", "advice"]


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


def why_uncertain(t: Triage, lang: str = "en") -> str:
    """The farmer-facing reason for an ``uncertain`` row (empty otherwise)."""
    if t.status != "uncertain" or not t.reason:
        return ""
    es = _lang(lang) == "es"
    r = t.reason
    if r.startswith("possible foot-and-mouth"):
        return ("posible fiebre aftosa: llame al veterinario" if es
                else "possible foot-and-mouth disease: call the vet")
    if r.startswith("unlike the training photos of "):
        cond = r[len("unlike the training photos of "):].split(" ", 1)[0]
        name = table()["conditions"].get(cond, {}).get("name", {}).get("es" if es else "en", cond)
        return (f"la foto no se parece a las fotos de {name.lower()} con que aprendió" if es
                else f"photo unlike the {name.lower()} photos the model learned from")
    if r.startswith("unlike the training photos"):
        return ("la foto no se parece a las fotos de entrenamiento" if es
                else "photo unlike the photos the model learned from")
    if r.startswith("unsure, and it may be a "):
        species = r[len("unsure, and it may be a "):]
        names = table()["species_names"].get(species, {"en": species, "es": species})
        return (f"no está seguro, y puede ser {names['es']}: pruebe otra foto más clara" if es
                else f"unsure, and it may be a {names['en']}: try a clearer photo")
    if r.startswith("low confidence"):
        return f"confianza baja{r[len('low confidence'):]}" if es else r
    if r.startswith("no sign of the conditions it can screen"):
        return ("sin signos de lo que puede revisar en esta especie" if es
                else "no sign of what it can screen in this species")
    if r.startswith("species unclear"):
        return ("no se sabe bien la especie: pruebe otra foto del animal entero" if es
                else "species unclear: try another photo of the whole animal")
    if "no condition can be screened" in r:
        return ("especie que el escáner no puede revisar" if es
                else "a species the scanner cannot screen")
    return r


def herd_alert(results: list[Triage]) -> str:
    """A red banner, in English and Spanish, naming the photos with a notifiable suspicion."""
    hits = [t for t in results if notifiable(t)]
    if not hits:
        return ""
    names = ", ".join(html.escape(Path(t.file).name) for t in hits)
    en = (f"Possible notifiable disease in {len(hits)} photo(s): {names}. Isolate those "
          "animals, stop all animal movement and call the official veterinarian now.")
    es = (f"Posible enfermedad de declaración obligatoria en {len(hits)} foto(s): {names}. "
          "Aísle esos animales, detenga todo movimiento de animales y llame ya al "
          "veterinario oficial.")
    return ('<div id="vet-herd-alert" style="background:#c62828;color:#fff;padding:10px 14px;'
            f'border-radius:8px;font-weight:600">⚠ {en}<br>⚠ {es}</div>')


def herd_rows(results: list[Triage], lang: str = "en") -> list[list]:
    """Rows in :func:`table_headers` order, notifiable suspicions first."""
    lang = _lang(lang)
    rows = []
    for t in herd_order(results):
        urg = table()["urgency"][t.urgency][lang] if t.urgency else ""
        rows.append([
            Path(t.file).name, _STATUS[t.status][lang], t.species or "",
            condition_name(t.condition, lang) if t.condition else "",
            round(t.confidence, 3) if t.confidence is not None else None, urg,
            why_uncertain(t, lang), t.advice.get(lang, "") or (t.reason or ""),
        ])
    return rows


def triage_many_for_ui(paths: list[Any], lang: str = "en",
                       model: str | None = None) -> dict[str, Any]:
    """A herd for the tab: ``{"rows", "headers", "alert", "red"}``.

    ``red`` holds the indices of rows with a notifiable suspicion (always the
    first rows), for the app to colour.
    """
    files = [getattr(p, "name", p) for p in (paths or [])]
    results = triage_many(files, model=model, policy="release")
    ordered = herd_order(results)
    return {"rows": herd_rows(results, lang), "headers": table_headers(lang),
            "alert": herd_alert(results),
            "red": [i for i, t in enumerate(ordered) if notifiable(t)]}
