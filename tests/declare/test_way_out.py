"""A refusal prints the exact commands that resolve it, and each of them does."""

from __future__ import annotations

import shlex

from tests.declare.helpers import inference_pair, wb, wbj


VALUES = {"model": "Llama 3.1 8B", "topology": "single GPU"}


def _run_printed(capsys, store, line: str):
    words = [w.replace("VALUE", VALUES[w.partition("=")[0]]) if w.endswith("=VALUE") else w for w in shlex.split(line)]
    assert words[0] == "wb"
    return wb(capsys, *store, *words[1:])


def test_printed_declare_resolves_the_refusal(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("model", "topology"))))
    _c, out, _e = wb(capsys, *store, "compare", "1", "--vs", "2")
    assert "REFUSED" in out and "To go on, resolve each blocking dimension:" in out
    doc = wbj(capsys, *store, "compare", "1", "--vs", "2")
    ways = doc["way_out"]
    assert ways["declare"] == ["wb declare 1 2 model=VALUE topology=VALUE --why 'what makes it true'"]
    assert ways["accept"] == "wb compare 1 --vs 2 --accept model,topology --why 'why the difference does not matter'"
    assert ways["declare"][0] in out and ways["accept"] in out
    assert wbj(capsys, *store, "inspect", "1", "--vs", "2", expect=3)["way_out"]["accept"] == ways["accept"].replace(
        "compare", "inspect"
    )
    _c, text, _e = wb(capsys, *store, "inspect", "1", "--vs", "2", expect=3)
    assert ways["declare"][0] in text
    _run_printed(capsys, store, ways["declare"][0])
    assert wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]
    # pasted without quotes around a value with spaces: one line that says so
    _c, _o, err = wb(capsys, *store, "declare", "1", "model=Llama", "3.1", "8B", expect=2)
    assert "'3.1' follows 'model=Llama'" in err and "needs quotes" in err


def test_one_side_missing_is_declared_from_the_other(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path, drop=())
    wb(capsys, *store, "import", str(a))
    wb(capsys, *store, "import", str(b), "--dim", "x=1")  # keeps both distinct files
    wb(capsys, *store, "declare", "1", "--unset", "model")
    ways = wbj(capsys, *store, "compare", "1", "--vs", "2")["way_out"]
    assert ways["declare"] == [
        "wb declare 1 'model=Llama 3.1 8B' --why 'what makes it true'"
    ]  # declared there: offered
    _run_printed(capsys, store, ways["declare"][0])
    assert wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]


def test_a_measured_value_is_not_offered_for_the_other_side(tmp_path, capsys):
    """What one side's data measured is no evidence about the other side's."""
    from pathlib import Path

    import numpy as np

    from store import open_store
    from store.api import CaptureInfo
    from store.records import Dimension, RunRecord

    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    st = open_store(url)
    common = {
        "model": Dimension("m", "declared"),
        "weights": Dimension("w", "declared"),
        "topology": Dimension("t", "declared"),
        "request_mix": Dimension("512 prompt / 128 output tokens", "declared"),
    }
    recs, caps = [], []
    for i, extra in enumerate(({}, {"hardware": Dimension("1x H100", "measured")})):
        path = Path(f"/x/{i}.json")
        r = RunRecord(
            lens="inference", label=f"r{i}", sources=[path], dimensions={**common, **extra}, window={"kind": "steady"}
        )
        r.samples["ttft_ms"] = np.array([100.0, 110.0])
        recs.append(r)
        caps.append(
            CaptureInfo(path=path, sha256=str(i) * 64, size=1, format="native", importer="native", importer_version="1")
        )
    st.add_import(caps, recs)
    ways = wbj(capsys, "--store", url, "compare", "1", "--vs", "2")["way_out"]
    assert ways["declare"] == ["wb declare 1 hardware=VALUE --why 'what makes it true'"]


def test_printed_accept_resolves_and_records_each_dimension(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("model", "topology"))))
    ways = wbj(capsys, *store, "compare", "1", "--vs", "2")["way_out"]
    words = shlex.split(ways["accept"])[1:]
    doc = wbj(capsys, *store, *words)
    assert doc["comparable"] and "way_out" not in doc
    assert doc["accepted"] == [
        {"dimension": "model", "why": "why the difference does not matter"},
        {"dimension": "topology", "why": "why the difference does not matter"},
    ]


