"""Archive -> Dataset: stream scanned PDFs into a zip dataset of their illustrations.

    import archive
    report = archive.build_dataset(["magazine.pdf"], "dataset.zip", progress=print)

The path through the folder: reader -> figures (or the page filter, for whole
pages) -> crop_edges (a line of text read off a crop's edge at the scan's own
resolution) -> resize -> writer, tied together by pipeline, with dedup for reprinted
plates; review and apply are the curator's look at the doubtful crops, and
distributor runs a whole collection on Ray. cli is the command, errors the
messages a curator sees. figures reads a page in steps of their own: page_extent
(the page inside the scan) -> page_ink (its ink, measured once) -> picture_boxes
(with picture_frames) -> verdicts (with ornaments, charts, ring_stamps).
"""

from archive.errors import ArchiveError
from archive.pipeline import Options, PageEvent, Report, build_dataset, iter_build

__all__ = ["ArchiveError", "Options", "PageEvent", "Report", "build_dataset", "iter_build"]
