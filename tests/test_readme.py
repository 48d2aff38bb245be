"""The README is a user's page: its quick start is what CI runs, its CLI examples exist.

Each ``python -m MODULE ...`` line of a ```bash block is run as ``python -m MODULE --help``
(one subprocess per module, shared by every example of it): the module must answer with
its usage, and every ``--flag`` the example uses must be one that ``--help`` lists.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 330  # a README to read in one sitting (IIIF input took it past 320)
QUICK_START = (
    "pip install -r requirements.txt && python app.py",
    "pip install -r requirements-dev.txt && python -m pytest",
)

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block, in order."""
    return [(info.strip(), body) for info, body in FENCE.findall(text)]


def commands(body: str) -> list[str]:
    """A bash block's commands: continuation lines joined, comments dropped."""
    out, pending = [], ""
    for line in body.splitlines():
        line = pending + line.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            out.append(line)
    return out


def cli_examples() -> list[tuple[str, str]]:
    """(module, command) for every README command line that starts with python -m."""
    found = []
    for info, body in fenced_blocks(readme()):
        if info != "bash":
            continue
        for command in commands(body):
            match = re.match(r"python -m ([\w.]+)(\s|$)", command)
            if match:
                found.append((match.group(1), command))
    return found


@functools.cache
def module_help(module: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_the_quick_start_is_the_first_two_code_blocks():
    blocks = fenced_blocks(readme())
    assert len(blocks) >= 2
    assert [body.strip() for _, body in blocks[:2]] == list(QUICK_START)
    assert [info for info, _ in blocks[:2]] == ["bash", "bash"]


def test_ci_runs_the_readme_test_command_verbatim():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    last = [line.strip() for line in script.splitlines() if line.strip()][-1]
    assert last == QUICK_START[1]


def test_the_readme_keeps_its_front_matter():
    lines = readme().splitlines()
    assert lines[0] == "---"
    end = lines.index("---", 1)
    header = dict(line.split(":", 1) for line in lines[1:end])
    assert header["app_file"].strip() == "app.py"
    assert header["sdk"].strip() == "gradio"


def test_the_readme_is_short():
    assert len(readme().splitlines()) <= MAX_LINES


def test_the_readme_has_cli_examples():
    modules = {module for module, _ in cli_examples()}
    assert {"vet", "archive", "archive.apply", "lora.generate", "lora.train"} <= modules


@pytest.mark.parametrize("module", sorted({module for module, _ in cli_examples()}))
def test_each_cli_in_the_readme_answers_help(module):
    result = module_help(module)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in (result.stdout + result.stderr).lower()


@pytest.mark.parametrize(("module", "command"), cli_examples(),
                         ids=[command[:60] for _, command in cli_examples()])
def test_every_flag_of_a_readme_example_exists(module, command):
    result = module_help(module)
    assert result.returncode == 0, result.stderr[-2000:]
    listed = set(FLAG.findall(result.stdout + result.stderr))
    used = set(FLAG.findall(command.split(f"python -m {module}", 1)[1]))
    assert used <= listed, f"{command}: {sorted(used - listed)} not in --help"


def test_every_relative_link_points_at_a_file():
    targets = [t for t in LINK.findall(readme()) if not re.match(r"[a-z][\w+.-]*:|#", t)]
    assert targets, "the README links its docs"
    missing = [t for t in targets if not (ROOT / t.split("#", 1)[0]).exists()]
    assert not missing
