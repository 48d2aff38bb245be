"""Archive -> Dataset: stream scanned PDFs into a zip dataset of their illustrations.

    import archive
    report = archive.build_dataset(["magazine.pdf"], "dataset.zip", progress=print)

The path through the folder: reader -> figures (or the page filter, for whole
pages) -> resize -> writer, tied together by pipeline, with dedup for reprinted
plates; review and apply are the curator's look at the doubtful crops, and
distributor runs a whole collection on Ray. cli is the command, errors the
messages a curator sees.
"""

from archive.errors import ArchiveError
from archive.pipeline import Options, PageEvent, Report, build_dataset, iter_build

__all__ = ["ArchiveError", "Options", "PageEvent", "Report", "build_dataset", "iter_build"]
