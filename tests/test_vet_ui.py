"""What the Vet tab shows, from real photos through the shipped model: every word in the
answer language, a herd table that reads without a legend, downloads with every field."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import ui_text
from vet.pipeline import Triage, table
from vet.ui import (
    MISSING,
    WORDS_AFTER,
    csv_headers,
    herd_table,
    resay_herd,
    resay_one,
    species_word,
    status_word,
    table_headers,
    triage_many_for_ui,
    triage_one_for_ui,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "vet" / "examples"
WORDS = ("label", "badge", "advice")


@pytest.fixture(scope="module")
def herd_files(shared_data) -> list[str]:
    cond = shared_data / "livestock" / "conditions"
    page = next((shared_data / "pages" / "dta_text").glob("*.png"))
    return [str(EXAMPLES / "healthy_cow.jpg"), str(next((cond / "mastitis").glob("*.jpg"))),
            str(EXAMPLES / "fmd_cow_mouth.jpg"), str(page)]


def english_words() -> set[str]:
    """Every English word the table and the tab could show, to be absent from Spanish."""
    tab = table()
    words = {u["en"] for u in tab["urgency"].values()}
    words |= {c["name"]["en"] for c in tab["conditions"].values() if c["name"]["en"] !=
              c["name"]["es"]}
    words |= {species_word(s, "en") for s in tab["species_names"]} | {"unknown"}
    words |= set(table_headers("en"))
    return words


@pytest.fixture(scope="module")
def herds(herd_files) -> dict[str, dict]:
    """The herd answered once in each language."""
    return {lang: triage_many_for_ui(herd_files, lang) for lang in ("en", "es")}


def test_a_spanish_herd_is_spanish_in_every_cell(herds):
    herd = herds["es"]
    cells = [c for row in herd["rows"] for c in row[1:]]  # the photo names are the files'
    english = english_words()
    assert not [c for c in cells if c in english or c.lower() in english], cells
    first = herd["rows"][0]
    assert first[0] == "fmd_cow_mouth.jpg"
    assert first[1] == "Enfermedad de declaración obligatoria"  # an emergency never reads "OK"
    assert first[4].endswith("%") and 0 < int(first[4][:-1]) <= 100
    page_row = next(r for r in herd["rows"] if r[0].endswith(".png"))
    assert page_row[1] == "No es ganado" and page_row[2:7] == [MISSING] * 5
    cow = next(r for r in herd["rows"] if r[0] == "healthy_cow.jpg")
    assert cow[2] == "vaca"  # a bare noun, not "una vaca"
    # the table shows it; the notifiable rows come first and carry the red class
    html = herd["table"]
    assert html.index("fmd_cow_mouth.jpg") < html.index("healthy_cow.jpg")
    assert html.count('class="notifiable"') == len(herd["red"]) >= 1
    assert "<th class=\"c-advice\">qué hacer</th>" in html and "nan" not in html


def test_the_downloads_hold_every_field_of_every_answer(herds, herd_files):
    herd = herds["en"]
    answers = json.loads(herd["json"])
    assert [a["file"] for a in answers] == [r[0] for r in herd["rows"]]  # names, no folder
    assert sorted(a["file"] for a in answers) == sorted(Path(f).name for f in herd_files)
    fields = [k for k in Triage.__dataclass_fields__ if k != "heatmap"]
    assert all(set(a) == set(fields) for a in answers)
    lines = list(csv.reader(io.StringIO(herd["csv"])))
    header = lines[0]
    assert len(header) == len(set(header)), header  # one header row, each name once
    assert len(lines) == len(herd_files) + 1 and all(len(r) == len(header) for r in lines)
    assert set(fields) <= set(header) and header[:3] == ["file", "status", "result"]
    for code, column in WORDS_AFTER.items():  # the words right after the code they say
        words = header[header.index(code) + 1]
        assert words.startswith(ui_text.say("en", f"vet_col_{column}")), (code, words)
    assert "species in words" in header and "condition in words" in header
    rows = list(csv.DictReader(io.StringIO(herd["csv"])))
    assert rows[0]["status"] in ("ok", "uncertain") and rows[0]["urgency"] == \
        "emergency-notifiable"
    assert rows[0]["condition in words"] == "Foot-and-mouth disease"
    assert float(rows[0]["confidence"]) == answers[0]["confidence"]  # the number, unrounded
    assert rows[0]["advice"] == answers[0]["advice"]["en"]
    assert "/" not in "".join(r["file"] for r in rows)
    es = next(csv.reader(io.StringIO(herds["es"]["csv"])))
    assert es[:3] == ["file", "status", "resultado"] and "especie" in es  # no clash to mend
    assert csv_headers("es") == es and csv_headers("en") == header


def test_a_herd_is_written_again_in_the_other_language_without_the_model(herds, monkeypatch):
    import vet.ui

    def no_model(*args, **kwargs):
        raise AssertionError("the model ran again")

    monkeypatch.setattr(vet.ui, "triage_many", no_model)
    for old, new in (("en", "es"), ("es", "en")):
        again = resay_herd(herds[old]["results"], new)
        for key in ("rows", "headers", "table", "alert", "red", "csv", "json"):
            assert again[key] == herds[new][key], (old, new, key)


def test_a_bad_file_in_a_herd_is_its_own_row_named_as_the_farmer_named_it(tmp_path):
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    herd = triage_many_for_ui([str(empty), str(EXAMPLES / "healthy_cow.jpg")], "es",
                              names=["vaca! del potrero: 3.jpg"])
    got = {r["file"]: r for r in herd["results"]}
    assert set(got) == {"vaca! del potrero: 3.jpg", "healthy_cow.jpg"}
    bad = got["vaca! del potrero: 3.jpg"]
    assert bad["status"] == "error" and bad["reason_code"] == "unreadable"
    assert str(tmp_path) not in json.dumps(herd["results"]) + herd["csv"] + herd["table"]
    assert got["healthy_cow.jpg"]["status"] == "ok"
    row = next(r for r in csv.DictReader(io.StringIO(herd["csv"])) if r["status"] == "error")
    assert row["advice"] == ui_text.say("es", "vet_unreadable")  # a sentence, not "{}"
    assert row["resultado"] == "Foto no leída"


def test_a_page_scan_says_why_there_is_no_condition_or_heatmap(herd_files):
    out = triage_one_for_ui(herd_files[-1], "es")
    assert out["status"] == "not_livestock"
    assert out["label"] == "No es ganado" and out["heatmap"] is None
    assert "animal de granja" in out["advice"] and "no es un diagnóstico" in out["advice"]
    none = triage_one_for_ui(None, "es")
    assert none["label"] == "Foto no leída" and "Aún no hay foto" in none["advice"]


def test_an_unreadable_file_gets_a_plain_sentence(tmp_path):
    bad = tmp_path / "photo.jpg"
    bad.write_bytes(b"this is not a jpeg")
    out = triage_one_for_ui(str(bad), "en")
    assert out["status"] == "error"
    assert "could not be read as a photo" in out["advice"] and "PIL" not in out["advice"]
    assert out["result"]["reason"]  # the technical reason stays in the data


def test_status_and_species_words():
    fmd = Triage(file="a.jpg", status="ok", condition="fmd", confidence=0.9,
                 urgency="emergency-notifiable")
    unsure = Triage(file="b.jpg", status="uncertain", condition="fmd", confidence=0.3,
                    urgency="emergency-notifiable")
    calm = Triage(file="c.jpg", status="ok", condition="healthy", confidence=0.9,
                  urgency="routine")
    assert [status_word(t, "en") for t in (fmd, unsure, calm)] == [
        "Notifiable disease", "Possible notifiable disease", "Clear answer"]
    assert species_word("pig", "es") == "cerdo" and species_word("unknown", "es") == "desconocida"
    assert species_word(None, "en") == MISSING
    html = herd_table([calm, fmd], "en")
    assert html.index("a.jpg") < html.index("c.jpg")  # notifiable first


def test_one_photo_says_why_it_is_unsure_in_the_answers_language(shared_data):
    # a real goat that the condition head calls healthy cattle: held back as maybe_not_cattle
    goat = shared_data / "livestock/species/validation/goat/14000071163_7b24230c9b_t.jpg"
    es = triage_one_for_ui(str(goat), "es")
    assert es["status"] == "uncertain" and es["result"]["reason_code"] == "maybe_not_cattle"
    assert "**Por qué no está seguro:** el escáner solo lo dice para vacas" in es["advice"]
    en = triage_one_for_ui(str(goat), "en")
    assert "**Why it is unsure:** the scanner names this for cattle only" in en["advice"]
    assert "Por qué" not in en["advice"] and "Why" not in es["advice"]
    calm = triage_one_for_ui(str(EXAMPLES / "healthy_cow.jpg"), "en")
    assert calm["status"] == "ok" and "Why it is unsure" not in calm["advice"]
    # written again in the other language from what the tab keeps: the same words
    for old, new in ((en, es), (es, en)):
        again = resay_one(old["result"], "es" if new is es else "en")
        assert again == {k: new[k] for k in WORDS}
    assert es["result"]["file"] == goat.name  # the name, not the folder


def test_the_tab_keeps_the_answer_and_rewrites_it_only_when_it_follows_the_page(tmp_path):
    """What tabs/vet.py wires: a photo as gradio hands it over unprocessed (preprocess=False),
    the answer kept, a language switch (relang) and the answer-language radio."""
    from tabs.vet import _forget_one, vet_answer, vet_relang, vet_resay

    empty = tmp_path / "ab12cd" / "vaca 3.jpg"  # gradio's folder, its name without the "!"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    upload = {"path": str(empty), "orig_name": "vaca! 3.jpg",
              "meta": {"_type": "gradio.FileData"}}
    label, badge, advice, heat, kept = vet_answer(upload, "auto", "en")
    assert label == "Photo not read" and "could not be read as a photo" in advice
    assert heat["visible"] is False and kept["result"]["file"] == "vaca! 3.jpg"
    # the page switched to Spanish: the answer follows it, the herd (none) stays as it is
    said = vet_relang(kept, None, "auto", "es")
    assert said[0] == "Foto no leída" and "Foto no leída" in said[1]
    assert ui_text.say("es", "vet_unreadable") in said[2] and "could not" not in said[2]
    assert all(u == {"__type__": "update"} for u in said[3:])
    # an answer language the farmer picked stays after a switch; the radio itself rewrites
    assert all(u == {"__type__": "update"} for u in vet_relang(kept, None, "en", "es"))
    assert vet_resay(kept, None, "en", "es")[0] == "Photo not read"
    # a sentence instead of an answer is kept too; a new photo forgets it all
    herd = vet_resay(None, {"say": "vet_herd_empty"}, "auto", "es")
    assert ui_text.say("es", "vet_herd_empty") in herd[4] and herd[5] is None
    assert _forget_one()[:3] == (None, "", "") and _forget_one()[-1] is None


def test_the_example_photos_name_their_authors_and_licence_in_words():
    """A repository path means nothing to a farmer: the label names the source and licence."""
    credits = (ROOT / "vet" / "examples" / "CREDITS.md").read_text(encoding="utf-8")
    sources = {(row[3].split(",")[0].strip(), row[4].strip()) for row in
               (line.split("|") for line in credits.splitlines() if line.startswith("| `"))}
    assert sources
    for lang in ("en", "es"):
        label = ui_text.say(lang, "vet_examples")
        assert "CREDITS" not in label and "vet/" not in label and ".md" not in label
        for repo, licence in sources:
            owner, name = repo.split("/")
            assert owner in label and name in label and licence in label, (lang, repo)


def test_every_status_and_column_reads_in_both_languages_from_ui_strings():
    """The tab's words live in ui_strings/vet.json: a status it has no words for reads as a
    photo not read, never as its code."""
    statuses = ("ok", "uncertain", "not_livestock", "error", "something_new")
    assert [status_word(Triage(file="x", status=s), "es") for s in statuses] == [
        "Respuesta clara", "No está seguro", "No es ganado", "Foto no leída", "Foto no leída"]
    assert [status_word(Triage(file="x", status=s), "en") for s in statuses] == [
        "Clear answer", "Unsure", "Not livestock", "Photo not read", "Photo not read"]
    assert table_headers("es") == ["foto", "resultado", "especie", "afección", "confianza",
                                   "urgencia", "por qué no está seguro", "qué hacer"]
    assert table_headers("fr") == table_headers("en") and table_headers("en")[0] == "photo"
