"""The curator's review: candidates kept for review, review.html, archive.apply, sticky choices."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import archive
from archive import decisions
from archive.review import write_review
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf
from tests.zips import kept_by_key, region_rows

ROOT = Path(__file__).resolve().parents[1]
OPTS = dict(size=128)


def entries(path: Path) -> dict[str, object]:
    """Every entry's CRC; the manifest without its wall-time column."""
    with zipfile.ZipFile(path) as zf:
        out: dict[str, object] = {i.filename: i.CRC for i in zf.infolist()}
        out["manifest.csv"] = [r[:-1] for r in csv.reader(io.StringIO(zf.read("manifest.csv")
                                                                      .decode()))]
    return out


@pytest.fixture(scope="module")
def built(shared_data, tmp_path_factory) -> tuple[Path, Path]:
    """A chapbook of real pages (one repeated) and its dataset, with candidates kept."""
    folder = tmp_path_factory.mktemp("review")
    pages = chapbook_pages(shared_data)[:8]
    text = [p for p, _ in labelled_pages(shared_data) if "dta_text" in str(p)][:2]
    pdf = scans_pdf(folder / "chapbook.pdf", [*pages, pages[0], *text])
    out = folder / "ds.zip"
    archive.build_dataset([pdf], out, **OPTS)
    return pdf, out


def edit(rows: list[dict[str, str]], path: Path) -> dict[str, str]:
    """Drop one kept item, keep one doubtful candidate and one duplicate; write the CSV."""
    kept = next(r for r in rows if r["kept"] == "1")
    doubtful = next(r for r in rows if r["file_name"].startswith("candidates/")
                    and not r["reason"].startswith("duplicate"))
    dup = next(r for r in rows if r["reason"].startswith("duplicate of "))
    kept["decision"], doubtful["decision"], dup["decision"] = "drop", "keep", "keep"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return {"dropped": kept["file_name"], "kept": doubtful["file_name"],
            "dup": dup["file_name"]}


def test_candidates_are_kept_for_review_and_never_trained_on(built):
    _, out = built
    rows = region_rows(out)
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        meta = [json.loads(x) for x in zf.read("metadata.jsonl").decode().splitlines()]
        info = json.loads(zf.read("build.json"))
    stored = [r for r in rows if r["file_name"].startswith("candidates/")]
    assert stored and all(r["kept"] == "0" and r["file_name"] in names for r in stored)
    assert all(float(r["score"]) >= info["review_floor"] for r in stored)
    assert {m["file_name"] for m in meta} == {r["file_name"] for r in rows if r["kept"] == "1"}
    assert not any(m["file_name"].startswith("candidates/") for m in meta)
    assert any(r["reason"].startswith("duplicate of images/") for r in stored)


