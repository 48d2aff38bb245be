"""The figure finder's constants, one typed config a stage, each value named once with
what it is, its unit and where it was measured (or that nobody recorded it): a reader
sees every number the finder rests on, and ``bench.figure_fragility`` moves each in turn.

``units`` holds the text-height multiples several stages share; ``ink.PARAMS`` (the four
values the CV grid of ``bench.figure_eval`` tunes in place) stays a dict in ``ink``.
"""

from archive.figures.config.extent import EXTENT, ExtentConfig
from archive.figures.config.finder import LOOK, LookConfig
from archive.figures.config.ink import INK, InkConfig
from archive.figures.config.proposals import PROPOSALS, ProposalConfig
from archive.figures.config.units import UNITS, Units
from archive.figures.config.verdicts import MEASURES, VERDICTS, MeasureConfig, VerdictConfig

# each stage's config, in the order a page goes through them
STAGES = {"units": UNITS, "extent": EXTENT, "ink": INK, "proposals": PROPOSALS,
          "measures": MEASURES, "verdicts": VERDICTS, "finder": LOOK}

__all__ = ["EXTENT", "INK", "LOOK", "MEASURES", "PROPOSALS", "STAGES", "UNITS", "VERDICTS",
           "ExtentConfig", "InkConfig", "LookConfig", "MeasureConfig", "ProposalConfig",
           "Units", "VerdictConfig"]
