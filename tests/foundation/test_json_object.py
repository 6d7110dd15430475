"""The one JSON reader of the native and Kineto importers (workbench/formats/json_object.py):
the members of a document in order, its streamed array as runs of whole items however the
runs are cut, and every fault one line with its place."""

from __future__ import annotations

import io
import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import BadInput
from workbench.formats.json_object import Items, JsonObject

tricky_text = st.text(alphabet=st.sampled_from(list('ab{}[]",:\\ é\n')), max_size=12)
leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), tricky_text)
values = st.recursive(
    leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(tricky_text, inner, max_size=3)),
    max_leaves=8,
)
items = st.lists(st.one_of(st.dictionaries(tricky_text, values, max_size=4), values), max_size=25)


def read(data: bytes, run_bytes: int) -> dict:
    doc = JsonObject(io.BytesIO(data), "f.json", streamed="traceEvents", run_bytes=run_bytes)
    out: dict = {}
    for key, value in doc.members():
        if isinstance(value, Items):
            runs = list(value.runs(lambda run: msgspec.json.decode(run.data)))
            assert all(run.data.startswith(b"[") and run.data.endswith(b"]") for _items, run in runs)
            out[key] = [item for decoded, _run in runs for item in decoded]
        else:
            out[key] = value
    return out


@settings(max_examples=150, deadline=None)
@given(
    items,
    st.integers(1, 200),
    st.booleans(),
    st.dictionaries(st.sampled_from(["a", "b]", "traceEvents x", "c},{"]), values, max_size=2),
)
def test_runs_are_whole_items_in_order_and_members_all_there(events, run_bytes, indent, extra):
    doc = {"head": {"traceEvents": "not this one", "x": "]"}, "traceEvents": events, **extra}
    text = json.dumps(doc, indent=1 if indent else None, ensure_ascii=False).encode()
    assert read(text, run_bytes) == doc


@pytest.mark.parametrize(
    "text, expect",
    [
        (b'{"traceEvents": [{"a": 1}, {"b": 2}', "truncated JSON"),
        (b'{"traceEvents": [{"a": 1} {"b": 2}]}', "traceEvents[0] (line 1, char 26): invalid JSON"),
        (b'{"traceEvents": [{"a": 1},]}', "traceEvents[1]"),
        (b'{"traceEvents": [{"a": 1}}', "expected ',' or ']', found '}'"),
        (b'{"x": 1, "x": 2}', "line 1, char 9: duplicate key 'x'"),
        (b'{"x": 1} []', "unexpected data after the end of the JSON object"),
        (b'{"x": [1, 2}', "x (line 1, char 11): invalid JSON"),
        (b'{"x": NaN}', "x (line 1, char 6): NaN is not allowed"),
        (b'{"traceEvents": [{"a": -Infinity}]}', "traceEvents[0] (line 1, char 24): -Infinity is not allowed"),
        (b'{"x": "\xff"}', "byte 7: is not UTF-8 text"),
        (b'{"x": "\\udc00"}', "x: string contains a lone surrogate"),
        (b"[1, 2]", "not a JSON object"),
        (b"  ", "is empty"),
    ],
)
def test_bad_shapes_are_one_line_with_their_place(text, expect):
    for run_bytes in (4, 1 << 20):
        with pytest.raises(BadInput) as err:
            read(text, run_bytes)
        assert expect in str(err.value), str(err.value)
