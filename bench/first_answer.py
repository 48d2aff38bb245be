"""Each tab's first answer after the app starts, against its later ones.

Starts ``python app.py`` (the tiny SDXL as the LoRA base, so every tab can answer), then
asks each endpoint three times through ``gradio_client`` and prints the seconds of each
call. ``--no-warm`` starts the app with ``BORDE_WARM_IMPORTS=0``, the old behaviour, for
the comparison. Run it on a quiet machine: a second busy process doubles the numbers.

    python bench/first_answer.py [--no-warm] [--delay 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import running_app  # noqa: E402
from tests.pdf_factory import chapbook_pages, scans_pdf  # noqa: E402
from tests.tiny_models import build_sdxl  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-warm", action="store_true", help="start without the warm-up imports")
    ap.add_argument("--delay", type=float, default=0.0,
                    help="seconds between the app answering and the first request")
    args = ap.parse_args()
    from gradio_client import Client, handle_file

    with tempfile.TemporaryDirectory(prefix="borde-first-") as tmp:
        tmp = Path(tmp)
        base = build_sdxl(tmp / "tiny-sdxl")
        pdf = scans_pdf(tmp / "pliego.pdf", chapbook_pages(SHARED)[:3])
        env = {"LORA_BASE_MODEL": str(base), "LORA_WEIGHTS": "",
               "BORDE_WARM_IMPORTS": "0" if args.no_warm else "1"}
        t0 = time.perf_counter()
        with running_app(env) as url:
            print(f"app answered after {time.perf_counter() - t0:.1f} s "
                  f"(warm-up imports {'off' if args.no_warm else 'on'})")
            time.sleep(args.delay)
            client = Client(url, verbose=False)
            photo = handle_file(str(ROOT / "vet" / "examples" / "healthy_cow.jpg"))
            jobs = {
                "/vet_run": dict(photo=photo),
                "/archive_run": dict(uploads=[handle_file(str(pdf))], size="512"),
                "/lora_run": dict(prompt="a lighthouse", steps=2, size="512", seed=1),
            }
            for endpoint, kwargs in jobs.items():
                times = []
                for _ in range(3):
                    t1 = time.perf_counter()
                    client.predict(**kwargs, api_name=endpoint)
                    times.append(time.perf_counter() - t1)
                later = min(times[1:])
                print(f"{endpoint:14s} first {times[0]:5.2f} s, later {times[1]:5.2f} / "
                      f"{times[2]:5.2f} s, first - later {times[0] - later:+.2f} s")


if __name__ == "__main__":
    main()
