"""The finder's shared units: sizes and shapes more than one stage reads, named once.

The finder measures everything against the page itself (``ink``: the set text's height,
the paper's level), so a scan at another resolution means the same; these are the values
(mostly multiples of the text height) that more than one stage uses.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Units:
    # a glyph-sized shape is at most this many text heights tall; a taller one is a
    # picture's "big shape" (``measures.big_share``) and no letter (``text_rhythm``),
    # set where the Moreno chapbooks' and the early books' tallest letters stopped
    # (drop capitals excepted) when the text rhythm was written
    glyph_h: float = 2.5
    # times: a band (a border down the page, a head- or tailpiece) is longer than it is
    # deep by more than this, in the proposals (cut and kept whole) and the ornaments (a
    # band is an ornament); set in 776e19e with the first prototype, used again in 413ebd6
    # for border bands (early books CV precision 0.808 -> 0.875) and 59d9fc4/b4e1227 for
    # headpieces; the factor itself, where measured: not recorded (hand-set)
    band_aspect: float = 3.0
    # px of the image read (the preview, a closer decode's page, the extent's work image):
    # a side under this has no readable layout; set in efe9ef4 with the first page
    # extent, where measured: not recorded (hand-set)
    min_side: int = 16


UNITS = Units()
