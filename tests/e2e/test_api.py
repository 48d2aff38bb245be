"""The API as a programmer meets it (issue 24): every endpoint called as view_api() says.

One app start (the tiny SDXL as the base, so /lora_run makes images). Every call names
every parameter, with values built from the schema ``view_api(return_format="dict")``
gives: its default (or a slider's minimum), every value of a ``Literal`` one at a time,
both booleans, and a real file of the right kind where the schema wants a file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ui_text
from tests.e2e.harness import running_app
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf
from tests.tiny_models import build_sdxl_lora
from tests.zips import region_rows

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "vet" / "examples"


@pytest.fixture(scope="module")
def api(tiny_sdxl_dir):
    pytest.importorskip("gradio_client")
    from gradio_client import Client

    with running_app({"LORA_BASE_MODEL": str(tiny_sdxl_dir), "LORA_WEIGHTS": ""}) as url:
        client = Client(url, verbose=False)
        yield client, client.view_api(return_format="dict", print_info=False)


@pytest.fixture(scope="module")
def files(shared_data, tiny_sdxl_dir, tmp_path_factory) -> dict[str, object]:
    """A real file for each parameter whose schema is a file, by what the endpoint reads."""
    from gradio_client import handle_file

    folder = tmp_path_factory.mktemp("api")
    text = [p for p, label in labelled_pages(shared_data) if "dta_text" in str(p)][:1]
    pdf = scans_pdf(folder / "pliego.pdf", [*chapbook_pages(shared_data)[:2], *text])
    _, kohya = build_sdxl_lora(tiny_sdxl_dir, folder / "style")
    photos = [EXAMPLES / "fmd_cow_mouth.jpg", EXAMPLES / "healthy_cow.jpg"]
    blank = folder / "decisions.csv"  # no decision: the rebuild is the review's own
    blank.write_text("source,page,index,decision\n", encoding="utf-8")
    return {"photo": handle_file(str(photos[0])), "files": [handle_file(str(p)) for p in photos],
            "uploads": [handle_file(str(pdf))], "style_file": handle_file(str(kohya)),
            "gallery": [], "decisions": handle_file(str(blank))}


def is_file(schema: dict) -> bool:
    return "FileData" in str(schema)


def base_value(param: dict, files: dict) -> object:
    """One value for a parameter from its schema: a file, a slider's minimum, the default."""
    name, schema = param["parameter_name"], param["type"]
    if is_file(schema):
        return files[name]
    low = re.match(r"numeric value between ([\d.]+) and", schema.get("description", ""))
    if low:
        return float(low.group(1))
    return param["parameter_default"] if param["parameter_has_default"] else ""


def choices(schema: dict) -> list[object]:
    """Every value a Literal (or a boolean) allows; [] for anything else."""
    if "enum" in schema:
        return list(schema["enum"])
    if schema.get("type") == "boolean":
        return [False, True]
    return []


def calls(info: dict, files: dict) -> list[dict[str, object]]:
    """The base call, then each Literal value in turn, every parameter always named."""
    base = {p["parameter_name"]: base_value(p, files) for p in info["parameters"]}
    out = [base]
    for p in info["parameters"]:
        for value in choices(p["type"]):
            if value != base[p["parameter_name"]]:
                out.append({**base, p["parameter_name"]: value})
    return out


def check(endpoint: str, kwargs: dict, out: tuple) -> None:
    """What each endpoint must give for valid input."""
    lang = kwargs.get("ui_lang", "en")
    if endpoint == "/vet_run":
        conditions, badge, advice, heatmap = out
        assert conditions["label"] and badge and heatmap
        said = "no es un diagnóstico" if ui_text.answer_lang(kwargs["lang"], lang) == "es" \
            else "not a diagnosis"
        assert said in advice
    elif endpoint == "/vet_run_herd":
        alert, table, downloads = out
        assert "fmd_cow_mouth.jpg" in alert and table.count("<tr") == 3
        assert sorted(Path(f).name for f in downloads) == ["herd.csv", "herd.json"]
    elif endpoint == "/archive_run":
        status, crops, scores, zip_path, review = out
        done = ui_text.say(lang, "archive_done_figures" if kwargs["unit"] == "figure"
                           else "archive_done_pages").split(":")[0]
        assert done in status and Path(zip_path).is_file() and scores, status
    elif endpoint == "/lora_run":
        results, message = out
        if kwargs["few_step"]:  # the LCM-LoRA is not here: a sentence, not a traceback
            assert message == ui_text.say(lang, "lora_err_few_step") and results == []
        else:
            assert message == "" and len(results) == 1
            assert f"{kwargs['size']}x{kwargs['size']}" in results[0]["caption"]
            assert "lora_kohya.safetensors" in results[0]["caption"]


