"""The proposals stage's constants (``proposals``, ``frames``, ``ring_stamps``): how
picture seeds grow into candidate boxes, are cut apart and trimmed, how a picture's
frame line is found, and how a library stamp is told by its ring.

One typed config so each value is named once, with what it is, its unit and where it
was measured. A leaf: it imports nothing from ``archive``, so every module can import
it. Units: "text heights" are multiples of the page's set-text height (``Ink.th``, px);
"levels" are darkness levels (0-255 below the paper); "shares" are fractions. "Early
books" are the early printed books of ``figures/early``, "chapbooks" the Moreno
chapbooks: the annotated pictures the rules were written on (``python -m
bench.figure_eval``). The glyph height (2.5 text heights) the proposals also read is
shared with other stages: ``units.UNITS.glyph_h``.

Where a value was set by a commit that names no measurement, its comment says so
("where measured: not recorded") and names the commit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProposalConfig:
    # ===================== proposals.py: seeds grown into boxes =====================
    # --- candidate_boxes ---
    # share of its box that a border band's shape inks at least: a painted border is
    # densely inked, a thin frame line is not; set in 413ebd6 with the painted border cut
    # in slices by its text (early books CV precision 0.808 -> 0.875), where measured:
    # not recorded
    band_ink_share: float = 0.3
    # share of the full image's area: a box under it is a speck, kept whole (nothing to
    # cut or trim); set in 22ccb0e for speed (finder p95 9 ms CPU), where measured: not
    # recorded (hand-set)
    speck_area_share: float = 0.002
    # mirror symmetry (correlation, as scanned) above which a part is one ornament, kept
    # whole and not split (a tailpiece's wings); set in 626847b, kept as scanned in
    # e1b0758 (turned, two woodcuts in a row became one ornament); where measured: not
    # recorded (hand-set)
    whole_mirror: float = 0.6

    # --- _page_frame: thin rules framing a page or a text block ---
    # share of a seed's box that lies inside the frame for it to count as held: a frame
    # warped on the scan lets what it frames poke out; set in eb22f11 for one page:
    # bpt6k15260973 f9 at 340 px (figure_scales early found 0.990 -> 0.992)
    page_frame_inside: float = 0.8
    # share of the frame's area a held seed fills for the frame to be the picture's own
    # line (not a page frame); set in 169afd2 for one page: bpt6k15260973 f9's title
    # woodcut (early books CV recall 0.977 -> 1.000)
    page_frame_fills: float = 0.6
    # share of its box a page frame inks at most (sparse rules); set in 169afd2 for one
    # page: bpt6k15260973 f9
    page_frame_sparse: float = 0.1
    # seeds a page frame holds at least; set in 169afd2 for one page: bpt6k15260973 f9
    page_frame_least_held: int = 2

    # --- _mended_frames, _one_frame, _same_row: the halves of a broken frame ---
    # share of the lower box's height that two boxes side by side share: one row; set in
    # 337585e for one page: Moreno 279_4's "FIN." cartouche, -0.75 degrees askew and on a
    # bed (two crops); reused by the headpiece rows (b4e1227)
    row_share: float = 0.8
    # share of the gap's columns between a broken frame's halves that its lines cross at
    # top and bottom; measured in 337585e/eb1fedc for one page: Moreno 279_4's cartouche
    # -0.75 degrees askew 0.53, at 375-700 px as published 0.52-0.62
    gap_crossed_share: float = 0.5

    # --- _headpieces, _split: a headpiece of cast ornaments ---
    # text heights: a headpiece band (and each of its blocks) is no deeper than this: a
    # few lines; set in 1ce8d9d for the band not split across (where measured: not
    # recorded), and for the blocks in b4e1227 for one page: OCR-D bengel 1751 p7's band of
    # fleurons (no other region of 579 early, chapbook and labelled pages moved)
    head_deep: float = 8.0
    # text heights: blocks of one headpiece lie this far apart at most, and the row grows
    # sideways over shapes this near; set in b4e1227 for one page: OCR-D bengel 1751 p7
    head_gap: float = 2.0
    # text heights: the shapes a headpiece row grows over stick out above or below its
    # height this much at most (half a text height); set in b4e1227 for one page: OCR-D
    # bengel 1751 p7
    head_row_slack: float = 0.5
    # mirror symmetry (correlation, as scanned) above which a row of blocks is one band;
    # set in b4e1227 for one page: OCR-D bengel 1751 p7
    head_sym: float = 0.5

    # --- _unslice ---
    # share of a box's area inside a band for the box to be replaced by the whole band;
    # set in 413ebd6 with the painted border cut in slices (early books CV precision 0.808
    # -> 0.875), where measured: not recorded
    unslice_inside: float = 0.8

    # --- _border_wide ---
    # share of the page across it: a painted border band is no wider; measured in 454a526
    # on the early books and the chapbooks at 9 preview sizes: borders 0.16 of the page at
    # most, a text column glued to the miniature over it at preview scale 0.29
    # (figure_scales early at 420 px found 0.977 -> 1.000)
    border_share: float = 0.2

    # --- _absorb: small shapes inside a box join it ---
    # share of a shape's box that lies within the box (grown by a gap) for it to join;
    # set in 90f4527, where measured: not recorded (hand-set)
    absorb_inside: float = 0.5
    # share of the box's area a joining shape has at most: a page frame's rules reach
    # round the picture; set in eb22f11 for one page: bpt6k15260973 f9 at 340 px
    absorb_size: float = 0.5

    # --- _split ---
    # levels of recursive splitting at most; set in de99b03 (was 6 in a48ce4e), where
    # measured: not recorded (hand-set)
    split_depth: int = 4

    # --- _parts: a region that reads as text as a whole ---
    # big-shape share (``measures.big_share``) a part needs to be kept as plainly printed
    # picture; set in 1ce8d9d, where measured: not recorded (hand-set)
    part_big_share: float = 0.8
    # share of a part's box in weak ink it needs to be kept so; set in 1ce8d9d, where
    # measured: not recorded (hand-set)
    part_weak_density: float = 0.35

    # --- _cut_zone, _text_column, _two_lines ---
    # share of a row (column) of the box in the text zone for it to read as set text;
    # set in 59d9fc4 (early books recall 0.953 -> 0.977), the value: not recorded
    texty_line_share: float = 0.5
    # share of the box's length that bands of text cover for the box to be all text
    # (kept whole, judged as a text block); set in 59d9fc4 (early books recall 0.953 ->
    # 0.977), the value: not recorded
    all_text_share: float = 0.8
    # share of a box's rows in which a column is text for a column of set text to run
    # down it (cut by columns first); set in 2daf421 for one page: btv1b8626772v f20
    # darker or noisier (its miniature sliced by the column's lines; robustness early
    # means 0.995/0.922/0.920/0.959 -> 0.998/0.922/0.930/0.964)
    text_column_share: float = 0.8
    # px: a band of text two lines deep (``UNITS.glyph_h`` text heights) is this many
    # pixels at least; set in 59d9fc4, where measured: not recorded (hand-set)
    two_lines_least_px: int = 2

    # --- _printed ---
    # text heights squared: strong ink (not text) a part holds at least to be printed;
    # set in 59d9fc4, where measured: not recorded (hand-set)
    printed_least_area: int = 2

    # --- _trim_strays: a sliver of stray ink beyond an empty band ---
    # px: the empty band (a text height deep) is this many pixels at least; set in
    # fa16c23, where measured: not recorded (hand-set)
    stray_gap_least_px: int = 2
    # share of the box's ink: a stray sliver holds less; set in fa16c23, where measured:
    # not recorded (hand-set)
    stray_ink_share: float = 0.05

    # --- _trim_stain, _stain: an edge strip that holds no print ---
    # px: a row (column) with more strong ink than this is printed, whatever its length;
    # set in beda85a for one page: bpt6k15201149 f26, a fleuron over a brown stain (an
    # ornament at every size, was a crop at 6 of 9)
    stain_printed_least_px: float = 2.0
    # share of the box across: a row (column) with strong ink along more is printed; set
    # in beda85a for one page: bpt6k15201149 f26
    stain_printed_share: float = 0.02
    # text heights: an edge strip with no print is a stain when this deep at least; set in
    # beda85a for one page: bpt6k15201149 f26 (figure_scales early precision 0.864 ->
    # 0.876, figure_eval early CV IoU 0.893 -> 0.905)
    stain_depth: float = 2.0
    # percentile of the strip's darkness read as its darkest (a few specks aside); set in
    # beda85a for one page: bpt6k15201149 f26
    stain_dark_percentile: int = 99
    # times the strong-ink threshold (``Ink.t``): a stain's darkest stays under it (even
    # its darkest is faint); set in beda85a for one page: bpt6k15201149 f26 (the same bar
    # as ``measures``' pale drawing, 9f11eb2)
    stain_dark: float = 1.3
    # times the strong-ink threshold: darkness over it is faint ink; set in beda85a for
    # one page: bpt6k15201149 f26
    stain_faint: float = 0.5
    # share of the strip in faint ink at least: a tone. Measured in beda85a: a woodcut's
    # pale part (thin lines on paper) 1-2% of its strip, stains 10-60%; set for the page
    # bpt6k15201149 f26
    stain_tone: float = 0.05

    # --- _trim_text, _text_strip, _texty: a text line glued on by show-through ---
    # text strips cut off one after another at most; set in d01c03e, where measured: not
    # recorded (hand-set)
    text_trim_rounds: int = 4
    # share of the box's width: a row with no more strong ink is free (paper); set in
    # d01c03e, where measured: not recorded (hand-set)
    text_free_row: float = 0.01
    # share of the box's height from its top or its bottom edge where a free band that
    # parts a text strip is looked for (the bottom's reach written as 1 - this); set in
    # d01c03e, where measured: not recorded (hand-set)
    text_strip_reach: float = 0.4
    # text heights: a line of text is this deep at least. A strip shallower is no text
    # line (``_texty``, d01c03e), a strip beyond a frame this deep is cut off as a part
    # of its own (``frames``, 284ace4: btv1b8626772v f19, f20, f25-f27's rubrics, IoU
    # 0.61-0.85 -> 0.86-0.92); where measured: not recorded (hand-set)
    text_line_depth: float = 1.5
    # text heights: a strip of a set line or two is no deeper; set in d01c03e, where
    # measured: not recorded (hand-set)
    text_strip_deep: int = 4
    # share of the strip in strong ink at least: a set line is dense in black; set in
    # 3b916f4 (dense glyph lines only), where measured: not recorded (hand-set)
    text_line_ink: float = 0.15
    # big-shape share (``measures.big_share``) a set line stays under: made of glyphs;
    # set in d01c03e, where measured: not recorded (hand-set)
    text_line_big: float = 0.25

    # --- _channels_in, _crossed, _pieces: clean paper channels between woodcuts ---
    # times the strong-ink threshold (``Ink.t``): darkness under it counts as none in a
    # channel's profile; set in 776e19e with the first prototype on the chapbooks, where
    # measured: not recorded (hand-set)
    channel_dark: float = 0.25
    # text heights: a channel lies this far from the box's sides at least, and parts
    # between channels are this wide at least; set in 90f4527, where measured: not
    # recorded (hand-set)
    channel_margin: int = 3
    # share of the box's width: the margin side by side (a narrow figure may sit by a
    # wide scene); set in 90f4527, where measured: not recorded (hand-set)
    channel_margin_across: float = 0.15
    # share of the box's height: the margin between stacked parts (stacked parts are
    # big); set in de99b03 (was 0.25), where measured: not recorded (hand-set)
    channel_margin_down: float = 0.3
    # share of the box's median column darkness a channel's column has at most; set in
    # 626847b with the darkness-relative channel splits, where measured: not recorded
    channel_rel_dark: float = 0.2
    # share of a channel's column in weak ink at most; set in 626847b (was 0.07), where measured:
    # not recorded (hand-set)
    channel_weak: float = 0.08
    # px: the ends within which a line across a framed box is inked at both ends (a
    # text height, this many pixels at least); set in 337585e for one page: Moreno
    # 122_1's woodcut, a curtain's edge on bare paper, split in two at 470 and 520 px
    crossed_end_least_px: int = 3
    # share of the smaller box: pieces between cuts overlapping more are cut straight
    # instead; set in a48ce4e (overhangs kept with their owner), where measured: not
    # recorded (hand-set)
    piece_overlap: float = 0.1

    # ======================= frames.py: a picture's frame line =======================
    # share of a box's side: the least length of each line of a picture's frame; set in
    # 284ace4 for one book's miniatures: btv1b8626772v f19, f20, f25-f27 (IoU 0.61-0.85 ->
    # 0.86-0.92; figure_scales early median IoU 0.887 -> 0.895)
    frame_run: float = 0.6
    # text heights: a box with a side shorter holds no framed picture; set in 284ace4 for
    # btv1b8626772v's miniatures, where measured: not recorded (hand-set)
    frame_least_side: int = 8
    # px: a frame's corners and lines are looked for within a text height, this many
    # pixels at least; set in 284ace4 for btv1b8626772v's miniatures, where measured: not
    # recorded (hand-set)
    frame_slack_least_px: int = 2
    # share of the rows between a frame's corners that both uprights ink; set in 2ab428a
    # for one page: bpt6k15223596 f31 (IoU 0.71 -> 0.90 at 4 sizes)
    frame_upright_cover: float = 0.9
    # columns either side of an upright a pixel or two askew whose ink is taken with it;
    # set in 877e3f7 for bpt6k1521441j f8 (IoU 0.75 -> 0.87 at 470 px) and btv1b8626772v's
    # miniatures at 9 more page sizes
    frame_askew_cols: int = 2
    # share of a frame's length: a row (column) beyond its line with less strong ink is
    # bare paper; set in 284ace4 for btv1b8626772v's miniatures, where measured: not
    # recorded (hand-set)
    frame_bare: float = 0.05
    # px: a text height, in the frame test (how far out paper is looked for, the gaps a
    # line is closed over), is this many pixels at least; set in 284ace4, where measured:
    # not recorded (hand-set)
    frame_th_least_px: int = 3
    # px: the dilation across a line that takes a line a pixel askew on the scan with its
    # neighbours; set in 284ace4 (across) and 2ab428a (down), where measured: not recorded
    frame_line_dilate_px: int = 3
    # px: the opening that keeps long lines only (``frame_run`` of the box) is this long
    # at least; set in 284ace4, where measured: not recorded (hand-set)
    frame_open_least_px: int = 3
    # text heights: an upright's ink is closed over gaps this long (a painted frame's
    # gaps at preview scale); set in 2ab428a for one page: bpt6k15223596 f31
    frame_upright_close: int = 2

    # ================== ring_stamps.py: library stamps by their ring ==================
    # Where measured for the ring rules of 1b2a180: the early books' shipped crops (false
    # crops 6 -> 5: a cartouche gone, an arms no longer glued to its stamp); the values
    # themselves were reasoned (a stamp is a few cm, a few lines across), not recorded.
    # share of directions in which the darkness peaks at the radius: a closed ring; set
    # in 1b2a180, where measured: not recorded (hand-set)
    ring_closed: float = 0.85
    # share of directions not hidden by print beside the ring at least (a stamp inked over
    # a title: its ring hidden under letters in up to 3 directions in 10); set in 0ea5a7d
    # for one page: the grey stamp on bpt6k56119308 f2 (early books' crops that are
    # pictures 0.896 -> 0.915, book-grouped CV)
    ring_seen: float = 0.7
    # share of the seen directions in which the ring must then peak (closed nearly all
    # round); set in 0ea5a7d for one page: bpt6k56119308 f2
    ring_seen_closed: float = 0.9
    # text heights: the least and most radius (a stamp is a few lines across, never a
    # plate); set in 1b2a180, where measured: not recorded (hand-set)
    ring_radius: tuple[float, float] = (3.0, 12.0)
    # share of the page's long side: the least and most radius (a stamp is a few cm on a
    # page, a round plate is bigger, a small round mark, an icon or a letter's seal, is
    # smaller); set in 1b2a180, where measured: not recorded (hand-set)
    ring_side: tuple[float, float] = (0.035, 0.12)
    # px at preview scale: inside and outside the ring, where it must be paler; set in
    # 1b2a180, where measured: not recorded (hand-set)
    ring_step: int = 3
    # levels of darkness the ring stands above both sides of it; set in 1b2a180, where
    # measured: not recorded (hand-set)
    ring_rise: int = 8
    # the gradient transform's (HOUGH_GRADIENT_ALT) edge threshold (param1) and least
    # circle perfectness (param2); set in b64010d (was the plain transform's 60/10), where
    # measured: not recorded (hand-set)
    ring_hough_edge: int = 300
    ring_hough_round: float = 0.5
    # most share of strong ink inside the ring's inner disc: a stamp's legend and emblem;
    # set in 1b2a180, where measured: not recorded (hand-set)
    ring_solid: float = 0.45
    # share of the radius: the inner disc whose ink ``ring_solid`` bounds; set in 1b2a180,
    # where measured: not recorded (hand-set)
    ring_disc: float = 0.8
    # most share of directions in which a picture's big shapes lie just outside; set in
    # 1b2a180, where measured: not recorded (hand-set)
    ring_around: float = 0.5
    # radii out (first, last) between which ``around`` looks for ink, and the radii read
    # in that span; set in 1b2a180, where measured: not recorded (hand-set)
    ring_around_span: tuple[float, float] = (1.25, 1.75)
    ring_around_steps: int = 5
    # px: how far from the transform's circle its ring is looked for when fitted again;
    # set in dd0fe3a for one page: the grey stamp across bpt6k56119308 f2's title (found at
    # 4 preview sizes of 9, was 1)
    ring_refit: float = 2.0
    # px: the step between the radii read along each ray when fitting again; set in
    # dd0fe3a for one page: bpt6k56119308 f2
    ring_refit_step: float = 0.5
    # fits made (the second without the rays off the first); set in dd0fe3a for one page:
    # bpt6k56119308 f2
    ring_refit_rounds: int = 2
    # share of the rays whose darkest point must lie inside their span for a fit; set in
    # dd0fe3a for one page: bpt6k56119308 f2
    ring_refit_rays: float = 0.5
    # px: rays further than this off the first fit are left out of the second; set in
    # dd0fe3a for one page: bpt6k56119308 f2
    ring_refit_keep_px: float = 1.0
    # the accumulator transform's (HOUGH_GRADIENT) edge threshold (param1) and least votes
    # (param2), round small boxes; set in 19a6cd5 for one page: the grey royal stamp
    # across bpt6k56119308 f2's title (a crop at 4 preview sizes of 9 -> none)
    ring_canny: int = 100
    ring_votes: int = 20
    # directions read round a circle; set in 1b2a180, where measured: not recorded
    ring_directions: int = 90
    # px, offsets from the radius read as "at" the ring (within a pixel), the darkest
    # taken; set in 1b2a180, where measured: not recorded (hand-set)
    ring_on_offsets: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
    # px at preview scale: the Gaussian blur (sigma) of the darkness the transforms read;
    # set in 1b2a180, where measured: not recorded (hand-set)
    ring_blur: float = 0.8
    # the transforms' accumulator resolution (dp: 1 is the image's own); set in 1b2a180,
    # where measured: not recorded (hand-set)
    ring_dp: int = 1
    # the gradient transform's least distance between centres: the least radius over
    # this, and never under ``ring_min_dist_least_px``; set in 1b2a180, where measured:
    # not recorded (hand-set)
    ring_min_dist_div: int = 2
    ring_min_dist_least_px: int = 4
    # round a small box, the accumulator transform reads this margin: the least radius
    # over ``ring_voted_margin_div``, ``ring_voted_margin_least_px`` at least, and its
    # least distance between centres (px); set in 19a6cd5 for one page: bpt6k56119308 f2
    ring_voted_margin_div: int = 2
    ring_voted_margin_least_px: int = 2
    ring_voted_min_dist_px: int = 2


PROPOSALS = ProposalConfig()
