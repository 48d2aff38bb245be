"""The ink stage's constants (``ink``, ``colour_ink``, ``text_rhythm``, ``charts``): a page's ink.

One typed config so each value is named once, with what it is, its unit and where it
was measured: how ink is told from the paper, how tall the text is, what the scanner
bed is, which coloured ink is a stamp or a rubric, where the set text lies, and what a
colour chart looks like. A leaf: it imports nothing from ``archive``, so every module can
import it. The text-height multiples other stages share (the glyph height) are in
``config.units.UNITS``, not here; ``ink.PARAMS`` (tuned by the CV grid of
``bench/figure_eval.py``, which changes it in place) stays a dict in ``ink``.

Sizes are in text heights (``th``: the page's own text height, px) unless a field says
otherwise; "the preview" is the page as the finder reads it (about 375 px a side).
"Early books" are the early printed books of ``figures/early``, "chapbooks" the Moreno
chapbooks, "library-scan composites" ``bench/scans.py``'s scans built from real pages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InkConfig:
    # === ink.py ===
    # --- scale ---
    # px: pixel-sized steps (merge gap, blur) are scaled to this long side (``Ink.px``);
    # set in de99b03 for one case, page not named: without it a tailpiece's thin frame
    # fell apart into pieces on 800 px previews
    work_side: int = 400
    # --- text, never a rule (``Ink.text``, ``_rules``) ---
    # px, the side of the square kernel that grows the big (not glyph) shapes before the
    # text is taken outside them: a pixel round each; set in efe9ef4 with the text rhythm
    # (early library scans scored as a whole), where measured: not recorded (hand-set)
    big_grow: int = 3
    # text heights: a straight line of weak ink this long, across or down, is a rule, not
    # a letter; set in 6e22cec for one page: bpt6k15260973 f9, whose red title line's
    # mask cut a frame's rule in two under the falloff (figure_eval same or better
    # everywhere, gutter early pictures 0.905 -> 0.915)
    rule: float = 3.0
    # px: the least side of a morphology or box-filter window (a rule's opening, the
    # paper's max filter, a stamp's or rubric's closing, the rhythm's density): a shorter
    # one filters nothing; set in 776e19e with the first prototype, where measured: not
    # recorded (hand-set)
    least_kernel: int = 3
    # --- the paper level (``_paper``) ---
    # times: the page is shrunk by this much each way before its max filter; set in
    # 776e19e with the first prototype (Moreno chapbooks bench), where measured: not
    # recorded (hand-set)
    paper_shrink: int = 4
    # the max filter's side is the page's long side // this, in px of the shrunk page:
    # 1/24 of the page (paper_shrink / paper_window), wide enough to step over glyphs; set
    # in 90f4527 (1/24 since the prototype 776e19e), where measured: not recorded
    # (hand-set)
    paper_window: int = 96
    # --- the darkest ink (``Ink.darkest``) ---
    # quantile of the darkness below the paper read as the page's darkest ink, a few
    # specks aside (the 99.9th percentile); set in 5df38f3 with the blank-verso rule
    # (bench/show_through.py measured that rule's bar, not this quantile), where
    # measured: not recorded (hand-set)
    darkest_quantile: float = 0.999
    # --- strong and weak ink (``measure``) ---
    # grey levels below the local paper: the Otsu threshold for strong ink is held to at
    # least ink_floor (blank paper has no ink to split) and at most ink_ceiling; set in
    # 776e19e with the first prototype (Moreno chapbooks bench), where measured: not
    # recorded (hand-set)
    ink_floor: int = 25
    ink_ceiling: int = 90
    # share of the page exactly white (255) that makes it a binarized (1-bit) scan: no
    # show-through or foxing; set in 2e1300f (as >= 250, exact white since ca8fc85) for
    # binarized line art, where measured: not recorded (hand-set)
    binary_white: float = 0.4
    # times the strong-ink threshold: darkness over this is weak ink on a binarized page
    # (fainter grey is still ink there: a thin engraved line shrunk to a sixth); set in
    # ca8fc85 ("fainter ink counts on binarized pages"), where measured: not recorded
    # (hand-set)
    weak_binary: float = 0.3
    # times the strong-ink threshold: darkness over this is weak ink (a woodcut's grey
    # sky) on any other page; set in 776e19e with the first prototype, where measured: not
    # recorded (hand-set)
    weak: float = 0.5
    # px, the side of the square kernel that grows a coloured stamp's ink before it is
    # taken off the page; set in efe9ef4 with the coloured stamps (early library scans
    # scored as a whole), where measured: not recorded (hand-set)
    stamp_grow: int = 3
    # px of the preview: a black stamp's ring also takes this much beyond its fitted box
    # (the ring's own edge, a pixel or two beyond the fit); set in 1b2a180 with the ring
    # stamps (early shipped false crops 6 -> 5, the arms no longer glued to their stamp),
    # where measured: not recorded (hand-set)
    ring_edge: int = 2
    # --- the scanner bed, page edges and shadows (``_scan_border``) ---
    # a shape reaches the border within the side // this (2%: a page's own edge line lies
    # just inside the page extent); set in f287734 ("page-edge lines within 2% of the
    # extent are bed"), where measured: not recorded (hand-set)
    border_reach: int = 50
    # share of the side: a border shape this long across or down may be the bed; set in
    # 776e19e with the first prototype (Moreno chapbooks bench), where measured: not
    # recorded (hand-set)
    border_long: float = 0.2
    # share of the page's height: a dark shape this long down the page's side, almost all
    # in its side bands, is a shadow (elsewhere border_long is needed); set in 2daf421 for
    # one page: Wolfenbüttel p9, whose fold shadow stood 0.197 of the height against the
    # fifth and glued the initial Q to the page's top; checked in 90e48ea over the 579
    # shared pages bench.figure_eval reads: 84 shapes more (page edges, shadows, three bits
    # of print at a border), no verdict moved
    side_shadow: float = 0.1
    # share of the side: the outer band the bed's ink lies in, at least border_band_least
    # px; set in 90f4527 with the scan-border removal, where measured: not recorded
    # (hand-set)
    border_band: float = 0.08
    border_band_least: int = 2
    # share of a border shape's ink that lies in the outer band (or, for a side shadow, in
    # the side bands) for the whole shape to be the bed; set in 90f4527 (and taken for the
    # side bands in 2daf421), where measured: not recorded (hand-set)
    border_ink: float = 0.8
    # --- the text height (``_text_height``, ``text_height``) ---
    # px of the image: the text height is read as well on the page scaled to this long
    # side, when the page comes from an image text_height_over times larger (or more), and
    # the larger of the two taken; measured in f898f8e on bench/figure_scales' early books
    # at 470-700 px, where a woodcut's hatching broke into specks of a glyph's size (the
    # median fell to 0.32-0.6 of the text height on a tenth of the early pages at 700 px):
    # found 0.977 -> 1.000, crops that are pictures 0.913 -> 0.935; 375 px is about the
    # early books' own preview, the size the rules were written at (942d265)
    text_height_side: int = 375
    text_height_over: float = 1.15
    # px: the least text height, and a page without text gets its height / th_fallback;
    # set in 776e19e with the first prototype, where measured: not recorded (hand-set)
    th_least: float = 2.0
    th_fallback: int = 100
    # a glyph-sized shape (for the text height) is at least glyph_least px tall, at most
    # the page's height / glyph_tallest and its width / glyph_widest; set in 776e19e with
    # the first prototype, where measured: not recorded (hand-set)
    glyph_least: int = 2
    glyph_tallest: int = 15
    glyph_widest: int = 5
    # glyph-sized shapes: fewer than this and the page has no text height of its own (the
    # fallback); set in 776e19e with the first prototype, where measured: not recorded
    # (hand-set)
    th_glyphs: int = 20

    # === colour_ink.py ===
    # Lab a/b levels from the paper's colour: coloured ink (and a stamp's "vivid" ink);
    # set in efe9ef4 with the coloured stamps and rubrics (early library scans
    # 0.884/0.756/0.458 -> 0.953/0.887/0.788 recall/IoU/precision, the module as a whole),
    # where measured: not recorded (hand-set)
    chroma: float = 12.0
    # Lab a/b levels from the paper's colour: the paler coloured ink a stamp is looked for
    # in (a stamp's thin lines, shrunk to the preview, mix with the paper and the print
    # under them), its strokes closed over by stamp_close text heights; measured in
    # a5fe2bb on the library-scan composites: 12 of 18 stamps recognised (was 4), crop
    # precision 0.909 -> 0.938, a false stamp on red title lettering gone
    pale: float = 7.0
    stamp_close: float = 3.0
    # coloured ink is more saturated than the paper by colour_saturated Lab a/b levels,
    # and darker than the paper's median by colour_darker L levels (0-255, OpenCV's Lab);
    # set in efe9ef4, where measured: not recorded (hand-set)
    colour_saturated: int = 5
    colour_darker: int = 8
    # Lab a/b levels from neutral: a paper tinted this much or more is a tinted paper,
    # where ink that only deepens its tint is brown, or a stain; set in efe9ef4, where
    # measured: not recorded (hand-set)
    paper_tint: int = 5
    # degrees: ink at most this far in hue from the paper's own tint is brown, a stain;
    # set in efe9ef4, where measured: not recorded (hand-set)
    paper_hue: float = 35.0
    # px: a page is asked for coloured ink on every this-many-th pixel each way, and
    # carries colour when this share of them is coloured; set in efe9ef4, where measured:
    # not recorded (hand-set)
    colour_sample: int = 4
    colour_least: float = 0.0005
    # --- stamps (``stamps``, ``_oval``, ``_fitted_ellipse``) ---
    # a stamp's box: its short side at least stamp_least text heights, its long side at
    # most stamp_largest of the page's long side, its width / height within
    # stamp_aspect_least..stamp_aspect_most (the most is also the longest a fitted
    # ellipse's axes may be against each other, f268112); set in efe9ef4, where measured:
    # not recorded (hand-set)
    stamp_least: int = 5
    stamp_largest: float = 0.3
    stamp_aspect_least: float = 0.6
    stamp_aspect_most: float = 1.7
    # share of a stamp's box in vivid ink (chroma from the paper) at most: a stamp's ink is
    # pale lines (real stamps 0.00-0.14, the composites' up to 0.23); a painted initial's
    # ground is vivid over 0.42; measured in 9c6902d on the real stamps and the
    # library-scan composites against one painted initial
    stamp_vivid: float = 0.3
    # mean resultant length of a stamp's hue angles (1: a single hue); set in efe9ef4,
    # where measured: not recorded (hand-set)
    one_hue: float = 0.85
    # most share of a stamp's blob outside its box's inscribed ellipse (a square: 0.21);
    # set in 9c6902d for one page: bpt6k6551882q f5, the BnF's red stamp half over a
    # printed rule at the title page's corner (0.10-0.12, was 0.1): a stamp at 9 preview
    # sizes of 9, was 1; stamps found on the early books 5 -> 6
    outside_ellipse: float = 0.125
    # least share of the ellipse the blob covers; set in efe9ef4, where measured: not
    # recorded (hand-set)
    ellipse_filled: float = 0.65
    # a blob cut by the image's edge: its outline points more than cut_edge px from the
    # cut, at least fit_points of them, are fitted with an ellipse that may bulge past the
    # uncut sides of the box by fit_overhang of its long side (at least fit_overhang_least
    # px); set in f268112 with the small skews (early books at 0.75 deg, the change as a
    # whole), where measured: not recorded (hand-set)
    cut_edge: int = 1
    fit_points: int = 12
    fit_overhang: float = 0.05
    fit_overhang_least: float = 2.0
    # --- rubrics (``rubrics``) ---
    # text heights: coloured ink is closed along the row over this gap; set in efe9ef4,
    # where measured: not recorded (hand-set)
    rubric_close: float = 1.5
    # a rubric's run is at least rubric_least_h text heights tall (a coloured rule or a
    # frame's edge is thinner: d03696c), rubric_least_w wide and rubric_long times as wide
    # as tall (its most height is ``UNITS.glyph_h``); set in efe9ef4 and d03696c, where
    # measured: not recorded (hand-set)
    rubric_least_h: float = 0.5
    rubric_least_w: int = 5
    rubric_long: int = 3
    # separate shapes in a run of coloured ink that make it a line of text, not a coloured
    # rule; set in d03696c, where measured: not recorded (hand-set)
    rubric_glyphs: int = 3

    # === text_rhythm.py ===
    # text heights: the ink's density is averaged over this width across; set in efe9ef4
    # with the text rhythm (early library scans scored as a whole), where measured: not
    # recorded (hand-set)
    density_width: int = 5
    # line pitches: the rhythm is read over a window this many pitches tall; set in
    # efe9ef4, where measured: not recorded (hand-set)
    window_pitches: int = 4
    # variance of the density over the window: flatter than this is no rhythm (0); set in
    # efe9ef4, where measured: not recorded (hand-set)
    flat_density: float = 0.01
    # rhythm (correlation one pitch on minus half a pitch on) that reads as text; set in
    # efe9ef4; bench.figure_fragility (docs/figure-finder.md) found it the constant nearest
    # an edge: at 1.0 a library-scan text page gets a crop (text pages clean 1.000 ->
    # 0.917), 2 false crops on the early books at a 1.5 deg skew
    rhythm: float = 0.8
    # text heights: a page this wide or wider has its rhythm read on every other column;
    # set in efe9ef4, where measured: not recorded (hand-set)
    thin_from: int = 8
    # the line pitch is looked for between pitch_least and pitch_most text heights (at
    # least pitch_least_px and pitch_most_px); set in efe9ef4, where measured: not
    # recorded (hand-set)
    pitch_least: float = 1.2
    pitch_most: int = 3
    pitch_least_px: int = 2
    pitch_most_px: int = 3
    # a shorter lag repeating this well against the best is the pitch; set in 99ccb49 for
    # one book: btv1b8626772v, set tight (lines every 6-7 px of the preview, as well at
    # 13), whose double pitch found no text on any of its pages (zone 0% -> 42-60% of the
    # ink); robustness early found 0.985 -> 0.987
    octave: float = 0.9
    # the least variance the lag correlation divides by; set in efe9ef4, where measured:
    # not recorded (hand-set)
    variance_floor: float = 1e-4

    # === charts.py ===
    # patches: a run of this many makes a chart (Wolfenbüttel's bar has 6, bench/scans.py's
    # 10); set in 2551a42: target frames alone on the bed cropped 0 of 18 (was 5),
    # Wolfenbüttel's real card alone no crop
    chart_patches: int = 4
    # grey levels: flat is no channel moving more than this within a chart_window px
    # square (JPEG's chroma noise moves Wolfenbüttel's green patch up to 16: at 14 its bar
    # was seen on 6 of the 14 scans, at 18-26 on 13-15; a patch's edge moves 40 or more);
    # measured in 2551a42 on the 14 scans of one card: Wolfenbüttel's colour bar
    chart_flat: int = 20
    # px, the side of the square neighbourhood the flat test reads; set in 2551a42 with
    # chart_flat, where measured: not recorded (hand-set)
    chart_window: int = 3
    # a patch is a flat shape filling this share of its box, at least chart_least px a
    # side; set in 2551a42, where measured: not recorded (hand-set)
    chart_solid: float = 0.8
    chart_least: int = 3
    # patches side by side: their cross sizes within chart_same_size of each other, their
    # offsets across within chart_aligned (at least chart_aligned_least px), their lengths
    # within chart_same_length; set in 2551a42, where measured: not recorded (hand-set)
    chart_same_size: float = 0.25
    chart_aligned: float = 0.25
    chart_aligned_least: float = 2.0
    chart_same_length: float = 0.5
    # px: neighbouring patches may overlap this much; the step from one to the next is at
    # most chart_step patch lengths, chart_step_over px over (the flat test eats a pixel of
    # each edge; one patch the colour of the card between them, as on Wolfenbüttel's bar);
    # set in 2551a42 for one card, Wolfenbüttel's bar
    chart_overlap: int = 1
    chart_step: float = 1.3
    chart_step_over: int = 3
    # grey levels: neighbours differ by this much in some channel (a facade's windows are
    # one grey); set in 2551a42, where measured: not recorded (hand-set)
    chart_distinct: int = 18


INK = InkConfig()
