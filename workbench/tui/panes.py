"""The six stage panes and the doors they draw from (numpy, the lenses, the compare engine's
views, the use cases): the app imports this in a worker, behind its first frame (issue 47)."""

from __future__ import annotations

from workbench.tui import services
from workbench.tui.stages import Stage
from workbench.tui.stages.compare import CompareStage
from workbench.tui.stages.frame import FrameStage
from workbench.tui.stages.hypothesize import HypothesizeStage
from workbench.tui.stages.inspect import InspectStage
from workbench.tui.stages.share import ShareStage
from workbench.tui.stages.verify import VerifyStage
from workbench.tui.state import InvestigationState

PANES: dict[str, type[Stage]] = {
    "frame": FrameStage,
    "compare": CompareStage,
    "inspect": InspectStage,
    "hypothesize": HypothesizeStage,
    "verify": VerifyStage,
    "share": ShareStage,
}

__all__ = ["PANES", "FrameStage", "InvestigationState", "Stage", "services"]
