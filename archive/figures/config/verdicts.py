"""The measures' and the verdicts' constants (``measures``, ``ornaments``, ``verdicts``).

Two typed configs so each value is named once, with what it is, its unit and where it
was measured: ``MEASURES`` for what a box is like (its big shapes, title letters, a
table, a chart, a pale drawing, a stain, set text under a mark; whether it is an
ornament or an initial), ``VERDICTS`` for how the verdict scores a box. A leaf: it
imports nothing from ``archive``, so every module can import it. The text-height
multiples other stages share (the glyph height, 2.5) are in ``config.units.UNITS``, not here;
``ink.PARAMS`` (tuned by the CV grid of ``bench/figure_eval.py``, which changes it in
place) stays a dict in ``ink``.

Sizes are in text heights (``th``: the page's own text height, px) unless a field says
otherwise; "the preview" is the page as the finder reads it (about 375 px a side).
"Early books" are the early printed books of ``figures/early``, "chapbooks" the Moreno
chapbooks, "library-scan composites" ``bench/scans.py``'s scans built from real pages,
"composites" ``bench/composites.py``'s. Where a value was set in a commit that changed
many rules at once and reported only the sets' overall numbers, its comment says so and
counts it as not recorded: no measurement of that value itself exists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasureConfig:
    # === measures.py ===
    # --- title lettering (``title_row``) ---
    # share of a box's strong ink on lines of title letters that makes it lettering;
    # measured in 352c678 over 732 true pictures (all shared sources, and the early pages
    # scanned 13 other ways): 0.14 at most; the rule was written for one page,
    # bpt6k15260973 f9 (a woodcut initial with its title)
    title_ink: float = 0.4
    # --- charts (``ink_chart``, ``patch_run_over``) ---
    # a colour or grey chart: at least this many solid blocks of one size in a row (or a
    # column), holding this share of the box's strong ink; measured in 942d265 on the
    # library-scan composites' charts: 5-9 blocks, 0.45-0.55 of the ink
    chart_patches: int = 4
    chart_ink: float = 0.3
    # a run of colour patches (``charts``) this share of which lies in the box, or which
    # covers this share of the box; set in 2551a42 on the target frames alone on the bed
    # (cropped 0 of 18, was 5) and Wolfenbuettel's real card alone (no crop)
    chart_held: float = 0.9
    chart_cover: float = 0.3
    # --- a stamp glued to what it is inked over (``marked_text``; ``finder`` rings) ---
    # share of the page's long side: a kept box no bigger may be a stamp; set in 19a6cd5
    # for one page: bpt6k56119308 f2, the grey royal stamp across its title (a crop at 4
    # preview sizes of 9, none after)
    stamp_box: float = 0.25
    # --- set text with a mark inked over it (``marked_text``) ---
    # text heights beside the box where the lines of set text are looked for, and the
    # share of the box's rows in which the text zone runs there; set in 58333d9 with the
    # rule (library-scan composites false crops 8 -> 3, precision 0.909 -> 0.968), the
    # values themselves not measured
    marked_beside: float = 3.0
    lines_beside: float = 0.3
    # least correlation of the box's rows' darkness with those lines; measured in 58333d9
    # over 1,730 kept boxes: stamps whose ring is not seen 0.82-0.90, pictures beside text
    # 0.37 at most
    lines_through: float = 0.6
    # --- a blank page (``unprinted``) ---
    # grey levels below the paper: a page whose darkest ink (its 99.9th percentile) is
    # paler holds no print, a blank verso with the plate behind showing through, or a
    # stain; measured in 5df38f3 and 2b232c8 (bench/show_through.py): versos made at 10%
    # and 15% of their print's depth 25-39 (those cropped), pages with pictures 113 at
    # the least as published and 45 washed out to 40% of their contrast (at 56 the early
    # books washed out lost pictures, found 0.889 -> 0.733)
    unprinted: int = 42
    # --- a drawing printed or scanned pale (``pale_drawing``) ---
    # share of the box under the page's line rhythm (set text) under which it may be a
    # pale drawing; set in 4b47e40 with the rule (early books at low contrast found
    # 0.953 -> 0.977, washed-out pages 0.889 -> 0.933, chapbooks 0.970 -> 1.000, grey
    # composites 0.960 -> 0.980; versos and ufal text as before)
    pale_zone: float = 0.05
    # strong ink at most this share of the faint: handwriting (no rhythm either, its
    # cursive joins) is dark; measured in 4b47e40/cf3181c: ufal's letters over it
    pale_strong: float = 0.6
    # --- a table or a form (``table``) ---
    # text heights: a rule's opening kernel is this long (and at least table_rule_min_px
    # px); set in 8d71f3b with the table rule, where measured: not recorded (hand-set)
    table_rule_len: float = 4.0
    table_rule_min_px: int = 3
    # share of the box's width (a rule across) or height (a rule down) a rule spans to be
    # the table's; set in 8d71f3b (across) and affd8c9 (down: the bench magazine's hatched
    # plates were taken for tables), where measured: not recorded (hand-set)
    table_rule_span: float = 0.8
    # least rules across a table; set in 8d71f3b, where measured: not recorded (hand-set)
    table_rules: int = 3
    # px, the side of the square kernel that clears the rules' own edges before the rest
    # is read; set in 8d71f3b with the table rule, where measured: not recorded (hand-set)
    table_rule_clear_px: int = 3
    # --- binarized line art (``line_art``) ---
    # faint ink over this share of the box, strong ink under this share of the faint: thin
    # lines turned grey at preview scale; set in 2e1300f, where measured: not recorded
    # (hand-set)
    line_art_faint: float = 0.1
    line_art_strong: float = 0.5
    # --- pale drawing, continued ---
    # share of the box inside a found stamp (its colour gone the paper's tint) that makes
    # its faint ink no drawing; set in 4b47e40, the value itself not measured
    pale_in_stamp: float = 0.5
    # --- a row of glyphs (``lettering``) ---
    # share of the box's height a glyph of the row stands; set in 776e19e with the first
    # prototype (Moreno chapbooks bench), where measured: not recorded (hand-set)
    lettering_shape_h: float = 0.5
    # a letter is at most this many times as wide as tall (``lettering`` and
    # ``title_letters``); set in 776e19e and 9f11eb2, where measured: not recorded
    # (hand-set)
    letter_aspect: float = 1.6
    # enclosed holes of a letter at most (``lettering`` and ``title_letters``): set in
    # 9f11eb2 for title letters, where measured: not recorded; asked by ``lettering`` too
    # in e402861 for one woodcut: chapbook 066's three standing figures (1, 4 and 4 holes)
    # in a binarized composite row 8 text heights tall (binarized composites found 0.957
    # -> 0.979)
    letter_holes: int = 2
    # a box under this many text heights is lettering with lettering_few glyphs in a row,
    # a taller one needs lettering_many (three tall shapes may be three small woodcuts);
    # set in 626847b, where measured: not recorded (hand-set)
    lettering_few_under: float = 8.0
    lettering_few: int = 3
    lettering_many: int = 4
    # share of the box's width its row's glyphs cover; set in 776e19e with the first
    # prototype, where measured: not recorded (hand-set)
    lettering_width: float = 0.4
    # --- lines of title letters (``title_row``, ``title_letters``, ``_lines``) ---
    # share of a title line's height a shape may stand above or below it and still be on
    # it; set in 352c678 with the title-line rule (title_ink measured, this not)
    title_line_slack: float = 0.1
    # text heights: a title letter stands at least this tall; set in 9f11eb2, where
    # measured: not recorded (hand-set)
    title_letter_h: float = 2.0
    # a title letter is at least this share of its height wide (bar charts are thinner);
    # set in 1ce8d9d, where measured: not recorded (hand-set)
    title_letter_thin: float = 0.25
    # a title letter's ink fills at most this share of its box; set in 9f11eb2, where
    # measured: not recorded (hand-set)
    title_letter_fill: float = 0.6
    # two letters on one cap line: tops within this share of the lower one, and the
    # taller at most this many times the lower (a tail below: a Q, a J); their rows
    # overlap by this share of the lower one; set in 413ebd6 with two other rules (early
    # books CV precision 0.808 -> 0.875 for the three), where measured: not recorded
    title_cap_line: float = 0.15
    title_tail: float = 1.5
    # letters of one size: heights within this share of each other; set in 9f11eb2, where
    # measured: not recorded (hand-set)
    title_same_size: float = 0.2
    title_overlap: float = 0.7
    # a title letter has at least this many alike on its line, itself counted (three
    # more); set in 9f11eb2, where measured: not recorded (hand-set)
    title_alike: int = 4
    # a letter joins a line when it reaches over 1/this of its height above the line's
    # bottom; set in 352c678, where measured: not recorded (hand-set)
    line_join: int = 3
    # --- chart blocks (``ink_chart``) ---
    # a solid block's least side: px, and text heights; it fills this share of its box;
    # set in 942d265 (chart_patches and chart_ink measured, these not)
    chart_patch_min_px: float = 3.0
    chart_patch_min_th: float = 0.5
    chart_patch_fill: float = 0.85
    # blocks in one row: their leading edges within this many px or this share of their
    # side, their sides within this share, their other sides within this share; set in
    # 942d265, where measured: not recorded (hand-set)
    chart_align_px: float = 2.0
    chart_align: float = 0.2
    chart_same_side: float = 0.25
    chart_same_other: float = 0.5
    # --- continuous tone (``photo``) ---
    # share of the non-paper pixels that are faint only (mid-greys); 0.6 in 90f4527, set
    # to 0.5 in fa16c23, where measured: not recorded (hand-set)
    photo_faint: float = 0.5
    # --- a stain or show-through (``faint``) ---
    # share of the box in strong ink under which it may be a stain; the percentile of its
    # darkness read as its darkest; that darkest under this many times the strong-ink
    # threshold (``Ink.t``); set in 9f11eb2, where measured: not recorded (hand-set)
    faint_strong: float = 0.03
    faint_percentile: int = 99
    faint_darkest: float = 1.3
    # --- the paper's edge (``at_edge``) ---
    # share of the page's side from an edge (and its far edge, 1 - it) that is "at the
    # edge"; a shape narrower than this share of the side is an edge's; set in de99b03,
    # where measured: not recorded (hand-set)
    edge_margin: float = 0.03
    edge_margin_far: float = 0.97
    edge_narrow: float = 0.1
    # faint ink under this share of the box near an edge is a curled corner or a shadow;
    # set in 59d9fc4 with two other rules (early recall 0.953 -> 0.977 for the three),
    # where measured: not recorded
    edge_faint: float = 0.15
    # --- marked text, continued ---
    # px: the strips beside the box are at least this wide; set in 58333d9, where
    # measured: not recorded (hand-set)
    marked_beside_min_px: int = 2

    # === ornaments.py ===
    # --- frames and cartouches (``frame_like``) ---
    # least left-right and up-down mirror correlation of a frame or a cartouche, of its
    # box and of its inner three quarters; measured in ca1cd10: scenes 0.25 at most inside
    # on the early books, and 0.4 inside called 2 composite woodcuts ornaments
    frame_sym: tuple[float, float] = (0.4, 0.5)
    # --- vignettes (``small_ornament``, ``framed``) ---
    # text heights: an unframed vignette (a tailpiece, a printer's device) or an initial is
    # an ornament up to this; measured in 31e7f4f and e935fc15 on the early books:
    # tailpieces and devices stand 16-19, a framed woodcut initial 16-17 (e-rara 74397
    # p15), no labelled picture under 22 has text running on at its right
    # (bench/figure_fragility: at 16, 2 ornaments become crops)
    vignette_h: float = 20.0
    # share of each side along which a frame's outer band is inked: framed, a picture;
    # measured in 31e7f4f: a framed devotional woodcut 0.74 of its least side, a vignette's
    # outline (a basket's rim, a device's cartouche) 0.46 at the most
    framed: float = 0.6
    # least mirror correlation of a vignette (``_vignette_mirror``); measured in f268112 on
    # the early books at ten preview sizes: the labelled ornaments that reach the rule
    # 0.53 at least, the pictures 0.46 at most (an emblem of a cup and serpent,
    # bpt6k3041989v f30)
    vignette_sym: float = 0.5
    # --- initials hung in the margin (``_hung``, ``_column_left``) ---
    # text heights: a hung initial starts this far left of its column's lines, found from
    # the lines within lines_looked text heights below it (else above), which run on
    # beside it in zone_beside of its rows (the text zone's); set in 3e87eae for one
    # page: bpt6k1521441j f40, whose cadels (about 3 text heights out at preview scale)
    # were crops at 6 sizes of 9
    hung: float = 1.0
    lines_looked: float = 8.0
    zone_beside: float = 0.6
    # --- a vignette stands alone (``_alone``) ---
    # text heights: "beside" a vignette ends at a blank run this wide; measured in 467e84d
    # and fd6193e: text set beside a picture starts within a text height or two of it, an
    # opening's margins and fold are wider (bench.spreads: early text openings clean
    # 0.750 -> 0.857; at 4, ufal's slides and theses lost 9 crops)
    alone_gap: float = 8.0
    # --- mirrors turned (``_turned_corr``, ``_turnable``) ---
    # degrees: a shape scanned 1.5 deg askew has its mirror turned twice that; measured in
    # e1b0758: early CV crops that are pictures 0.935 -> 0.956, robustness at a 1.5 deg
    # skew 0.854 -> 0.911; chapbooks, composites, ufal, DTA, OCR-D the same
    mirror_turns: tuple[float, ...] = (-3.0, -1.5, 1.5, 3.0)
    # share of the image: bigger boxes (plates) are compared unturned, a cost guard (8
    # more warps of a plate cost milliseconds); set in e1b0758, where measured: not
    # recorded; made a share of the image, not the page, in 7f89d04 for one page:
    # bpt6k6127905 f2 (the arms of Toul under a gutter shadow)
    mirror_turned: float = 0.15
    # px: a box this narrow or less is a speck, neither blurred nor turned; set in 90f4527,
    # where measured: not recorded (hand-set)
    speck_side_px: int = 4
    # --- a vignette's mirror moved (``_vignette_mirror``) ---
    # px the mirror is also moved either way; set in f268112 for one page: bpt6k6258473t
    # f37 0.75 deg askew (0.41, moved 0.52); moved by two pixels, it took pictures of
    # ufal's pages for ornaments
    vignette_shifts: tuple[float, ...] = (-1.0, 1.0)
    # --- initials (``small_ornament``, ``_initial``) ---
    # a painted initial's own block (``_core``) is an initial down to this width over its
    # height; set in 413ebd6 with two other rules (early books CV precision 0.808 -> 0.875
    # for the three), where measured: not recorded
    core_narrow: float = 0.5
    # a vignette is at least this share of its height wide (a standing figure is taller
    # than wide); set in efe9ef4 (scored only as a whole), where measured: not recorded
    vignette_wide: float = 0.85
    # --- a frame's outer band (``framed``, ``_side_cover``) ---
    # the band is 1/this of the box across (4% of a side), and at least this many px; set
    # in 31e7f4f with framed (framed measured, the band not)
    frame_band_parts: int = 25
    frame_band_min_px: int = 2
    # --- a square or solid initial (``_initial``) ---
    # a solid initial is no narrower than this share of its height (its core: core_narrow);
    # set in 9f11eb2, where measured: not recorded (hand-set)
    initial_narrow: float = 0.7
    # width over height of a square block; set in efe9ef4 (scored only as a whole), where
    # measured: not recorded
    initial_square_min: float = 0.8
    initial_square_max: float = 1.3
    # a solid block (a painted ground) is at most this wide over its height and at least
    # this share strong ink; set in 9f11eb2, where measured: not recorded (hand-set)
    initial_solid_max: float = 1.4
    initial_solid_ink: float = 0.5
    # --- text beside an initial (``_hung``, ``_text_runs_on``, ``_column_left``) ---
    # text heights: the text beside a box starts within this of it; set in efe9ef4 (scored
    # only as a whole; ``_hung`` took it in 3e87eae), where measured: not recorded
    text_starts_within: float = 4.0
    # box widths to its right looked at for the lines it begins or that run on beside it;
    # set in efe9ef4 (``_column_left`` took it in 3e87eae), where measured: not recorded
    look_right: int = 4
    # text heights of inked rows that make lines below (or above) a box; the quantile of
    # their first ink read as the column's left; set in 3e87eae for one page:
    # bpt6k1521441j f40 (with hung)
    column_lines: float = 2.0
    column_left_quantile: float = 0.25
    # --- a painted initial with words glued on (``_core``) ---
    # share of a column's rows in faint ink that makes it the block's; text heights the
    # block and the words each span at least; share of the words' strong ink in glyphs;
    # set in 413ebd6 (three rules scored together), where measured: not recorded
    core_dense: float = 0.6
    core_min_w: float = 2.0
    core_words: float = 0.6
    # --- alone on its lines (``_alone``) ---
    # px: the blank run is at least this wide; set in 467e84d with alone_gap, where
    # measured: not recorded (hand-set)
    alone_gap_min_px: int = 2
    # a row has ink beside the box at this many px (or text heights, the more); at most
    # this share of rows may; set in efe9ef4 (scored only as a whole), where measured: not
    # recorded
    alone_row_ink_px: float = 3.0
    alone_row_ink: float = 1.5
    alone_rows: float = 0.25
    # --- a square block (``_blocky``) ---
    # ink within 1/this of the box across from each side along at least this share of it;
    # set in efe9ef4 (scored only as a whole), where measured: not recorded
    block_band_parts: int = 10
    block_cover: float = 0.4
    # --- text running on at a box's right (``_text_runs_on``) ---
    # share of the rows a column of glyphs fills; share of rows with glyphs near the box;
    # set in efe9ef4 (scored only as a whole), where measured: not recorded
    runs_on_rows: float = 0.25
    runs_on_near: float = 0.5
    # --- bands and flourishes (``ornament``, ``frame_like``) ---
    # a box wider than ``UNITS.band_aspect`` times its height, or narrower than this share
    # of it, is a band (a head- or tailpiece); set in 776e19e with the first prototype,
    # where measured: not recorded (hand-set)
    band_aspect_tall: float = 0.25
    # a mirror-symmetric flourish of thin lines: left-right correlation over this, strong
    # ink under this share ("engravings are denser"); set in 626847b, where measured: not
    # recorded (hand-set)
    flourish_sym: float = 0.8
    flourish_ink: float = 0.15
    # share of the box cut off each side for a frame's inside (its inner three quarters);
    # set in efe9ef4 (scored only as a whole), where measured: not recorded
    frame_inset: float = 1 / 8


@dataclass(frozen=True)
class VerdictConfig:
    # === verdicts.py ===
    # The score bands (``finder``'s docstring and THRESHOLD): kept pictures 0.6-1.0;
    # ornaments, initials and pictures under min_area score_look (worth a curator's look);
    # text blocks at most 0.125; rules, charts, lettering, specks, page-edge marks
    # score_lowest-score_low. Any threshold in 0.31-0.6 gives the verdicts. Set in 90f4527
    # and 3a7d404 (the bands documented), where measured: not recorded (hand-set)
    # --- a thin rule (``judge``) ---
    # text heights: a box thinner than this, or longer than rule_aspect times its width,
    # is a rule; set in 776e19e with the first prototype, where measured: not recorded
    rule_thin: float = 2.0
    rule_aspect: int = 8
    # score of a rule or a chart: never a picture (band set in 90f4527, charts joined it in
    # 942d265; where measured: not recorded)
    score_lowest: float = 0.05
    # share of min_area under which a box is a speck (scored score_low); set in 90f4527,
    # where measured: not recorded (hand-set)
    speck_area: float = 0.25
    # score of a speck, a faint box, a page-edge mark, a table, lettering, marked text
    # (band set in 90f4527; where measured: not recorded)
    score_low: float = 0.1
    # score of an ornament, an initial, a picture under min_area (band set in 776e19e and
    # 90f4527; where measured: not recorded)
    score_look: float = 0.3
    # a kept picture scores kept_floor, plus kept_shapes_weight as its big-shape share
    # rises kept_shapes_span above PARAMS["big"], plus kept_size_weight as its area rises
    # to kept_size_full times min_area; set in 90f4527 (3a7d404 named the shapes term),
    # where measured: not recorded (hand-set)
    kept_shapes_span: float = 0.4
    kept_floor: float = 0.6
    kept_shapes_weight: float = 0.25
    kept_size_weight: float = 0.15
    kept_size_full: float = 5.0
    # --- the shape verdict (``_shape_verdict``) ---
    # a text block scores this share of its big-shape share: under 0.125 (big is under
    # PARAMS["big"], 0.5), below the review floor (finder.REVIEW_FLOOR, 0.15); set in
    # 3a7d404, where measured: not recorded (hand-set)
    text_block_score: float = 0.25
    # text heights: only a box lower than this is asked whether it is a row of glyphs
    # (``lettering``); set in 90f4527, where measured: not recorded (hand-set)
    lettering_box_h: float = 10.0


MEASURES = MeasureConfig()
VERDICTS = VerdictConfig()
