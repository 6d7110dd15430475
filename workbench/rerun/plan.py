"""Rerun plans: what to run, on what, how often, in which order.

A plan is a frozen record (``msgspec.Struct``) with a canonical JSON form; its SHA-256
(over the RFC 8785 form) is its identity. Plans come from ``wb rerun plan`` options or a TOML file (relative
paths in a file are relative to the file). Every artifact is pinned by digest when the
plan is made; a stated digest that does not match the file is refused right away.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

import msgspec
import rfc8785

from lenses import builtin_lens
from lenses.base import GUARDRAIL_RULES, GuardrailSpec
from store.records import LENSES
from workbench.errors import BadInput, UsageError
from workbench.inputs import open_regular, read_regular
from workbench.limits import MAX_ROUNDS, MAX_ROWS, MAX_SEED, MAX_TIMEOUT_S, MAX_WARMUP_RUNS
from workbench.vocabulary import JSONDoc, NonFinite, Record

MAX_PLAN_BYTES = 1 << 20  # a plan file is a page of TOML

ARMS = ("A", "B", "A'")  # baseline, candidate, baseline again (the A/A control)
ARM_NAMES = {"A": "baseline", "B": "candidate", "A'": "baseline (control)"}
ORDERS = ("random", "abba")
STATISTICS = ("mean", "median", "p95")  # min is a diagnostic, never the effect
ARTIFACT_ROLES = ("executable", "library", "input", "model", "source", "other")
DEFAULT_ROUNDS = 10
MIN_ROUNDS = 3  # a CI exists from 2, but is useless; below 3 is refused
WARN_ROUNDS = 5
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_METRIC = {"training": "step_ms", "inference": "ttft_ms"}
DEFAULT_STATISTIC = {"training": "mean", "inference": "p95"}
STOPPINGS = ("fixed", "sequential")  # sequential: look after every round from 3, stop once decided
SPENDINGS = ("obrien-fleming", "pocock")


class PlanRecord(Record, frozen=True):
    """A plan's part: its JSON is its fields, numbers as they are (the digest's RFC 8785 form refuses nan
    and infinity, as it always has; nothing here writes them as null)."""

    json_nonfinite: ClassVar[NonFinite] = "keep"


class Command(PlanRecord, frozen=True):
    """One arm's command: argv (never run through a shell), working directory, extra env."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: dict[str, str] = {}

    def __post_init__(self) -> None:
        # Sorted, so that the stored form (and so the digest) does not depend on the order a file gave.
        msgspec.structs.force_setattr(self, "env", dict(sorted(self.env.items())))


class Artifact(PlanRecord, frozen=True):
    """A file the experiment depends on, pinned by SHA-256 when the plan was made."""

    path: str
    sha256: str
    size: int
    role: str = "input"


class Guardrail(PlanRecord, frozen=True, kw_only=True):
    """A metric the candidate must not worsen, in the lens vocabulary (``lenses.base``):
    ``rule`` is max, min, max_increase, max_increase_pct, within or within_pct, with
    ``limit``. ``metric`` is a lens guardrail metric, a quality key or a sample column.
    In JSON the name comes first (the metric when it has none)."""

    name: str = ""  # first: the stored form's order; one not given is the metric (__post_init__)
    metric: str
    rule: str
    limit: float
    source: str = "plan"  # "plan" or "lens:<name>"

    def __post_init__(self) -> None:
        if not self.name:
            msgspec.structs.force_setattr(self, "name", self.metric)


def lens_guardrails(lens: str) -> tuple[Guardrail, ...]:
    """The lens's own guardrails, copied into the plan so the plan says what was checked."""
    try:
        specs = builtin_lens(lens).guardrails
    except KeyError:
        return ()
    return tuple(
        Guardrail(name=g.name, metric=g.metric, rule=g.rule, limit=float(g.limit), source=f"lens:{lens}") for g in specs
    )


