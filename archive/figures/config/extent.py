"""The extent stage's constants (``extent``, ``skew``, ``focus``): where the page lies in
the scan, how far askew its lines run, how soft its focus is.

One typed config so each value is named once, with what it is, its unit and where it
was measured. A leaf: it imports nothing from ``archive``, so every module can import
it. "Early books" are the early printed books of ``figures/early``, "chapbooks" the
Moreno chapbooks, "library-scan composites" the pages on beds, cards and charts that
``bench/scans.py`` builds (``python -m bench.figure_eval``, ``bench.figure_robustness``).
The extent is found on the preview shrunk to ``work_side`` px, so its px fields are px
of that work image; the focus reads the finder's preview (about 400 px).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtentConfig:
    # --- the work image (``extent.find``) ---
    # px, the long side the extent is found at: 0.6% of the side is enough; set in 42aaf03
    # (200 -> 160) for speed alone (detector 11.5 -> 9.8 ms/page under load), where
    # measured for accuracy: not recorded
    work_side: int = 160
    # ratio of work side to image side: the image is shrunk to the work side only when
    # that is under this share of its long side, else read as it is; set in efe9ef4,
    # where measured: not recorded (hand-set)
    shrink_under: float = 0.75
    # more things than this beside the "page" say the image is a page of its own layout
    # (a diagram or a photograph that fills it): beside a page on a bed lie at most 7
    # things in the library-scan composites, 4 on the early books; measured in d03696c
    max_beside: int = 8

    # --- things beside the page (``extent._outside``, ``_sides``) ---
    # Lab levels (|dL| + |da| + |db|, 8-bit Lab): a pixel this far from the background's
    # median colour is a thing on it; set in e9f7a40 with the outside boxes, where
    # measured: not recorded (hand-set)
    beside_diff: int = 40
    # px a side of the square every mask is opened with (``_outside``, ``_near``,
    # ``_brighter_page``): specks of a pixel or two are dropped; set in efe9ef4, where
    # measured: not recorded (hand-set)
    open_px: int = 3
    # share of the image's area: a thing beside the page this big or more is listed; set
    # in e9f7a40, where measured: not recorded (hand-set)
    beside_least: float = 0.002
    # share of a thing's biggest piece on one side of the page: other pieces this big are
    # listed too; measured in b094ac6 on the early and chapbook pages (outside boxes over
    # 10% on the page 6 of 100 -> 0 of 102), made for one page: Moreno 285_1 (its shadow
    # down the page's side and under it boxed whole)
    beside_piece: float = 0.2

    # --- the text closed over (``extent._closed_lab``) ---
    # the closing is 1/this of the image's long side wide (as wide as a few text lines),
    # and at least ``close_least_px`` px; set in efe9ef4, where measured: not recorded
    # (hand-set)
    close_per_side: int = 48
    close_least_px: int = 3

    # --- paper tones (``extent._paper_levels``) ---
    # grey levels (L of 8-bit Lab): levels under this are a cloth or a cover, never paper
    # (nor counted among the lit pixels of a small page on a dark bed); set in efe9ef4,
    # named in f2598c3, where measured: not recorded (hand-set)
    dark: int = 60
    # grey levels summed round a level for its share of the pixels; set in efe9ef4, where
    # measured: not recorded (hand-set)
    tone_mass_levels: int = 17
    # grey levels the histogram is smoothed over before its peaks are read; set in
    # efe9ef4, where measured: not recorded (hand-set)
    tone_smooth_levels: int = 5
    # grey levels either side a peak is the highest of; set in efe9ef4, where measured:
    # not recorded (hand-set)
    tone_peak_reach: int = 4
    # grey level: paper tones are read under this one (the whitest levels are clipped
    # highlights); set in efe9ef4, where measured: not recorded (hand-set)
    tone_top: int = 254
    # share of the pixels (of the lit ones on a dark bed) a paper tone's levels hold; set
    # in efe9ef4, where measured: not recorded (hand-set); f2598c3: no page of the 579
    # early, chapbook and labelled pages lacks such a tone
    tone_share: float = 0.05
    # paper tones kept, the commonest first; set in 42aaf03 for speed (detector 11.5 ->
    # 9.8 ms/page under load), where measured for accuracy: not recorded
    tones_kept: int = 4

    # --- a paper tone's colour (``extent._near``) ---
    # grey levels either side of the tone whose pixels' median hue is the paper's; set in
    # efe9ef4, where measured: not recorded (hand-set)
    hue_band: int = 8
    # Lab a/b levels: a pixel within max(hue_tol_least, hue_tol_chroma x the paper's
    # chroma) of the paper's hue is of its colour (a cream page is not a white card); set
    # in efe9ef4, where measured: not recorded (hand-set)
    hue_tol_least: float = 8.0
    hue_tol_chroma: float = 0.6
    # share of the tone's level: paper is down to this share of it (up to 30% darker:
    # lighting, foxing) and up to ``paper_lighter`` of it plus ``paper_lighter_levels``
    # grey levels; set in efe9ef4, where measured: not recorded (hand-set)
    paper_darker: float = 0.7
    paper_lighter: float = 1.1
    paper_lighter_levels: int = 8

    # --- the page's paper patch (``extent._paper_patch``, ``_brighter_page``) ---
    # share of its box a paper patch fills for it to be a page's (a frame round a page or
    # a margin line is hollow): on the rim it says the paper fills the image (set in
    # 9f11eb2 with the library-scan composites), and a white page on a pale card must be
    # as solid (a37c04d, library-scan composites' least extent IoU 0.621 -> 0.967, no real
    # page's extent changed); the value itself: not recorded (hand-set)
    paper_solid: float = 0.6
    # share of its box a darker page inside a rim-tone margin fills: a page on a card is
    # one solid patch of its paper, 0.67-0.99 of its box on the shared sets; a
    # frontispiece's mid-tones are scattered over the picture (0.14-0.32); measured in
    # 8a6613e, made for one page: the Cinna frontispiece (IoU 0.60 -> 0.84, nothing else
    # of 1,173 pages moved)
    margin_page_solid: float = 0.5
    # share of the image's area: a patch this big is the image itself (no extent); set in
    # efe9ef4, where measured: not recorded (hand-set)
    patch_whole: float = 0.98
    # share of the image's area: a patch under this (a fifth) is no page, unless it lies
    # on a bed; set in efe9ef4, where measured: not recorded (hand-set)
    page_least: float = 0.2

    # --- a small page on a bed (``extent._on_bed``) ---
    # grey levels: the bed round the paper is within bed_even of its median on bed_share
    # of it, and bed_darker darker than the paper (a bed of cloth or card; a chart and a
    # label on it are a few percent); a slide or a poster whose largest paper-like patch is
    # small is even on 0.18-0.54 of what lies round it on the shared sets; measured in
    # 8cb2c3b on the early books on a bed 2.5x their size (found 0.385 -> 0.538, crops
    # that are pictures 0.595 -> 0.848) and the chapbooks (found 0.933 -> 1.000)
    bed_darker: int = 60
    bed_even: int = 20
    bed_share: float = 0.8

    # --- patches of the page's paper a picture cut apart (``extent._joined``) ---
    # share of the image's side: patches sharing the largest one's sides within this, and
    # meeting it across at most this, are one page; the same band either way of a
    # facing-page cut (``_lamp``, ``_splits_picture``); set in 22d5132 for the lamp rule
    # on the early books under a light falloff and shared by both cut rules in f3edd2d
    # (figure_robustness rows byte-identical), the value itself: not recorded (hand-set)
    across: float = 0.03
    # px of the work image: the joined patches' tolerance is this at least; set in
    # 1205625 with the join, where measured: not recorded (hand-set)
    joined_least_px: int = 2
    # share of the largest patch's area: a smaller patch is no piece of the page; set for
    # one page: the Wolfenbüttel emblem book's roundel page (qun-607-5 p27) scanned darker,
    # in 1205625 (figure_robustness early found 0.987 -> 0.988, darker 0.953 -> 0.977)
    joined_piece: float = 0.25

    # --- a white page on a pale card (``extent._brighter_page``, ``_steps_all_round``) ---
    # grey levels: the page is within this of its brightest tone (the card's rim is
    # not); measured in a37c04d on the library-scan composites (least extent IoU 0.621 ->
    # 0.967; no real page's extent changes)
    bright_levels: int = 6
    # share of the image's side the card shows on every side of the page; set in a37c04d,
    # where measured: not recorded (hand-set)
    card_inset: float = 0.02
    # share of the image's area the page on a card covers at least; set in a37c04d, where
    # measured: not recorded (hand-set)
    card_page_least: float = 0.3
    # px of the work image: the step is read between the pixels this far inside the page's
    # edge and this far outside it (x0 + 2 against x0 - 3); set in a37c04d, where
    # measured: not recorded (hand-set)
    edge_read_px: int = 2
    # share of the page's brightest tone its edge steps up from the card by (a lamp's
    # falloff is a slope); measured in a37c04d on the library-scan composites
    edge_step: float = 0.04

    # --- the outer rim (``extent._rim``, ``_on_rim``) ---
    # the rim is 1/this of the image's short side (2%); set in e9f7a40, where measured:
    # not recorded (hand-set)
    rim_per_side: int = 50
    # share of the rim a paper candidate covers to be the background (a card); set in
    # 9f11eb2 with the library-scan composites, where measured: not recorded (hand-set)
    rim_covered: float = 0.5

    # --- the facing page cut off (``extent._without_facing_page``) ---
    # the profile is this percentile (as a share) of each column's closed lightness: a
    # picture near the edge covers only part of a column; set in efe9ef4, where measured:
    # not recorded (hand-set)
    profile_share: float = 0.8
    # px of the work image: a shorter profile is not cut; set in efe9ef4, where measured:
    # not recorded (hand-set)
    profile_least: int = 10
    # the page's level is the profile's median from 1/this of its length on; set in
    # efe9ef4, where measured: not recorded (hand-set)
    ref_from: int = 4
    # share of the page's level: a column under it is dark (a facing page's); set in
    # efe9ef4, where measured: not recorded (hand-set)
    facing_dark: float = 0.9
    # share of the side: a strip cut off is this long at least (else no cut; a fold this
    # near the side is none either, ``_at_fold``) and at most ``strip_most``; set in
    # efe9ef4, where measured: not recorded (hand-set); strip_least reused for the fold in
    # 49da3d5, a rule made for one page: Wolfenbüttel p9 (its initial set tight at the
    # gutter), checked on figure_eval (early CV pictures 0.935 -> 0.956)
    strip_least: float = 0.02
    strip_most: float = 0.4
    # share of the page's level a dark strip on both sides rises across its edge: less is
    # a lamp's falloff, not two facing pages; on the early books as published the
    # smallest step of a facing page cut on one side is 0.037, and no page has both sides
    # cut with steps under 0.1; measured in 22d5132 (extent within IoU 0.95 of the
    # published one under a light falloff on 62 of 116 early pages, 34 before)
    lamp_step: float = 0.1
    # a facing-page cut never runs through a picture: a run of rows (picture_rows of the
    # side) darker than picture_dark of the paper all across the cut is one, where the
    # strip cut off is dark in under outside_dark of its rows (a bed or a book's edge is
    # dark all the way down); measured in 9a8156f on the early books under a light
    # falloff (pictures found 0.907 -> 0.977, crops that are pictures 0.780 -> 0.840)
    picture_dark: float = 0.75
    picture_rows: float = 0.05
    outside_dark: float = 0.5

    # --- print across a cut (``extent._print``, ``_past_print``) ---
    # print is strokes print_dark of its level darker than the closed page round them,
    # print_least grey levels at least, so print in a shadow counts and the shadow does
    # not; a line along the cut edge_line of the side long is the page's edge, not print;
    # measured in 6e22cec on the gutter shadows of the early books and chapbooks (gutter
    # early pictures 0.905 -> 0.915; figure_eval same or better everywhere)
    print_least: int = 12
    print_dark: float = 0.12
    edge_line: float = 0.1
    # px of the work image: the edge line is this long at least; set in 6e22cec, where
    # measured: not recorded (hand-set)
    edge_line_least_px: int = 3
    # share of the strip's length: print within this of its ends is the scan's edge or
    # the page's corner; set in 6e22cec, where measured: not recorded (hand-set)
    strip_end: float = 0.02
    # a shape this many times longer along the cut than across is a line, not print; set
    # in 6e22cec, where measured: not recorded (hand-set)
    print_long: int = 2
    # px of the work image: a smaller shape is no print; set in 6e22cec, where measured:
    # not recorded (hand-set)
    print_least_px: int = 3

    # --- skew (``skew.skew_angle``) ---
    # degrees: the angle is looked for within this either way, in steps of
    # skew_step_deg; set in 49612da, measured on the early books skewed 3 and 5 degrees
    # (found 0.907/0.837 -> 1.000)
    skew_most_deg: float = 6.0
    skew_step_deg: float = 0.25
    # px of the preview: a glyph is this tall and this big in area at least; set in
    # 49612da, where measured: not recorded (hand-set)
    skew_glyph_least_px: int = 2
    skew_glyph_area_px: int = 4
    # glyphs the angle is read from at least (a title page of big letters has 60-120);
    # measured in 49612da on the early books and chapbooks
    skew_glyphs: int = 150
    # times: the glyphs' bottoms pile up this much more at the angle than level: skewed
    # text pages measured 1.24-2.2 (most over 1.37), pages whose text runs down (turned,
    # too little text to tell) 1.03-1.21; measured in 49612da
    skew_sure: float = 1.3

    # --- focus (``focus``; px of the finder's preview, about 400 on the long side) ---
    # share of each side left out: the focus is read in the text's middle, a third of
    # the work; set in 8519a1f, where measured: not recorded (hand-set)
    focus_margin: float = 0.2
    # px: the two blurs whose bands are compared (the finest detail against the next
    # band); set in 8519a1f, checked on the focus bench (early books blurred 2 px, crops
    # that are pictures 0.840 -> 0.935; chapbooks blurred 1 px found 0.910 -> 1.000)
    focus_fine_px: float = 0.7
    focus_next_px: float = 2.0
    # grey levels under the page's 2-px blur that are ink; set in 8519a1f, where
    # measured: not recorded (hand-set)
    focus_ink: int = 15
    # share of the page's long side a glyph is at most tall (8 px of 400), and px it is
    # at least tall; set in 8519a1f, where measured: not recorded (hand-set)
    focus_glyph: float = 0.02
    focus_glyph_least_px: int = 2
    # px a side of the square the glyphs are dilated with (the pixel round them, where
    # their edges' detail lies); set in 8519a1f, where measured: not recorded (hand-set)
    focus_dilate_px: int = 3
    # glyph pixels (dilated) a page's focus is read from at least; set in 8519a1f, where
    # measured: not recorded (hand-set)
    focus_least_px: int = 100
    # a page under soft (fine against next band) is sharpened to aim: under 0.8 are 4 of
    # 116 early pages as published, no chapbook or DTA page, 1 of 11 OCR-D and 10 of 229
    # ufal pages; the early books' 10th percentile is 0.97, published pages 0.87-2.13
    # (early books, 5th-95th percentile), 1.20-2.18 (chapbooks); blurred 1 px 0.44-1.18
    # and 0.52-0.89; measured in 8519a1f
    soft: float = 0.8
    aim: float = 1.0
    # unsharp-mask amounts tried, least first; set in 8519a1f, where measured: not
    # recorded (hand-set)
    amounts: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
    # px: the unsharp mask's Gaussian; set in 8519a1f, where measured: not recorded
    # (hand-set)
    sharpen_radius_px: float = 1.0


EXTENT = ExtentConfig()
