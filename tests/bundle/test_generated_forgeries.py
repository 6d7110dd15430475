"""The forgery suite, generated: every leaf of the results document of each demo bundle and of a
bundle holding a bisection, a rerun execution and an action (``rich.py``) is changed (a value of
its kind, null, removed, a value of another type, its list entry duplicated), and
``--recompute`` must fail naming that place. Nothing is listed: a field added to the results is
forged the day it is written.

The expensive part of ``--recompute`` (runs rebuilt, every comparison and rerun made again:
``rederive.rebuild``) reads nothing the results state, so it is made once per bundle (a test
below holds that) and each forgery goes through the rest as ``wb evidence verify`` does: the
typed reader, then ``rederive.judge``. A few forgeries per bundle are re-sealed and run through
``verify_bundle`` whole. In CI every ``STRIDE``-th leaf is forged (each with the next kind in
turn, so every kind meets every part); ``WB_FORGERY_STRIDE=1`` forges them all, and
``WB_FORGERY_EVERY_KIND=1`` each with every kind that applies (the closing note of issue 42
gives the counts)."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator

import pytest

from tests.bundle.conftest import rerun_engines
from workbench.bundle.export import reseal_digests
from workbench.bundle.rederive import judge, rebuild
from workbench.bundle.schema import Problem, typed_or_problem
from workbench.bundle.verify import verify_bundle

STRIDE = int(os.environ.get("WB_FORGERY_STRIDE", "4"))
EVERY_KIND = os.environ.get("WB_FORGERY_EVERY_KIND") == "1"  # each forged leaf gets every kind that applies
FULL_VERIFY_EVERY = 150  # of the forgeries made: re-sealed and verified whole
KINDS = ("value", "null", "removed", "type", "duplicated")
BUNDLES = ("inference", "training", "fleet", "rich")

Path = tuple[str | int, ...]


def leaves(node: object, path: Path = ()) -> Iterator[Path]:
    """Every leaf (a value that is not an object or a list, or an empty one) under ``node``."""
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list) and node:
        for i, value in enumerate(node):
            yield from leaves(value, (*path, i))
    else:
        yield path


def shown(path: Path) -> str:
    """``("comparisons", 0, "ref")`` -> ``results.comparisons[0].ref`` (how verify names it)."""
    out = "results"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 + abs(value)
    if isinstance(value, str):
        return value + "x" if value else "x"
    if value is None:
        return 1
    return [0] if isinstance(value, list) else {"x": 1}


def _other_type(value: object) -> object:
    if isinstance(value, bool):
        return "true"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 12345
    return "null" if value is None else 7


def forge(results: dict, path: Path, kind: str) -> tuple[Callable[[], None], Path] | None:
    """Apply forgery ``kind`` at ``path`` in place: the undo and the place forged (a duplicated
    leaf: the list entry that holds it); ``None`` when it does not apply (null of a null, a
    duplicate where no list holds the leaf)."""
    *parents, last = path
    node: object = results
    for key in parents:
        node = node[key]  # type: ignore[index]
    holder: dict | list = node  # type: ignore[assignment]
    old = holder[last]  # type: ignore[index]
    if kind in ("value", "null", "type"):
        new = {"value": _changed, "null": lambda v: None, "type": _other_type}[kind](old)
        if new is None and old is None:
            return None
        holder[last] = new  # type: ignore[index]
        return (lambda: holder.__setitem__(last, old)), path  # type: ignore[index]
    if kind == "removed":
        if isinstance(holder, dict):
            del holder[last]  # type: ignore[arg-type]
            return (lambda: holder.__setitem__(last, old)), path  # type: ignore[index]
        holder.pop(last)  # type: ignore[arg-type]
        return (lambda: holder.insert(last, old)), path  # type: ignore[arg-type]
    # duplicated: the entry of the nearest list that holds the leaf
    for depth in range(len(path) - 1, -1, -1):
        container = results
        for key in path[:depth]:
            container = container[key]
        if isinstance(container, list):
            index = path[depth]
            container.insert(index, copy.deepcopy(container[index]))  # type: ignore[arg-type]
            return (lambda held=container, at=index: held.pop(at)), path[: depth + 1]  # type: ignore[misc]
    return None


def named(parts: list[str], want: str) -> bool:
    """A failed part names the forged place: the place itself, a place inside it, or the record
    or list that holds it (never just ``results``)."""
    for part in parts:
        if part == want or part.startswith((want + ".", want + "[")):
            return True
        if want.startswith((part + ".", part + "[")) and part.count(".") + part.count("[") >= 1:
            return True
    return False


@pytest.fixture(scope="module")
def bundles(demo_bundles, rich_bundle) -> dict[str, dict]:
    return {**demo_bundles, "rich": rich_bundle[1]}


def test_the_rebuild_reads_nothing_the_results_state(bundles):
    """What the rebuild makes is the same with the results wiped: the results are outputs only."""
    doc = bundles["rich"]
    wiped = {**doc, "results": {"digest": doc["results"]["digest"], "content": {}}}
    honest, blind = rebuild(doc, **rerun_engines()).results, rebuild(wiped, **rerun_engines()).results
    assert honest.results == blind.results and honest.reruns == blind.reruns  # type: ignore[union-attr]
    assert honest.rerun_records == blind.rerun_records  # type: ignore[union-attr]


@pytest.mark.parametrize("name", BUNDLES)
def test_every_forged_leaf_of_the_results_fails_recompute_with_its_path(bundles, name):
    doc = bundles[name]
    made = rebuild(doc, **rerun_engines())
    assert all(c.ok for c in judge(doc, made)), "the honest bundle rebuilds"
    results = doc["results"]["content"]
    paths = list(leaves(results))
    forged = missed = 0
    kinds_seen: set[str] = set()
    for n, path in enumerate(paths):
        if n % STRIDE:
            continue
        turns = [KINDS[(n // STRIDE + turn) % len(KINDS)] for turn in range(len(KINDS))]
        made_one = False
        for kind in turns:
            done = forge(results, path, kind)
            if done is None:
                continue
            undo, place = done
            try:
                want = shown(place)
                found = typed_or_problem(doc)  # where the bundle first differs from the shape wb writes
                problem = found if isinstance(found, Problem) else None
                failed = [problem.where] if problem else [c.part for c in judge(doc, made) if not c.ok]
                if forged % FULL_VERIFY_EVERY == 0:  # re-sealed, through verify_bundle whole
                    sealed = reseal_digests(copy.deepcopy(doc))
                    assert verify_bundle(sealed).ok is (problem is None)
                    report = verify_bundle(sealed, recompute=True, **rerun_engines())
                    assert not report.ok and named(report.mismatched, want), (kind, want, report.mismatched[:5])
            finally:
                undo()
            forged += 1
            kinds_seen.add(kind)
            made_one = True
            if not named(failed, want):
                missed += 1
                pytest.fail(f"{kind} forgery at {want} was not named: {failed[:5]}")
            if not EVERY_KIND:
                break
        assert made_one
    assert missed == 0 and kinds_seen == set(KINDS)
    print(f"{name}: {len(paths)} leaves in the results, {forged} forgeries (stride {STRIDE}, every kind: {EVERY_KIND})")
