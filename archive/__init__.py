"""Archive -> Dataset: stream scanned PDFs into a zip dataset of illustration pages.

    import archive
    report = archive.build_dataset(["magazine.pdf"], "dataset.zip", progress=print)

The path through the folder: reader -> filter -> resize -> writer, tied
together by pipeline; cli is the command, errors the messages a curator sees.
"""

from archive.errors import ArchiveError
from archive.pipeline import Options, PageEvent, Report, build_dataset, iter_build

__all__ = ["ArchiveError", "Options", "PageEvent", "Report", "build_dataset", "iter_build"]