def test_apply_gives_the_bytes_of_a_build_with_the_same_decisions(built, tmp_path):
    pdf, out = built
    choice = edit(region_rows(out), tmp_path / "edited.csv")
    proc = subprocess.run(
        [sys.executable, "-m", "archive.apply", str(out), str(tmp_path / "edited.csv"),
         "-o", str(tmp_path / "curated.zip")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    fresh = tmp_path / "fresh.zip"
    archive.build_dataset([pdf], fresh, decisions=decisions.load(tmp_path / "edited.csv"),
                          **OPTS)
    assert entries(tmp_path / "curated.zip") == entries(fresh)
    after = {r["file_name"].split("/", 1)[1]: r for r in region_rows(tmp_path / "curated.zip")
             if r["file_name"]}
    before = {r["file_name"].split("/", 1)[1]: r for r in region_rows(out) if r["file_name"]}
    changed = {k for k in before if before[k]["kept"] != after[k]["kept"]}
    assert changed == {choice[k].split("/", 1)[1] for k in ("dropped", "kept", "dup")}
    assert decisions.sidecar(tmp_path / "curated.zip").exists()


def test_decisions_survive_an_interrupted_build_and_its_resume(built, tmp_path):
    pdf, out = built
    edit(region_rows(out), tmp_path / "edited.csv")
    target = tmp_path / "again.zip"
    decisions.save(decisions.sidecar(target), decisions.load(tmp_path / "edited.csv"))

    def stop_after_5(event):
        if event.done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        archive.build_dataset([pdf], target, progress=stop_after_5, **OPTS)
    archive.build_dataset([pdf], target, resume=True, **OPTS)
    reference = tmp_path / "reference.zip"
    archive.build_dataset([pdf], reference, decisions=decisions.load(tmp_path / "edited.csv"),
                          **OPTS)
    assert entries(target) == entries(reference)
    assert entries(target) != entries(out)


def test_review_html_lists_every_candidate_and_needs_no_network(built, tmp_path):
    _, out = built
    page = write_review(out, tmp_path / "review.html").read_text(encoding="utf-8")
    stored = [r for r in region_rows(out) if r["file_name"]]
    keys = re.findall(r'data-key="([^"]+)"', page)
    assert sorted(keys) == sorted(f"{r['source']}|{r['page']}|{r['index']}" for r in stored)
    assert page.count('src="data:image/jpeg;base64,') == len(stored)
    assert not re.search(r'(src|href)="(https?:)?//', page) and "@import" not in page
    scores = [float(r["score"]) for r in stored if not r["reason"].startswith("duplicate")]
    first = next(r for r in stored if f"{r['source']}|{r['page']}|{r['index']}" == keys[0])
    assert abs(float(first["score"]) - 0.5) == min(abs(s - 0.5) for s in scores)


def test_apply_refuses_what_it_cannot_do_without_decoding(built, tmp_path):
    _, out = built
    rows = region_rows(out)
    unstored = next(r for r in rows if not r["file_name"])
    unstored["decision"] = "keep"
    with open(tmp_path / "bad.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    proc = subprocess.run(
        [sys.executable, "-m", "archive.apply", str(out), str(tmp_path / "bad.csv"),
         "-o", str(tmp_path / "c.zip")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "under the floor" in proc.stderr
    assert not (tmp_path / "c.zip").exists() and not (tmp_path / "c.zip.partial").exists()
    (tmp_path / "typo.csv").write_text("source,page,index,decision\nchapbook,1,1,maybe\n")
    proc = subprocess.run(
        [sys.executable, "-m", "archive.apply", str(out), str(tmp_path / "typo.csv"),
         "-o", str(tmp_path / "c.zip")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "keep, drop or empty" in proc.stderr


def test_review_and_apply_name_what_is_wrong_with_their_input(tmp_path, shared_data):
    photo = next((shared_data / "pdfs").iterdir())
    fake = tmp_path / "ds.zip"
    fake.write_bytes(photo.read_bytes())
    old = tmp_path / "old.zip"
    with zipfile.ZipFile(old, "w") as zf:
        zf.writestr("manifest.csv", "source,page\n")
    for cmd, path, words in (
        (["archive.review"], fake, "cannot read dataset"),
        (["archive.review"], tmp_path / "missing.zip", "cannot read dataset"),
        (["archive.review"], old, "not a dataset zip of this version"),
        (["archive.apply", "-o", str(tmp_path / "c.zip")], fake, "cannot read"),
    ):
        extra = [str(tmp_path / "none.csv")] if cmd[0] == "archive.apply" else []
        proc = subprocess.run([sys.executable, "-m", *cmd[:1], str(path), *extra, *cmd[1:]],
                              cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert words in proc.stderr, proc.stderr


def test_the_tab_rebuild_says_what_changed_and_regions_csv_says_the_curator_decided(built):
    """In the curated zip, a decision's reason is the curator's; the finder's is kept beside
    it, so the curated zip replayed without decisions is the build again."""
    from archive.apply import apply
    from archive.ui import rebuild, review_gallery, start_review, toggle
    from ui_text import sayer

    _, out = built
    review = start_review(out)
    tiles = review_gallery(review, sayer("en"))
    kept_one = next(i for i, r in enumerate(review.shown) if r.kept)
    dropped_one = next(i for i, r in enumerate(review.shown) if not r.kept
                       and not r.reason.startswith("duplicate"))
    assert tiles[kept_one][1].startswith("✓ ") and tiles[dropped_one][1].startswith("✗ ")
    toggle(review, kept_one)
    toggle(review, dropped_one)
    # a click redraws the crops it flipped alone: every other tile keeps its file
    again = review_gallery(review, sayer("en"))
    flipped = {kept_one, dropped_one}
    assert all((a[0] == b[0]) == (i not in flipped)
               for i, (a, b) in enumerate(zip(tiles, again, strict=True)))
    assert again[kept_one][1].startswith("✗ ") and Path(again[kept_one][0]).is_file()
    path, message = rebuild(review, sayer("en"))
    assert message.startswith(f"Rebuilt {path.name}: 1 crop(s) added and 1 removed by you")
    assert f"(the build had {review.items})" in message and str(path.parent) not in message
    rows = {(r["page"], r["index"]): r for r in region_rows(path)}
    for i, reason in ((kept_one, "dropped_by_curator"), (dropped_one, "kept_by_curator")):
        r = review.shown[i]
        row = rows[(str(r.page), str(r.index))]
        assert row["reason"] == reason and row["finder_reason"] == r.reason
    again, _ = apply(path, {}, path.with_name("replayed.zip"))
    assert kept_by_key(again) == kept_by_key(out)
    es = rebuild(review, sayer("es"))[1]
    assert es.startswith("Rehecho") and "quitados por usted" in es


def test_the_tab_takes_decisions_from_a_file_as_apply_does(built, tmp_path):
    """An edited regions.csv uploaded to the tab gives the zip ``archive.apply`` gives with it;
    rows for another build's crops are counted and left out; a bad file changes nothing."""
    from archive.apply import apply
    from archive.errors import ArchiveError
    from archive.ui import rebuild, start_review, take_decisions
    from ui_text import sayer

    _, out = built
    rows = region_rows(out)
    stranger = {**rows[0], "source": "another.pdf", "decision": "drop"}
    edit(rows, tmp_path / "regions.csv")
    with open(tmp_path / "regions.csv", "a", newline="", encoding="utf-8") as fh:
        csv.DictWriter(fh, fieldnames=list(rows[0])).writerow(stranger)
    review = start_review(out)
    said = take_decisions(review, tmp_path / "regions.csv", sayer("en"))
    assert said == ("Took 3 decision(s) from regions.csv; the crops above show them: **Rebuild "
                    "zip** to apply them. 1 row(s) name crops this build does not hold and were "
                    "left out."), said
    assert "Se tomaron 3" in take_decisions(start_review(out), tmp_path / "regions.csv",
                                            sayer("es"))
    path, message = rebuild(review, sayer("en"))
    assert message.startswith(f"Rebuilt {path.name}: 2 crop(s) added and 1 removed by you")
    by_apply, _ = apply(out, decisions.load(tmp_path / "regions.csv"), tmp_path / "cli.zip")
    assert kept_by_key(path) == kept_by_key(by_apply) != kept_by_key(out)

    other = start_review(out)
    only_stranger = tmp_path / "theirs.csv"
    with open(only_stranger, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerow(stranger)
    assert take_decisions(other, only_stranger, sayer("en")).startswith(
        "theirs.csv holds no keep or drop decision for a crop of this build (1 decision(s)")
    bad = tmp_path / "bad.csv"
    bad.write_text("file_name,kept\nimages/a.jpg,1\n", encoding="utf-8")
    with pytest.raises(ArchiveError, match="no decision, index, page, source column"):
        take_decisions(other, bad, sayer("en"))
    assert other.decisions == {}


def test_a_dropped_original_takes_its_copies_with_it(built, tmp_path):
    """The review shows a copy under its original, dropped; when the curator drops the
    original, the copy stays dropped (in the tab's rebuild, in apply, in a build)."""
    from archive.apply import apply

    pdf, out = built
    rows = region_rows(out)
    dup = next(r for r in rows if r["reason"].startswith("duplicate of "))
    original = next(r for r in rows if r["file_name"] == dup["reason"][len("duplicate of "):])
    assert original["kept"] == "1" and dup["kept"] == "0"
    choice = {(original["source"], int(original["page"]), int(original["index"])): "drop"}
    curated, _ = apply(out, choice, tmp_path / "curated.zip")
    kept = kept_by_key(curated)
    assert not kept[f"{original['page']}#{original['index']}"]
    assert not kept[f"{dup['page']}#{dup['index']}"]
    assert sum(kept.values()) == sum(kept_by_key(out).values()) - 1
    by_build = tmp_path / "build.zip"
    archive.build_dataset([pdf], by_build, decisions=choice, **OPTS)
    assert kept_by_key(by_build) == kept


def test_a_review_whose_build_was_removed_says_so_in_the_tab(built, tmp_path):
    """A build removed from the server (``archive.ui.sweep_jobs``) is a sentence in the
    curator's language, never a traceback; a review in use keeps its build fresh."""
    import os
    import shutil

    import app
    from archive.ui import build_gone, start_review

    _, out = built
    job = tmp_path / "borde-archive-x"
    job.mkdir()
    copy = Path(shutil.copy(out, job / out.name))
    review = start_review(copy)
    os.utime(job, (0, 0))
    assert not build_gone(review) and job.stat().st_mtime > 0  # looked at: in use again
    copy.unlink()
    assert build_gone(review)
    zip_out, said, _ = app.archive_rebuild(review, None, "es")
    assert said.startswith("Este dataset ya no está en el servidor") and "24 horas" in said
    assert str(job) not in said
    tiles, kept, said, _, _ = app.archive_decisions(review, None, 48, "en")
    assert tiles == [] and kept is None and said.startswith("This build is no longer")
    assert app.archive_show(review, 48, "en") == []


def test_a_bad_decisions_file_is_one_spanish_sentence_with_its_name_only(built, shared_data,
                                                                          tmp_path):
    """A spreadsheet's binary file and a CSV with the wrong columns, uploaded (or given to the
    API) from gradio's folder: a sentence in the page's language naming the file, never the
    folder, never Python's codec text; the review's decisions stay as they were."""
    import app
    from archive.ui import start_review
    from ui_text import say

    folder = tmp_path / "gradio" / "9c1d2e"  # where gradio keeps an upload
    folder.mkdir(parents=True)
    binary = folder / "decisiones.csv"
    binary.write_bytes(chapbook_pages(shared_data)[0].read_bytes())  # a JPEG: 0xff first
    columns = folder / "columnas.csv"
    columns.write_text("file_name,kept\nimages/a.jpg,1\n", encoding="utf-8")
    review = start_review(out := built[1])
    expected = {
        binary: say("es", "archive_decisions_bad", detail=say(
            "es", "archive_error_decisions_unreadable", name="decisiones.csv")),
        columns: say("es", "archive_decisions_bad", detail=say(
            "es", "archive_error_decisions_columns", name="columnas.csv",
            columns="decision, index, page, source")),
    }
    for path, sentence in expected.items():
        _, _, said, _, _ = app.archive_decisions(review, str(path), 48, "es")
        assert said == sentence, said
        assert str(folder) not in said and "codec" not in said and "0xff" not in said
        zip_path, message, _ = app.archive_rebuild(review, str(path), "es")
        assert message.startswith("Rehecho") and message.endswith(sentence), message
        assert review.decisions == {} and str(folder) not in message
    english = app.archive_decisions(review, str(binary), 48, "en")[2]
    assert english.startswith("The decisions were not taken: decisiones.csv is not a text CSV")
    assert out.exists()


def test_a_crop_the_curator_keeps_is_a_picture_in_metadata(built, tmp_path):
    """An ornament the curator keeps is a ``picture`` in metadata.jsonl, with the finder's
    verdict in ``finder_kind`` and ``decided_by: curator``; the finder's own keeps say
    ``finder``. The tab's rebuild and ``python -m archive.apply`` write the same rows."""
    from archive.records import PICTURE_KINDS
    from archive.ui import rebuild, start_review, toggle
    from ui_text import sayer

    _, out = built
    review = start_review(out)
    review.shown = review.order
    flip = next(i for i, r in enumerate(review.order)
                if not r.kept and r.kind not in PICTURE_KINDS and not r.reason.startswith("dup"))
    chosen = review.order[flip]
    toggle(review, flip)
    path, _ = rebuild(review, sayer("en"))
    with zipfile.ZipFile(path) as zf:
        rows = {m["file_name"]: m for m in map(json.loads, zf.read("metadata.jsonl").decode()
                                                .splitlines())}
    mine = rows[chosen.file_name.replace("candidates/", "images/")]
    assert mine["kind"] == "picture" and mine["finder_kind"] == chosen.kind != "picture"
    assert mine["decided_by"] == "curator"
    others = [m for name, m in rows.items() if m is not mine]
    assert others and all(m["decided_by"] == "finder" and m["kind"] == m["finder_kind"]
                          for m in others)
    choice = tmp_path / "keep.csv"
    choice.write_text(f"source,page,index,decision\n{chosen.source},{chosen.page},"
                      f"{chosen.index},keep\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "archive.apply", str(out), str(choice), "-o",
                           str(tmp_path / "cli.zip")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "cli.zip") as a, zipfile.ZipFile(path) as b:
        assert a.read("metadata.jsonl") == b.read("metadata.jsonl")


def test_the_review_message_is_said_again_in_the_new_language(built):
    """relang writes the rebuild's message and the tiles again in the page's new language."""
    import app
    from archive.ui import start_review
    from tabs.archive import archive_relang

    review = start_review(built[1])
    _, spanish, said = app.archive_rebuild(review, None, "es")
    assert spanish.startswith("Rehecho")
    status, message, tiles = archive_relang(None, said, review, 48, "en")
    assert message == app.archive_rebuild(review, None, "en")[1]
    assert message.startswith("Rebuilt ") and tiles and " p. " in tiles[0][1]


def test_regions_csv_saved_by_a_spanish_spreadsheet_is_read_as_the_original(built, tmp_path):
    """A spreadsheet set to Spanish saves CSV with ";" (its decimal mark is ",") and, as
    "CSV UTF-8", a byte-order mark: the same decisions as the file it was opened from."""
    _, out = built
    rows = region_rows(out)
    edit(rows, tmp_path / "regions.csv")
    want = decisions.load(tmp_path / "regions.csv")
    assert len(want) == 3
    for name, sep in (("excel_es.csv", ";"), ("pasted.csv", "\t")):
        with open(tmp_path / name, "w", newline="", encoding="utf-8-sig") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=sep)
            writer.writeheader()
            writer.writerows({**r, "score": r["score"].replace(".", ",")} for r in rows)
        assert (tmp_path / name).read_bytes().startswith(b"\xef\xbb\xbf")
        assert decisions.load(tmp_path / name) == want, name
