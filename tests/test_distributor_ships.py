"""A Ray worker on another machine has only the modules the distributor ships."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_part_build_imports_only_the_shipped_project_modules():
    """What a part's build imports from this project is what ``_shipped()`` sends along; a
    top-level module beyond it (``ondemand``, ``tempfolders``) would be an ImportError on a
    remote worker, never on the local cluster the Ray tests start from this folder."""
    code = (
        "import json, sys\n"
        "from archive import distributor, pipeline, writer, parts\n"
        "shipped = {m.__name__ for m in distributor._shipped()}\n"
        "print(json.dumps([sorted(sys.modules), sorted(shipped)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    loaded, shipped = json.loads(out)
    ours = {p.stem for p in ROOT.glob("*.py")} | {p.name for p in ROOT.iterdir()
                                                  if (p / "__init__.py").is_file()}
    tops = {name.split(".")[0] for name in loaded} & ours
    assert tops <= set(shipped), tops - set(shipped)
    assert "archive" in tops and "buckets" in tops
