"""The finder stage's constants (``finder``, ``second_look``): how a page is read.

One typed config so each value is named once, with what it is, its unit and where it
was measured: the page read sideways, askew, closer or twice, the stamps found by their
rings, and the score bands a curator sees. A leaf: it imports nothing from ``archive``,
so every module can import it. "Early books" are the early printed books of
``figures/early``, "chapbooks" the Moreno chapbooks: the annotated pictures the rules
were written on (``python -m bench.figure_eval``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LookConfig:
    # --- what the reader shows and a curator's knobs (``bench.figure_fragility`` skips
    # these: not rules) ---
    # share of the page's area: a candidate smaller than this comes back "too_small";
    # set in 776e19e with the first prototype and its chapbook bench, where measured:
    # not recorded (hand-set)
    default_min_area: float = 0.01
    # px, the preview's long side the finder reads; measured in 90f4527 on the bench
    # composites: 720 px measured no better (and every page judged at 400 px: double
    # resolution 0.741, OCR-D text pages 0.727, docs/figure-finder.md)
    preview_side: int = 360
    # score a candidate needs to be kept. Score bands: kept pictures 0.6-1, ornaments and
    # pictures under min_area 0.3, text blocks <= 0.125, rules, lettering and specks
    # <= 0.1, so any threshold in 0.31-0.6 gives the verdicts; set in 702c880, where the
    # finder as the page filter kept 74 of 94 ufal picture pages (the layout model 45)
    threshold: float = 0.5
    # score from which the curator sees candidates: not text blocks (<= 0.125) or specks
    # (<= 0.1); set in 702c880 between the score bands, where measured: not recorded
    # (hand-set between the bands)
    review_floor: float = 0.15
    # score of a library stamp found by its colour (never kept); set in efe9ef4 in the
    # band of rules and page-edge marks, where measured: not recorded (hand-set)
    stamp_score: float = 0.1
    # score of what lies outside the page (never kept); set in e9f7a40, where measured:
    # not recorded (hand-set)
    outside_score: float = 0.05

    # --- read sideways (``finder._sideways``) ---
    # share of the page: the text rhythm read down its columns covers this much more of
    # it than read across its rows, and the page is turned a quarter; measured in 86d89ce
    # and after on the early books and chapbooks: upright 0.009 more at most, turned 0.03
    # more or over on 198 of 219 (the others hardly have text); of 360 DTA, OCR-D and
    # ufal pages one tiny typed sheet (167 px wide) measured 0.148
    sideways: float = 0.03
    # times: read down, the rhythm must also cover this many times what it covers read
    # across; set with ``sideways`` in 86d89ce on the early books turned a quarter (crops
    # that are pictures 0.527 -> 0.872, text pages clean 0.740 -> 0.935; chapbooks turned
    # as upright); its own margin: not recorded
    sideways_ratio: int = 2

    # --- read level (``finder._skew``) ---
    # degrees: a page whose lines run this far askew or more is read turned level;
    # measured in 49612da on the early books at 3 and 5 degrees (found 0.907/0.837 ->
    # 1.000, crops that are pictures 0.830/0.706 -> 0.915/0.860); levelling from 1 degree
    # instead: the early books at 0.75 degrees 0.896 -> 0.878 and one chapbook page lost
    # its picture (docs/figure-finder.md)
    skew_level: float = 2.0

    # --- read closer (``finder._closer_look``) ---
    # share of ``preview_side``: a page whose long side in the preview is under this (a
    # small book on a copy stand's bed, a library's label bar under the page) is read
    # again from a finer decode of its own area; measured in 3d1bb51 (``python -m
    # bench.figure_robustness --frame``): the rules were written on pages of 360-420 px;
    # the early books on a bed 1.5 times their size (pages of 250 px) kept 0.857 crops
    # that are pictures, read again 0.956
    closer: float = 0.8
    # times the preview's long side: a finer decode smaller than this is not read again
    # (no finer worth a second pass); set in 3d1bb51 with ``closer``, where measured: not
    # recorded (hand-set)
    closer_finer: float = 1.2

    # --- sharpen a soft page only when printed (``focus``) ---
    # multiples of ``measures.UNPRINTED`` (grey levels under the paper): a soft page is
    # sharpened only when its darkest ink is this deep (2 x 42 = 84 levels); measured in
    # 8519a1f (``python -m bench.show_through``): sharpened, blank versos with the plate
    # behind showing through at 15% of its depth were crops (1 of 116 early, 1 of 103
    # chapbook versos; at 10% with the gate at UNPRINTED, 42, too); the early books
    # blurred 2 px measured 55 at the least
    printed_unprinted: int = 2

    # --- a box the verdicts keep at any size (``finder._picture``) ---
    # share of the page's area: a size floor under any box, so only the verdicts judge;
    # set in b64010d (ring stamps looked for only where a box would be kept), where
    # measured: not applicable (no floor), hand-set
    any_size_area: float = 1e-9

    # --- stamps by their rings (``finder._inked_over``): round a kept box no bigger than
    # ``measures.STAMP_BOX`` the accumulator transform proposes rings too
    # (``ring_stamps.rings``), a stamp only where what lies round it is what a library
    # stamps over. All set in 19a6cd5 for one page: bpt6k56119308 f2 (a grey royal stamp
    # across its title was a crop at 4 of 9 preview sizes, then none), with a bell
    # skirt's outline (its picture round it) as the ring that is no stamp; checked on
    # figure_scales early pictures 0.922 -> 0.930, robustness 0.916 -> 0.927,
    # library-scan composites false crops 10 -> 8 ---
    # share of the directions round the ring in which set text (the text zone) lies
    stamp_on_text: float = 0.25
    # share of the directions round the ring with ink, at most: bare paper
    stamp_alone: float = 0.1
    # radii: title letters are looked for in the box this many radii round the centre
    stamp_letters_box: int = 2
    # radii: a title letter this near the centre counts
    stamp_letters_near: float = 1.75
    # letters: this many title letters near the ring or more
    stamp_letters_min: int = 2

    # --- reading order (``finder._reading_order``) ---
    # share of the shorter of two vertical spans: overlapping by more than this, two
    # regions are one row; set in 90f4527, where measured: not recorded (hand-set)
    row_overlap: float = 0.5

    # --- the second look (``second_look``) ---
    # times the preview: the other look's scale (a 4 px text height becomes 5, a 5
    # becomes 6); measured in 7a8da62 on the early books scanned differently (crops that
    # are pictures 0.823 -> 0.836, text pages clean 0.914 -> 0.923, mean of 13 changes;
    # chapbooks unchanged); 1.0 or 1.56: 2 false crops more on the early books at a 1.5
    # degree skew (``bench.figure_fragility``, docs/figure-finder.md)
    second_scale: float = 1.25
    # share of the page's area: kept crops smaller than this are looked at twice; set in
    # 7a8da62 with ``second_scale``, on the same early books and chapbooks
    doubt_area: float = 0.1
    # IoU at which the other look's candidate is the same box; set in 7a8da62 with
    # ``second_scale``, on the same early books and chapbooks
    same_iou: float = 0.5
    # share of a small crop: the other look keeps less than this of it while it judges
    # this much or more part of a box that is no picture, and the crop is taken back;
    # measured in 424a957: figure_scales early crops that are pictures 0.886 -> 0.901,
    # text and decorative pages clean 0.941 -> 0.951, chapbooks 0.976 -> 0.987; grey
    # composites precision 0.962 -> 0.981, ufal picture pages 0.830 -> 0.809
    cover: float = 0.5


LOOK = LookConfig()
