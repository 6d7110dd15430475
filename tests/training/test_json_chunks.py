"""Cutting a JSON array into runs of whole items: every run decodes, and together they are the array."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.training.json_chunks import ArrayChunks, ScanError

tricky_text = st.text(alphabet=st.sampled_from(list('ab{}[]",:\\ é\n')), max_size=12)
leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), tricky_text)
values = st.recursive(
    leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(tricky_text, inner, max_size=3)),
    max_leaves=8,
)
items = st.lists(st.dictionaries(tricky_text, values, max_size=4), max_size=25)


def split(doc_bytes: bytes, chunk: int):
    splitter = ArrayChunks(io.BytesIO(doc_bytes), b"traceEvents", chunk=chunk)
    got = [item for run in splitter.chunks() for item in json.loads(run)]
    return got, splitter


@settings(max_examples=150, deadline=None)
@given(
    items,
    st.integers(1, 200),
    st.booleans(),
    st.dictionaries(st.sampled_from(["a", "b]", "traceEvents x"]), values, max_size=2),
)
def test_runs_are_whole_items_in_order(events, chunk, indent, extra):
    doc = {"head": {"traceEvents": "not this one", "x": "]"}, "traceEvents": events, **extra}
    text = json.dumps(doc, indent=1 if indent else None, ensure_ascii=False).encode()
    got, splitter = split(text, chunk)
    assert got == events
    head = json.loads(splitter.header.rstrip().rstrip(b",") + b"}")
    assert head == {"head": doc["head"]}
    tail = json.loads(b"{" + splitter.trailer.strip()[1:]) if splitter.trailer.strip() != b"}" else {}
    assert tail == extra


@pytest.mark.parametrize(
    "text",
    [
        b'{"traceEvents": [{"a": 1}, {"b": 2}',
        b'{"x": 1}',
        b'{"traceEvents": 5}',
        b'{"traceEvents": [{"a": 1} {"b": 2}]}',
    ],
)
def test_bad_shapes_are_refused(text):
    with pytest.raises((ScanError, ValueError)):
        split(text, 4)