def test_accept_lists_and_whys(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("model", "topology"))))
    doc = wbj(
        capsys,
        *store,
        "compare",
        "1",
        "--vs",
        "2",
        "--accept",
        "model",
        "--why",
        "same job",
        "--accept",
        "topology",
        "--why",
        "one GPU",
    )
    assert {a["dimension"]: a["why"] for a in doc["accepted"]} == {"model": "same job", "topology": "one GPU"}
    _c, _o, err = wb(
        capsys,
        *store,
        "compare",
        "1",
        "--vs",
        "2",
        "--accept",
        "model",
        "--accept",
        "topology",
        "--why",
        "a",
        "--why",
        "b",
        "--why",
        "c",
        expect=2,
    )
    assert "every --accept needs its own --why TEXT, or one --why for all" in err
    _c, _o, err = wb(capsys, *store, "compare", "1", "--vs", "2", "--accept", "model,", "--why", "a", expect=2)
    assert "empty dimension name" in err
    # a refused pair with --accept already given keeps it in the printed way out
    ways = wbj(capsys, *store, "compare", "1", "--vs", "2", "--accept", "model", "--why", "same job")["way_out"]
    assert ways["accept"].startswith("wb compare 1 --vs 2 --accept model --why 'same job' --accept topology")


def test_different_values_offer_the_change(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path, drop=())
    b.write_text(b.read_text().replace('"single GPU"', '"2x tensor parallel"'))
    wb(capsys, *store, "import", str(a), str(b))
    ways = wbj(capsys, *store, "compare", "1", "--vs", "2")["way_out"]
    assert ways["declare"] == []
    assert ways["change"] == ["wb compare 1 --vs 2 --change 'topology=single GPU:2x tensor parallel'"]
    doc = wbj(capsys, *store, *shlex.split(ways["change"][0])[1:])
    assert doc["comparable"] and any(d["name"] == "topology" and d["state"] == "changed" for d in doc["dimensions"])


def test_investigation_compare_takes_accept_lists(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("model", "topology"))))
    inv = wbj(capsys, *store, "investigate", "new", "--lens", "inference", "--question", "q?")
    comp = wbj(
        capsys,
        *store,
        "investigate",
        "compare",
        str(inv["id"]),
        "1",
        "--vs",
        "2",
        "--accept",
        "model,topology",
        "--why",
        "same job script",
    )
    assert comp["comparable"]
    assert comp["parameters"]["accepts"] == {"model": "same job script", "topology": "same job script"}


def test_declarable_is_what_the_way_out_declares(tmp_path, capsys):
    """``declarable`` (what the TUI's m offers) and the printed ``wb declare`` line are one list."""
    from store import open_store
    from workbench.compare import compare
    from workbench.compare.way_out import PLACEHOLDER, declarable

    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    wb(capsys, "--store", url, "import", *map(str, inference_pair(tmp_path, drop=("model", "topology"))))
    records = open_store(url).load_runs([1, 2], tables=[])
    result = compare([records[0]], [records[1]])
    (proposal,) = declarable(result, [1], [2], records)
    assert proposal.runs == (1, 2) and proposal.values == {"model": PLACEHOLDER, "topology": PLACEHOLDER}
    assert wbj(capsys, "--store", url, "compare", "1", "--vs", "2")["way_out"]["declare"] == [
        "wb declare 1 2 model=VALUE topology=VALUE --why 'what makes it true'"
    ]
    comparable = compare([records[0]], [records[1]], accepts={"model": "x", "topology": "x"})
    assert declarable(comparable, [1], [2], records) == ()


def test_a_refusal_under_metric_says_the_metric_in_its_way_out(tmp_path, capsys):
    """``--metric`` makes a lens from the name; the way out repeats the words the user gave
    (a lens object among them was an internal error), in the CLI and in the server."""
    from store import open_store
    from workbench.usecases.comparisons import Compare, compare_runs
    from workbench.usecases.core import Context

    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    store = ("--store", url)
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("model",))))
    _c, out, err = wb(capsys, *store, "compare", "1", "--vs", "2", "--metric", "ttft_p50")
    assert "REFUSED" in out and "internal error" not in err
    doc = wbj(capsys, *store, "compare", "1", "--vs", "2", "--metric", "ttft_p50", "--lens", "inference")
    accept = doc["way_out"]["accept"]
    assert accept.startswith("wb compare 1 --vs 2 --lens inference --metric ttft_p50 --accept model"), accept
    served = compare_runs(  # as the server runs it (the token's name in the context)
        Context(open_store(url), token="ci"),
        Compare(baseline=["1"], candidate=["2"], lens="inference", metric="ttft_p50"),
    )
    assert served.document()["way_out"] == doc["way_out"]