def test_every_endpoint_takes_what_view_api_prints(api, files):
    from gradio_client import handle_file

    client, info = api
    endpoints = info["named_endpoints"]
    assert set(endpoints) == {"/vet_run", "/vet_run_herd", "/archive_run", "/archive_rebuild",
                              "/lora_run"}
    size = next(p for p in endpoints["/archive_run"]["parameters"]
                if p["parameter_name"] == "size")
    assert size["type"]["enum"] == ["512", "768", "1024"]  # strings, as the dropdown holds
    made, built = 0, None
    for endpoint in ("/vet_run", "/vet_run_herd", "/archive_run", "/lora_run"):
        for kwargs in calls(endpoints[endpoint], files):
            if endpoint == "/lora_run":
                kwargs["steps"] = 1.0  # the slider's minimum already; said for the reader
            out = client.predict(**kwargs, api_name=endpoint)
            assert len(out) == len(endpoints[endpoint]["returns"]), endpoint
            check(endpoint, kwargs, out)
            made += 1
            built = out[3] if endpoint == "/archive_run" else built
    assert made >= 20
    # /archive_rebuild in the same Client session rebuilds the review /archive_run left
    for kwargs in calls(endpoints["/archive_rebuild"], files):
        zip_path, message = client.predict(**kwargs, api_name="/archive_rebuild")
        assert Path(zip_path).name.endswith("_curated.zip")
        assert message.startswith(ui_text.say(kwargs["ui_lang"], "archive_rebuilt",
                                              name=Path(zip_path).name).split(":")[0])
    # ... and with a decisions file it drops what the file drops, as archive.apply would
    drop = next(r for r in region_rows(Path(built)) if r["kept"] == "1")
    choice = Path(built).with_name("drop_one.csv")
    choice.write_text(f"source,page,index,decision\n{drop['source']},{drop['page']},"
                      f"{drop['index']},drop\n", encoding="utf-8")
    zip_path, message = client.predict(decisions=handle_file(str(choice)), ui_lang="en",
                                       api_name="/archive_rebuild")
    assert "1 removed by you" in message and "Took 1 decision(s) from drop_one.csv" in message
    assert drop["file_name"] not in {r["file_name"] for r in region_rows(Path(zip_path))
                                     if r["kept"] == "1"}


def test_bad_input_is_one_sentence_and_a_fresh_session_has_nothing_to_rebuild(api, files):
    from gradio_client import Client

    client, _ = api
    junk = client.predict(uploads=files["uploads"], threshold="lots", ui_lang="en",
                          api_name="/archive_run")[0]
    assert "The score threshold must be a number" in junk
    sneaky = client.predict(uploads=files["uploads"], caption="{source.__class__}",
                            api_name="/archive_run")[0]
    assert "source.__class__" in sneaky and "Traceback" not in sneaky
    fresh = Client(client.src, verbose=False)
    _, message = fresh.predict(ui_lang="es", api_name="/archive_rebuild")
    assert message == ui_text.say("es", "archive_rebuild_first")


def readme_returns() -> dict[str, list[tuple[str, str, str]]]:
    """Per endpoint of the README's API section: (name, component, on screen), in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The API", 1)[1].split("\n## ", 1)[0]
    out = {}
    for block in section.split("#### `")[1:]:
        endpoint = block.split("`", 1)[0]
        rows = re.findall(r"^\| `(\w+)` \| (\w+) \| .* \| (.*) \|$", block, flags=re.M)
        out[endpoint] = [(n, c, screen.strip()) for n, c, screen in rows]
    return out


def test_the_readme_names_every_return_value_in_order(api):
    _, info = api
    documented = readme_returns()
    assert set(documented) == set(info["named_endpoints"])
    english = ui_text.strings()["en"]
    for endpoint, spec in info["named_endpoints"].items():
        rows = documented[endpoint]
        assert len(rows) == len(spec["returns"]), endpoint
        for (name, component, screen), ret in zip(rows, spec["returns"], strict=True):
            assert component.lower() == ret["component"].lower(), (endpoint, name)
            label = ret["label"]
            if isinstance(label, dict):  # a gr.I18n key: the README quotes its English words
                assert screen == f'"{english[label["key"]]}"', (endpoint, name)
            else:
                assert name == label, (endpoint, name)
