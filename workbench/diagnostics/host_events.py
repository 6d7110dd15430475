"""Host events that a kernel log or syslog records beside failures: network links going down
and up (a flap), corrected PCIe errors and clock steps. Each is an observation for the
timeline, never a failure: a link that went down may or may not have carried the job's
traffic, and a corrected error was corrected.

Line shapes, by writer: systemd-networkd ``IFACE: Lost carrier`` / ``Gained carrier`` /
``Link DOWN`` / ``Link UP``; dhcpcd and others ``IFACE: carrier lost`` / ``lost carrier``;
NIC drivers (mlx5 ``IFACE: Link down``/``Link up``, e1000e/ixgbe ``IFACE: NIC Link is Down``,
igb ``IFACE NIC Link is Down``); not the kernel's ``ADDRCONF(NETDEV_CHANGE): IFACE: link
becomes ready``, which every new container interface logs; PCIe AER ``AER: Corrected error
received: BDF`` (newer kernels ``Correctable error message received from BDF``); chronyd
``System clock was stepped by S seconds`` and ntpd ``clock_step +S s``.
"""

from __future__ import annotations

import re
from collections import defaultdict

from workbench.numbers import utc_time
from workbench.diagnostics.events import Event, EventValues
from workbench.diagnostics.result import Evidence, EventRole

LINK_KIND = "link_state"
PCIE_CORRECTED_KIND = "pcie_corrected"
CLOCK_STEP_KIND = "clock_step"

_IFACE = r"([A-Za-z][\w.@-]{0,31})"
_LINK_DOWN = re.compile(
    rf"(?:^|\s){_IFACE}(?:: (?:(?:Lost|lost) carrier|carrier lost|Link DOWN|Link [Dd]own\b|(?:NIC )?Link is Down)"
    r"| NIC Link is Down)"
)
_LINK_UP = re.compile(
    rf"(?:^|\s){_IFACE}(?:: (?:(?:Gained|gained) carrier|carrier acquired|Link UP|Link [Uu]p\b|(?:NIC )?Link is Up)"
    r"| NIC Link is Up)"
)
_AER_CORRECTED = re.compile(
    r"AER: Correct(?:ed|able) error (?:message )?received(?: from)?:? ?(?:id=)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
    r"[0-9a-fA-F]{2}(?:\.\d)?|[0-9a-fA-F]{4})?"
)
_CLOCK_STEP = re.compile(
    r"System clock was stepped by (-?\d{1,12}(?:\.\d{1,9})?) seconds|clock_step ([+-]?\d{1,12}(?:\.\d{1,9})?) s"
)

# Every line read here contains one of these (logs.py scans only such lines).
KEYWORDS = ("carrier", "Link", "AER:", "clock")


def match(msg: str) -> tuple[str, EventRole, EventValues] | None:
    """(kind, role, values) of a host event line (prefixes removed), or None."""
    if "arrier" in msg or "ink" in msg:
        for pattern, state in ((_LINK_DOWN, "down"), (_LINK_UP, "up")):
            m = pattern.search(msg)
            if m:
                return LINK_KIND, "info", {"interface": m.group(1).rstrip(":"), "state": state}
    if "AER:" in msg:
        m = _AER_CORRECTED.search(msg)
        if m:
            return PCIE_CORRECTED_KIND, "info", {"pci": m.group(1)} if m.group(1) else {}
    if "clock" in msg:
        m = _CLOCK_STEP.search(msg)
        if m:
            return CLOCK_STEP_KIND, "info", {"step_s": float(m.group(1) or m.group(2))}
    return None


def _when(e: Event) -> str:
    if e.time is not None:
        return utc_time(e.time, ms=False)
    stamp = e.values.get("stamp_without_year")
    return f"{stamp} (year unknown)" if stamp else "an unknown time"


def _in_order(events: list[Event]) -> list[Event]:
    """By time where every event has one, else in the order of their lines (one log)."""
    if all(e.time is not None for e in events):
        return sorted(events, key=lambda e: (e.time or 0.0, e.line or 0))
    return sorted(events, key=lambda e: (e.file, e.line or 0))


def _span(events: list[Event]) -> str:
    first, last = _when(events[0]), _when(events[-1])
    if first == last:
        return f"at {first}"
    return f"between {first.removesuffix(' (year unknown)')} and {last}"


def _transitions(events: list[Event]) -> list[Event]:
    """A link's state changes: a down seen by two writers (the driver's "Link down" and
    networkd's "Lost carrier") is one change."""
    out: list[Event] = []
    for e in events:
        if not out or out[-1].values.get("state") != e.values.get("state"):
            out.append(e)
    return out


def _place(e: Event) -> str:
    return e.host or f"the host of {e.file.rsplit('/', 1)[-1]}"


def observations(events: list[Event]) -> list[tuple[str, list[Evidence]]]:
    """Host events worded as observations (text and evidence), one per link, host or step."""
    return [*_link_observations(events), *_pcie_observations(events), *_clock_step_observations(events)]


def _link_observations(events: list[Event]) -> list[tuple[str, list[Evidence]]]:
    """One per link that went down: how often it went down and came up, and when."""
    out: list[tuple[str, list[Evidence]]] = []
    links: dict[tuple[str | None, str, str], list[Event]] = defaultdict(list)
    for e in events:
        if e.kind == LINK_KIND:
            links[(e.host, e.file if e.host is None else "", str(e.values.get("interface")))].append(e)
    for (_, _, iface), lines in links.items():
        seen = _in_order(lines)
        changes = _transitions(seen)
        downs = [e for e in changes if e.values.get("state") == "down"]
        ups = len(changes) - len(downs)
        if not downs:
            continue
        flap = "a link flap; " if len(downs) > 1 or ups else ""
        out.append(
            (
                f"Link {iface} on {_place(seen[0])} went down {len(downs)} time{'s' if len(downs) != 1 else ''} and "
                f"came up {ups} time{'s' if ups != 1 else ''} {_span(seen)} ({flap}an observation, not a failure: it "
                f"matters if the job's traffic used {iface} then).",
                [e.evidence() for e in seen[:8]],
            )
        )
    return out


def _pcie_observations(events: list[Event]) -> list[tuple[str, list[Evidence]]]:
    """One per host with corrected PCIe errors: how many, from which devices, when."""
    out: list[tuple[str, list[Evidence]]] = []
    pcie: dict[str | None, list[Event]] = defaultdict(list)
    for e in events:
        if e.kind == PCIE_CORRECTED_KIND:
            pcie[e.host or e.file].append(e)
    for lines in pcie.values():
        seen = _in_order(lines)
        devices = sorted({str(e.values["pci"]) for e in seen if e.values.get("pci")})
        on = f" (from {', '.join(devices[:4])})" if devices else ""
        out.append(
            (
                f"{len(seen)} corrected PCIe error{'s' if len(seen) != 1 else ''} on {_place(seen[0])}{on} "
                f"{_span(seen)} (an observation, not a failure: the hardware corrected "
                f"{'them' if len(seen) != 1 else 'it'}; many in a short time point at a marginal link or card).",
                [e.evidence() for e in seen[:8]],
            )
        )
    return out


def _clock_step_observations(events: list[Event]) -> list[tuple[str, list[Evidence]]]:
    """One per clock step: the host's times on either side of it are off by the step."""
    return [
        (
            f"The clock of {_place(e)} was stepped by {e.values.get('step_s')} s at {_when(e)}: on that "
            "host, the time between a stamp before it and a stamp after it reads off by that step.",
            [e.evidence()],
        )
        for e in events
        if e.kind == CLOCK_STEP_KIND
    ]