def with_frame_guardrails(plan: "Plan", investigation: int, specs: "tuple[GuardrailSpec, ...]") -> "Plan":
    """``plan`` carrying an investigation's frame guardrails (``investigations.frame.frame_guardrails``),
    source ``frame:ID``; a frame guardrail replaces a plan or lens one of the same name.
    Judged at Verify like every plan guardrail; one that cannot be judged withholds IMPROVEMENT."""
    frame = [
        Guardrail(name=g.name, metric=g.metric, rule=g.rule, limit=float(g.limit), source=f"frame:{investigation}")
        for g in specs
    ]
    names = {g.name for g in frame}
    kept = tuple(g for g in plan.guardrails if g.name not in names)
    return msgspec.structs.replace(plan, guardrails=kept + tuple(frame))


class Warmup(PlanRecord, frozen=True):
    """Warm-up policy: untimed runs of each arm before round 1, and steps dropped per run.

    ``steps``: ``"capture"`` trusts the capture (its samples already exclude warm-up,
    as ``window.warmup_excluded`` says), an integer drops that many leading samples,
    ``"auto"`` drops max(3, ceil(0.1 n)) (an engineering default, not from a pilot).
    """

    runs: int = 0
    steps: int | str = "capture"

    def steps_to_drop(self, n: int) -> int:
        if self.steps == "capture":
            return 0
        if self.steps == "auto":
            return min(n, max(3, -(-n // 10)))
        return min(n, int(self.steps))


class Environment(PlanRecord, frozen=True, kw_only=True, omit_defaults=True):
    """The machine a plan is for: preflight's comparable fields (``environment_of``), ``unknown``
    where not known. A plan made before preflight recorded one has none (``{}``)."""

    driver_version: str | None = None
    cuda_driver_version: str | None = None
    cuda_toolkit: str | None = None
    device_count: int | str | None = None  # "unknown" when NVML did not answer
    devices: tuple[dict[str, str], ...] | None = None  # per device: identity field -> value as shown

    @property
    def recorded(self) -> bool:
        return self != Environment()

    @classmethod
    def from_json(cls, doc: Mapping[str, object] | None, *, nonfinite: NonFinite | None = None) -> Self:
        """A stored environment, or none (``{}``: a plan made before preflight recorded one)."""
        return super().from_json(doc or {}, nonfinite=nonfinite)


class Plan(PlanRecord, frozen=True, kw_only=True):
    """A rerun plan (``to_json()`` is the stored form, and what its digest is taken over)."""

    # The fields in the stored form's order (its keys are the fields).
    name: str
    description: str = ""
    lens: str
    baseline: Command
    candidate: Command
    # A′ runs the baseline command unless an independent build of it is given.
    control: Command | None = None
    artifacts: tuple[Artifact, ...] = ()
    rounds: int = DEFAULT_ROUNDS
    order: str = "random"
    seed: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S
    metric: str = "step_ms"
    statistic: str = "mean"
    higher_is_better: bool = False
    delta: float = 0.02
    warmup: Warmup = Warmup()
    guardrails: tuple[Guardrail, ...] = ()
    # The machine the plan was made for (see preflight).
    environment: Environment = Environment()
    # "user" (options or the user's own file) or "bundle:<sha256>" (needs confirmation).
    origin: str = "user"
    # "fixed": every round runs, one analysis at the end. "sequential": ``rounds`` is the
    # maximum; a look after each round stops as soon as the data decide (stats.sequential).
    stopping: str = "fixed"
    spending: str = "obrien-fleming"
    # The change under test, as ``wb compare --change``: dimension -> (FROM, TO), or ()
    # when declared without values; and accepted must-match differences: dimension -> why.
    # The comparison refuses any other must-match difference between A and B.
    change: dict[str, tuple[str, ...]] = {}
    accept: dict[str, str] = {}

    @property
    def changes(self) -> dict[str, tuple[str | None, str | None] | None]:
        """``change`` in the compare layer's form."""
        return {k: ((v[0] or None, v[1] or None) if v else None) for k, v in self.change.items()}

    def command(self, arm: str) -> Command:
        if arm == "B":
            return self.candidate
        if arm == "A'" and self.control is not None:
            return self.control
        return self.baseline

    def __post_init__(self) -> None:
        # Sorted, so that the stored form (and so the digest) does not depend on the order a file gave.
        msgspec.structs.force_setattr(self, "change", dict(sorted(self.change.items())))
        msgspec.structs.force_setattr(self, "accept", dict(sorted(self.accept.items())))

    def to_json(self, *, nonfinite: NonFinite | None = None) -> dict[str, object]:
        """The stored form: ``from_json`` decodes it (keys added since, like ``stopping``, take their defaults;
        ``msgspec.ValidationError`` names the place when the document has another shape). As the store's
        ``save_plan`` takes it; ``digest`` reads the same document as JSON."""
        return dict(self._document(nonfinite))

    def _document(self, nonfinite: NonFinite | None = None) -> JSONDoc:
        doc: JSONDoc = super().to_json(nonfinite=nonfinite)
        # Only sequential plans carry these, so a fixed plan keeps the digest it always had.
        if self.stopping == "fixed":
            del doc["stopping"], doc["spending"]
        # Likewise: a plan that declares no change (or accepts no difference) keeps its digest.
        for key in ("change", "accept"):
            if not doc[key]:
                del doc[key]
        return doc

    def digest(self) -> str:
        """SHA-256 of the plan's RFC 8785 canonical JSON: the plan's identity."""
        return hashlib.sha256(rfc8785.dumps(self._document())).hexdigest()

    def with_environment(self, environment: Environment) -> "Plan":
        return msgspec.structs.replace(self, environment=environment)

    def warnings(self) -> list[str]:
        out = []
        if self.rounds < WARN_ROUNDS:
            out.append(
                f"{self.rounds} rounds is few: intervals will be wide (at least {WARN_ROUNDS} recommended, "
                f"{DEFAULT_ROUNDS} by default)"
            )
        if not self.artifacts:
            out.append(
                "no artifacts pinned: preflight cannot tell whether the binaries or inputs changed (add --artifact)"
            )
        return out


# -- schedule -------------------------------------------------------------------------


def schedule(plan: Plan) -> list[tuple[int, str]]:
    """The (round, arm) slots in execution order; rounds count from 1.

    ``random`` (RMIT): each round runs A, B and A′ in a fresh order drawn from
    PCG64(seed), so ordering effects and drift add variance, not bias. ``abba``
    alternates A B A′ and A′ B A, which cancels linear drift over each pair of rounds.
    """
    import numpy as np  # numpy: kept off the import of plan definitions (wb rerun plan --list)

    slots: list[tuple[int, str]] = []
    rng = np.random.Generator(np.random.PCG64(plan.seed))
    for r in range(1, plan.rounds + 1):
        if plan.order == "abba":
            arms = list(ARMS) if r % 2 else list(reversed(ARMS))
        else:
            arms = [ARMS[i] for i in rng.permutation(len(ARMS))]
        slots.extend((r, arm) for arm in arms)
    return slots


def warmup_slots(plan: Plan) -> list[tuple[int, str]]:
    """Untimed warm-up runs (round 0): each distinct command ``warmup.runs`` times."""
    arms = ["A", "B"] + (["A'"] if plan.control is not None else [])
    return [(0, arm) for _ in range(plan.warmup.runs) for arm in arms]


# -- building and validating ---------------------------------------------------------


def sha256_of(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open_regular(Path(path)) as f:  # a FIFO or /dev/zero as an artifact would never end
        while block := f.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def pin_artifact(
    path: str | Path,
    role: str = "input",
    expected: str | None = None,
    *,
    base: Path | None = None,
    where: str | None = None,
) -> Artifact:
    """Digest ``path`` now; refuse a missing file or one that differs from ``expected``."""
    p = Path(os.path.expanduser(str(path)))
    if not p.is_absolute():
        p = (base or Path.cwd()) / p
    p = p.resolve()
    if role not in ARTIFACT_ROLES:
        raise UsageError(f"artifact {path}: role must be one of {', '.join(ARTIFACT_ROLES)}, not {role!r}")
    if not p.is_file():
        raise BadInput(where, f"artifact {p} does not exist (or is not a file)")
    try:
        sha, size = sha256_of(p)
    except OSError as exc:
        raise BadInput(where, f"artifact {p} cannot be read ({exc.strerror or exc})") from None
    if expected and expected.lower().removeprefix("sha256:") != sha:
        raise BadInput(where, f"artifact {p} has SHA-256 {sha}, not the {expected} the plan states")
    return Artifact(str(p), sha, size, role)


def _command(data: Any, what: str, base: Path | None, where: str | None) -> Command:
    if isinstance(data, (list, tuple)):
        data = {"argv": list(data)}
    if not isinstance(data, dict):
        raise BadInput(where, f"{what}: expected a table with argv, cwd, env")
    unknown = set(data) - {"argv", "cwd", "env"}
    if unknown:
        raise BadInput(where, f"{what}: unknown key(s) {', '.join(sorted(unknown))}")
    argv = data.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise BadInput(where, f"{what}.argv: expected a non-empty list of non-empty strings")
    cwd = data.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise BadInput(where, f"{what}.cwd: expected a string")
        c = Path(os.path.expanduser(cwd))
        cwd = str((c if c.is_absolute() else (base or Path.cwd()) / c).resolve())
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise BadInput(where, f"{what}.env: expected a table of strings")
    if "WB_CAPTURE_OUT" in env:
        raise BadInput(where, f"{what}.env: WB_CAPTURE_OUT is set by the harness for each run")
    return Command(tuple(argv), cwd, dict(env))


class PlanDocument(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A plan as given (TOML or options), before its checks: each key with the default a missing one takes.
    Values stay as given (``Any``): the checks below name the field and the rule in their own words."""

    name: Any = None
    description: Any = ""
    lens: Any = None
    baseline: Any = None
    candidate: Any = None
    control: Any = None
    artifacts: Any = None
    rounds: Any = DEFAULT_ROUNDS
    order: Any = "random"
    seed: Any = None
    timeout_s: Any = DEFAULT_TIMEOUT_S
    metric: Any = None
    statistic: Any = None
    higher_is_better: Any = False
    delta: Any = 0.02
    warmup: Any = None
    guardrails: Any = None
    stopping: Any = "fixed"
    spending: Any = "obrien-fleming"
    change: Any = None
    accept: Any = None


PLAN_KEYS = frozenset(PlanDocument.__struct_fields__)


def _document(data: Mapping[str, Any], where: str | None) -> PlanDocument:
    if not isinstance(data, Mapping):
        raise BadInput(where, "a plan must be a table")
    unknown = set(data) - PLAN_KEYS
    if unknown:
        raise BadInput(
            where, f"unknown plan key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(PLAN_KEYS))})"
        )
    for key in ("baseline", "candidate"):
        if key not in data:
            raise BadInput(where, f"{key}: missing (a table with argv, and optionally cwd and env)")
    return PlanDocument(**data)


def _one_of(value: Any, allowed: tuple[str, ...], what: str, where: str | None) -> str:
    if value not in allowed:
        raise BadInput(where, f"{what}: expected one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def _name(doc: PlanDocument, where: str | None) -> str:
    name = doc.name
    if not isinstance(name, str) or not name.strip() or name.strip().isdigit():
        raise BadInput(where, "name: a plan needs a name (not just digits: those are plan ids)")
    return name.strip()


def _rounds(doc: PlanDocument, where: str | None) -> int:
    rounds = _int(doc.rounds, "rounds", where)
    if rounds < MIN_ROUNDS:
        raise UsageError(
            f"rounds: {rounds} is too few to say anything; at least {MIN_ROUNDS} (default {DEFAULT_ROUNDS})"
        )
    return check_rounds(rounds, "rounds", where)


def _seed(doc: PlanDocument, where: str | None) -> int:
    seed = secrets.randbits(32) if doc.seed is None else _int(doc.seed, "seed", where)
    if not 0 <= seed <= MAX_SEED:
        raise BadInput(where, f"seed: {_shown(seed)} is outside 0 .. 2^53-1 (see docs/limits.md)")
    return seed


def _metric(doc: PlanDocument, lens: str, where: str | None) -> str:
    metric = doc.metric or DEFAULT_METRIC.get(lens)
    if not metric or not isinstance(metric, str):
        raise BadInput(where, f"metric: the {lens} lens has no default rerun metric; name a sample column")
    return metric


def _delta(doc: PlanDocument, where: str | None) -> float:
    delta = _num(doc.delta, "delta", where)
    if not 0 < delta < 1:
        raise BadInput(where, "delta: the equivalence band, a fraction between 0 and 1 (0.02 = 2 %)")
    return delta


def _warmup(doc: PlanDocument, where: str | None) -> Warmup:
    warm = doc.warmup or {}
    if not isinstance(warm, dict) or set(warm) - {"runs", "steps"}:
        raise BadInput(where, "warmup: expected a table with runs and steps")
    steps = warm.get("steps", "capture")
    if not (steps in ("capture", "auto") or (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0)):
        raise BadInput(where, 'warmup.steps: "capture", "auto" or a number of leading samples to drop')
    if isinstance(steps, int) and steps > MAX_ROWS:  # past 2^53 the plan's canonical JSON has no such number
        raise BadInput(
            where,
            f"warmup.steps: {_shown(steps)} is more than {MAX_ROWS:,}, the most samples a capture holds "
            "(see docs/limits.md)",
        )
    warmup = Warmup(_int(warm.get("runs", 0), "warmup.runs", where), steps)
    if not 0 <= warmup.runs <= MAX_WARMUP_RUNS:
        raise BadInput(
            where, f"warmup.runs: {_shown(warmup.runs)} is outside 0 .. {MAX_WARMUP_RUNS:,} (see docs/limits.md)"
        )
    return warmup


def _artifacts(doc: PlanDocument, base: Path | None, where: str | None) -> tuple[Artifact, ...]:
    artifacts = []
    for i, item in enumerate(doc.artifacts or []):
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, dict) or "path" not in item or set(item) - {"path", "role", "sha256"}:
            raise BadInput(where, f"artifacts[{i}]: expected a table with path, and optionally role and sha256")
        artifacts.append(
            pin_artifact(item["path"], item.get("role", "input"), item.get("sha256"), base=base, where=where)
        )
    paths = [a.path for a in artifacts]
    if len(set(paths)) != len(paths):
        raise BadInput(where, "artifacts: the same file is listed twice")
    return tuple(artifacts)


def _guardrail(g: Any, what: str, where: str | None) -> Guardrail:
    if (
        not isinstance(g, dict)
        or not {"metric", "rule", "limit"} <= set(g)
        or set(g) - {"metric", "rule", "limit", "name"}
    ):
        raise BadInput(where, f"{what}: expected a table with metric, rule and limit (and optionally name)")
    return Guardrail(
        name=str(g.get("name") or g["metric"]),
        metric=str(g["metric"]),
        rule=_one_of(g["rule"], GUARDRAIL_RULES, f"{what}.rule", where),
        limit=_num(g["limit"], f"{what}.limit", where),
    )


def _guardrails(doc: PlanDocument, lens: str, where: str | None) -> tuple[Guardrail, ...]:
    guardrails = list(lens_guardrails(lens))
    for i, g in enumerate(doc.guardrails or []):
        guard = _guardrail(g, f"guardrails[{i}]", where)
        # A plan guardrail of the same name replaces the lens's.
        guardrails = [x for x in guardrails if x.name != guard.name] + [guard]
    return tuple(guardrails)


def _change_and_accept(
    doc: PlanDocument, lens: str, where: str | None
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    change = doc.change or {}
    if not isinstance(change, Mapping) or not all(
        isinstance(v, list | tuple) and len(v) in (0, 2) and all(isinstance(x, str) for x in v) for v in change.values()
    ):
        raise BadInput(where, 'change: a table of dimension = ["FROM", "TO"] (or [] to declare it without values)')
    accept = doc.accept or {}
    if not isinstance(accept, Mapping) or not all(isinstance(v, str) and v.strip() for v in accept.values()):
        raise BadInput(where, 'accept: a table of dimension = "why it may differ" (a reason is required)')
    known = {d.name for d in builtin_lens(lens).dimensions}
    for key, names in (("change", change), ("accept", accept)):
        for dim in names:
            if dim not in known:
                raise BadInput(
                    where, f"{key}.{dim}: no such dimension in the {lens} lens (known: {', '.join(sorted(known))})"
                )
    return {str(k): tuple(v) for k, v in change.items()}, {str(k): str(v).strip() for k, v in accept.items()}


def build_plan(data: Mapping[str, Any], *, base: Path | None = None, where: str | None = None) -> Plan:
    """Validate plan data (from TOML or options) and pin its artifacts by digest: the document's keys, then
    each field's check, in the order a reader of the plan meets them.

    ``base`` resolves relative paths; ``where`` names the source in errors.
    """
    doc = _document(data, where)
    name = _name(doc, where)
    lens = doc.lens
    if lens not in LENSES:
        raise BadInput(where, f"lens: expected one of {', '.join(LENSES)}, got {lens!r}")
    baseline = _command(doc.baseline, "baseline", base, where)
    candidate = _command(doc.candidate, "candidate", base, where)
    control = _command(doc.control, "control", base, where) if doc.control else None
    rounds = _rounds(doc, where)
    stopping = _one_of(doc.stopping, STOPPINGS, "stopping", where)
    spending = _one_of(doc.spending, SPENDINGS, "spending", where)
    order = _one_of(doc.order, ORDERS, "order", where)
    seed = _seed(doc, where)
    timeout_s = check_timeout(_num(doc.timeout_s, "timeout_s", where), "timeout_s", where)
    metric = _metric(doc, lens, where)
    statistic = _one_of(doc.statistic or DEFAULT_STATISTIC.get(lens, "mean"), STATISTICS, "statistic", where)
    delta = _delta(doc, where)
    warmup = _warmup(doc, where)
    artifacts = _artifacts(doc, base, where)
    guardrails = _guardrails(doc, lens, where)
    change, accept = _change_and_accept(doc, lens, where)
    return Plan(
        name=name,
        description=str(doc.description),
        lens=lens,
        baseline=baseline,
        candidate=candidate,
        control=control,
        artifacts=artifacts,
        rounds=rounds,
        order=order,
        seed=seed,
        timeout_s=timeout_s,
        metric=metric,
        statistic=statistic,
        higher_is_better=bool(doc.higher_is_better),
        delta=delta,
        warmup=warmup,
        guardrails=guardrails,
        stopping=stopping,
        spending=spending,
        change=change,
        accept=accept,
    )


def load_plan_file(path: str | Path, overrides: Mapping[str, object] | None = None) -> Plan:
    """Read a TOML plan file; relative paths in it are relative to the file."""
    p = Path(path)
    raw = read_regular(p, MAX_PLAN_BYTES, "a plan file")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(p, f"not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise BadInput(p, "not valid TOML (not UTF-8 text)") from None
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return build_plan(data, base=p.resolve().parent, where=str(p))


def check_rounds(rounds: int, what: str, where: str | None = None) -> int:
    """Rounds within :data:`workbench.limits.MAX_ROUNDS` (each round is three runs)."""
    if rounds > MAX_ROUNDS:
        raise BadInput(where, f"{what}: {_shown(rounds)} is more than {MAX_ROUNDS:,} rounds (see docs/limits.md)")
    return rounds


def check_timeout(seconds: float, what: str, where: str | None = None) -> float:
    """A per-run timeout: finite, positive, at most :data:`workbench.limits.MAX_TIMEOUT_S`."""
    if not 0 < seconds <= MAX_TIMEOUT_S:  # also refuses inf (1e400) and nan
        raise BadInput(
            where,
            f"{what}: {seconds:g} s is outside (0, {MAX_TIMEOUT_S:g}] seconds: positive, at most a week (see "
            f"docs/limits.md)",
        )
    return seconds


def _shown(n: int) -> str:
    text = str(n) if n.bit_length() < 200 else f"a number of {len(str(n))} digits"
    return text if len(text) <= 40 else text[:37] + "..."


def _int(value: Any, what: str, where: str | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(where, f"{what}: expected an integer, got {value!r}")
    return value


def _num(value: Any, what: str, where: str | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise BadInput(where, f"{what}: expected a number, got {value!r}")
    return float(value)
