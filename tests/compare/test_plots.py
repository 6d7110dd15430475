"""plotext plots (workbench/compare/plots.py): the points land where the data puts them
(read back from the drawn grid and its ticks, never byte-compared), no SGR code, the
width asked for; and ``wb compare --plot`` / ``wb inspect --plot`` on real captures."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from factories import training_run
from lenses import builtin_lens
from workbench.compare import plots
from workbench.compare.plots import Series, draw
from workbench.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
SWEEPS = REPO / "tests" / "data" / "inference" / "real" / "inference-perf-kubecon-na-2025"
DEMO = REPO / "captures" / "demo"


def grid(text: str) -> list[str]:
    """The plot area's rows, top first (between the frame's corners, ticks cut off)."""
    lines = text.split("\n")
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    left = lines[top].index("┌") + 1
    return [line[left : left + len(lines[top]) - left - 1] for line in lines[top + 1 : bottom]]


def cells(text: str, mark: str) -> list[tuple[int, int]]:
    """(row from the bottom, column) of each ``mark`` in the plot area."""
    rows = grid(text)
    return [(len(rows) - 1 - r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == mark]


def y_ticks(text: str) -> list[float]:
    return [float(m.group(1)) for line in text.split("\n") if (m := re.match(r"^\s*([0-9.]+)┤", line))]


def test_points_land_where_the_data_puts_them() -> None:
    base = Series("baseline", "o", ((1.0, 10.0), (2.0, 20.0), (3.0, 30.0)), ".")
    cand = Series("candidate", "x", ((1.0, 12.0), (2.0, 18.0), (3.0, 14.0)), "'")
    text = draw([base, cand], x_label="achieved req/s", y_label="ttft (ms)", width=60, height=14)
    ticks = y_ticks(text)
    assert max(ticks) == pytest.approx(30.0) and min(ticks) == pytest.approx(10.0)  # the y range is the data's
    o, x = sorted(cells(text, "o"), key=lambda rc: rc[1]), sorted(cells(text, "x"), key=lambda rc: rc[1])
    assert len(o) == 3 and len(x) == 3  # one mark a point, the line between them in its own glyph
    assert o[0][0] < o[1][0] < o[2][0]  # baseline rises with load
    assert x[0][0] < x[2][0] < x[1][0]  # candidate: 12, then 18, then 14
    assert abs(o[0][1] - x[0][1]) <= 1 and abs(o[2][1] - x[2][1]) <= 1  # same x, same column
    assert o[2][0] == len(grid(text)) - 1 and o[0][0] == 0  # the extremes on the frame's top and bottom rows
    assert "." in "".join(grid(text)) and "'" in "".join(grid(text))
    assert "o baseline (. joins its points); x candidate (' joins its" in text
    assert "achieved req/s" in text and "ttft (ms)" in text and "(log)" not in text


def test_wide_span_turns_log_and_unknowns_are_left_out() -> None:
    s = Series("baseline", "o", ((1.0, 10.0), (2.0, math.nan), (3.0, 5000.0), (math.inf, 3.0)))
    text = draw([s], x_label="x", y_label="p99 (ms)", width=50, height=10)
    assert "p99 (ms) (log)" in text
    assert len(cells(text, "o")) == 2  # NaN and inf are not drawn at zero nor at an edge
    assert draw([Series("b", "o", ((math.nan, 1.0),))], x_label="x", y_label="y").startswith("(no point")


@pytest.mark.parametrize("width", [50, 78, 80])
def test_width_respected_and_no_sgr(width, monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # plotext writes reset codes even in its clear theme: all stripped
    b, c = training_run("b", seed=1, ranks=4, steps=30), training_run("c", seed=2, ranks=4, steps=30)
    for text in (
        plots.inspect_plots(builtin_lens("training"), [b], [c], width=width),
        draw(
            [Series("a very long side name " * 4, "o", ((0.0, 1.0), (1.0, 2.0)))],
            x_label="x",
            y_label="y",
            width=width,
            notes=["a note " * 30],
        ),
    ):
        assert "\x1b" not in text and "\x9b" not in text
        assert max(len(line) for line in text.split("\n")) <= width


def test_strings_from_captures_are_cleaned() -> None:
    text = draw(
        [Series("\x1b[31mevil\x07 [bold]label[/]", "o", ((0.0, 1.0), (1.0, 2.0)))],
        x_label="req\x1b[2J/s",
        y_label="ttft\r",
        width=60,
    )
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "evil" in text and "[bold]label[/]" in text  # shown literally (the TUI's Report never reads markup)


def test_whole_ticks() -> None:
    assert plots.whole_ticks(0, 7) == [0, 2, 4, 6]
    assert plots.whole_ticks(0, 1023) == [0, 500, 1000]
    assert plots.whole_ticks(0.4, 4.6) == [0, 1, 2, 3, 4, 5]
    assert plots.whole_ticks(3, 4) == [3, 4]


# ----------------------------------------------------------------------------- Inspect's plots


def _slows_from(run, step0: int, extra_ms: float):
    s = run.samples
    late = s["step"] >= step0
    s["compute_ms"][late] += extra_ms
    s["step_ms"][late] += extra_ms
    return run


def test_slices_as_array_split_cuts_them() -> None:
    a = np.arange(10, dtype=float)
    b = a + 10.0
    b[0] = np.nan  # unknown: in no mean
    points = plots._binned([a, b], 3)  # slices 0-3, 4-6, 7-9
    assert [x for x, _ in points] == pytest.approx([1.5, 5.0, 8.0])
    assert [y for _, y in points] == pytest.approx(
        [(1.5 + 12.0) / 2, (5.0 + 15.0) / 2, (8.0 + 18.0) / 2]
    )  # over the runs
    assert plots._binned([np.full(4, np.nan)], 2)[0][1] != plots._binned([np.full(4, np.nan)], 2)[0][1]  # NaN: unknown
    assert plots._binned([], 5) == ()


def test_phase_over_time_shows_when_the_candidate_slows() -> None:
    lens = builtin_lens("training")
    base = [training_run("b", seed=1, steps=40, ranks=2)]
    cand = [_slows_from(training_run("c", seed=2, steps=40, ranks=2), 20, 60.0)]
    text = plots.phase_over_time(lens, base, cand, "compute", width=70, height=12)
    assert text.startswith("compute over step")
    x = cells(text, "x") + cells(text, "*")  # "*": where the sides still share a cell
    width = len(grid(text)[0])
    early = [r for r, c in x if c < width * 0.4]
    late = [r for r, c in x if c > width * 0.6]
    assert early and late and min(late) > max(early)  # the second half sits higher
    assert all(r < min(late) for r, _ in cells(text, "o"))  # the baseline stays low
    assert max(y_ticks(text)) == pytest.approx(260 + 60, abs=3)
    assert "step, in order from 0" in text and "compute (ms)" in text
    with pytest.raises(UsageError, match="--phase 'nosuch': these runs have step_time, .*compute"):
        plots.phase_over_time(lens, base, cand, "nosuch")


def test_rank_plot_shows_the_straggler() -> None:
    base = [training_run("b", seed=1, ranks=8, steps=20)]
    cand = [training_run("c", seed=2, ranks=8, steps=20)]
    cand[0].samples["step_ms"][cand[0].samples["rank"] == 5] += 40.0
    ranks, medians = plots.rank_medians(cand)
    s = cand[0].samples
    assert ranks.tolist() == list(range(8)) and medians[5] - np.median(medians) == pytest.approx(40.0, abs=1.0)
    assert medians.tolist() == pytest.approx(
        [float(np.median(s["step_ms"][s["rank"] == r])) for r in range(8)]
    )  # 20 steps: even
    text = plots.rank_step_times(base, cand, width=70, height=12)
    top = [c for r, c in cells(text, "x") if r == len(grid(text)) - 1]
    width = len(grid(text)[0])
    assert len(top) == 1 and abs(top[0] - round(5 / 7 * (width - 1))) <= 1  # rank 5, alone on the top row
    assert "candidate: slowest rank 5 at" in text and "(+40" in text
    assert len(cells(text, "o")) + len(cells(text, "*")) == 8 and "rank" in text  # "*": both sides in one cell
    lens = builtin_lens("training")
    single = [training_run("s", ranks=1, steps=20)]
    assert "Step time per rank" in plots.inspect_plots(lens, base, cand)
    assert "Step time per rank" not in plots.inspect_plots(lens, single, single)  # one rank: no rank plot


def test_sweep_curve_on_real_sweeps() -> None:
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_render import render_sweep_comparison
    from workbench.importers import expand_paths
    from workbench.importers.base import ImportOptions
    from workbench.importers.inference_perf import IMPORTER

    runs = list(IMPORTER.read(expand_paths([SWEEPS]), ImportOptions()))
    for i, run in enumerate(runs):
        run.id = i + 1
    sides: dict[str, list] = {}
    for run in runs:
        sides.setdefault(run.meta["sweep"]["label"], []).append(run)
    doc = compare_sweeps(sides["vllm"], sides["vllm+v0_engine"], accepts={"weights": "one deployment"})
    text = plots.sweep_curve(doc, width=plots.TUI_W)
    assert max(len(line) for line in text.split("\n")) <= plots.TUI_W and "\x1b" not in text
    assert "o baseline vllm" in text and "x candidate vllm+v0_engine" in text and "achieved req/s" in text
    ys = [lv.metrics["ttft_p95"] for s in (doc.baseline, doc.candidate) for lv in s.levels]
    assert "(log)" in text  # 36 ms to 5 s
    assert max(y_ticks(text)) == pytest.approx(max(ys), rel=1e-3) and min(y_ticks(text)) == pytest.approx(
        min(ys), rel=1e-3
    )
    both = len(cells(text, "*"))
    assert both >= 1 and "; * both" in text  # 1 req/s: both sweeps in one cell
    top, right = len(grid(text)) - 1, max(c for m in "ox*" for _, c in cells(text, m))
    assert any(r == top for r, _ in cells(text, "x"))  # the worst latency is the candidate's (5.4 s)
    assert any(c == right for _, c in cells(text, "o"))  # the highest achieved rate the baseline's (106.5 req/s)
    report = render_sweep_comparison(doc, text)
    assert report.count(text) == 1  # the plot fitted to the TUI's region in place of the 80-column one
    assert render_sweep_comparison(doc).count(plots.sweep_curve(doc)) == 1


# ----------------------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from tests.conftest import run_wb

    url = f"sqlite:///{tmp_path_factory.mktemp('plots') / 'wb.sqlite'}"
    out = run_wb("--store", url, "import", str(SWEEPS), str(DEMO / "training"))
    assert out.returncode == 0, out.stderr
    return url


def wb(capsys, store, *args):
    from workbench.cli import main

    try:
        main(["--store", store, *args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_compare_plot(capsys, store) -> None:
    code, plain, err = wb(capsys, store, "compare", "vllm", "--vs", "vllm+v0_engine")
    assert code == 0, err
    code, out, err = wb(capsys, store, "compare", "vllm", "--vs", "vllm+v0_engine", "--plot")
    assert code == 0, err
    curve = out[out.index("Curve") : out.index("\nLevel ")]
    assert "┌" in curve and "o baseline vllm" in curve and "achieved req/s" in curve and "\x1b" not in out
    assert out == plain  # one chart library: the curve is plotext's with or without --plot (kept for scripts)
    assert max(len(line) for line in out.split("\n")) <= 80
    for args, says in ((("--json",), "leave out --json"), ((), "name one sweep on each side")):
        runs = ("vllm",) if args else ("PyTorch 2.3.1 run 1",)
        vs = ("vllm+v0_engine",) if args else ("PyTorch 2.4.0-rc1 run 1",)
        code, out, err = wb(capsys, store, "compare", *runs, "--vs", *vs, "--plot", *args)
        if args:  # --json: the error is the JSON document
            assert code == 2 and json.loads(out)["error"]["kind"] == "usage" and says in out
        else:
            assert code == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1


TR_A = [f"PyTorch 2.3.1 run {i}" for i in range(1, 4)]
TR_B = [f"PyTorch 2.4.0-rc1 run {i}" for i in range(1, 4)]


def test_cli_inspect_plot(capsys, store) -> None:
    pair = [*TR_A, "--vs", *TR_B, "--change", "framework"]
    code, plain, err = wb(capsys, store, "inspect", *pair)
    assert code == 0, err
    code, out, err = wb(capsys, store, "inspect", *pair, "--plot", "--phase", "compute")
    assert code == 0, err
    assert out.startswith(plain.rstrip("\n"))  # the report, then the plots
    drawn = out[len(plain.rstrip("\n")) :]
    assert "Plots" in drawn and "compute over step" in drawn and "Step time per rank" in drawn
    assert "o baseline (3 runs); x candidate (3 runs)" in drawn and "o baseline (8 ranks)" in drawn
    assert "\x1b" not in out and max(len(line) for line in drawn.split("\n")) <= 80
    code, out, err = wb(capsys, store, "inspect", *pair, "--plot", "--phase", "nosuch")
    assert code == 2 and out == "" and "--phase 'nosuch'" in err  # refused before anything is printed
    code, out, err = wb(capsys, store, "inspect", *pair, "--phase", "compute")
    assert code == 2 and out == "" and "add --plot" in err
    # Through a server the plots are drawn where the runs are: tests/server/test_parity.py.


def test_plotext_is_imported_only_to_draw() -> None:
    """The CLI and the plots module load without plotext (startup stays fast); drawing loads it."""
    import subprocess
    import sys

    code = (
        "import sys, workbench.cli, workbench.cli.commands.compare, workbench.cli.commands.inspect, "
        "workbench.compare.plots as p\n"
        "before = 'plotext' in sys.modules\n"
        "p.draw([p.Series('b', 'o', ((0.0, 1.0),))], x_label='x', y_label='y')\n"
        "print(before, 'plotext' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr
