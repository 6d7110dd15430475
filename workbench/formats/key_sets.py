"""Key-set versions as data: which JSON keys each version of a tool's output carries.

An importer lists the key sets it reads (``Importer.key_sets``); its sniffer takes a file
when any of them is there, and when none is, :func:`closest` says how near the file came
("sglang-bench: has mean_e2e_latency_ms, lacks mean_ttft_ms"), so that an unknown format
names what was recognised and what was missing. Keys are looked for as ``"key"`` in the
probe's head (the first 64 KiB): cheap, and the same test the sniffers always made.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeySet:
    """One version's keys. ``all_of`` must all be present and, when given, at least one
    of ``any_of``. ``sample`` is the test file holding it (under ``tests/data``) and
    ``origin`` says whether that file is real or derived from the writer's source."""

    name: str
    all_of: tuple[str, ...]
    any_of: tuple[str, ...] = ()
    sample: str = ""
    origin: str = ""

    def found(self, head: str) -> tuple[list[str], list[str]]:
        """The keys of this set present in ``head`` and those missing (``any_of`` counts
        as one key, missing as ``a|b``)."""
        has = [k for k in self.all_of if f'"{k}"' in head]
        lacks = [k for k in self.all_of if f'"{k}"' not in head]
        if self.any_of:
            alt = [k for k in self.any_of if f'"{k}"' in head]
            (has.append(alt[0]) if alt else lacks.append("|".join(self.any_of)))
        return has, lacks

    def matches(self, head: str) -> bool:
        return not self.found(head)[1]


@dataclass(frozen=True)
class NearMiss:
    """How close an importer came to taking a file, and why it declined."""

    importer: str
    score: float  # 0..1: the share of a key set's keys present (or the importer's own measure)
    reason: str
    hint: str = ""  # the command or option that would help, when there is one

    def text(self) -> str:
        return f"{self.importer}: {self.reason}" + (f"; {self.hint}" if self.hint else "")


def matching(key_sets: tuple[KeySet, ...], head: str) -> KeySet | None:
    return next((ks for ks in key_sets if ks.matches(head)), None)


def closest(importer: str, key_sets: tuple[KeySet, ...], head: str) -> NearMiss | None:
    """The key set ``head`` comes nearest to (at least one key present), as a near miss."""
    best: NearMiss | None = None
    for ks in key_sets:
        has, lacks = ks.found(head)
        if not has or not lacks:
            continue
        score = len(has) / (len(has) + len(lacks))
        if best is None or score > best.score:
            reason = f"has {', '.join(has)}, lacks {', '.join(lacks)} ({ks.name})"
            best = NearMiss(importer, score, reason)
    return best
