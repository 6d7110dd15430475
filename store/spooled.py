"""A table whose rows arrive in chunks and wait on disk until the store writes them.

A job's operations table has one row per (operation, step, rank): half a million rows
at 1,024 ranks. Built in memory it grows with ranks × operations; here each chunk (a
rank's rows) is appended to an unnamed temporary file as it arrives and dropped, so
the client holds only the table's vocabulary (each distinct string once) and a few
numbers per chunk. What must wait for every chunk is decided at the end on those
numbers: which values of the key column to leave out (``exclude``: the job's warm-up
and incomplete steps) and the order of the chunks (``order``: by rank, whatever order
they arrived in). The writer then streams each column, chunk by chunk, in the stored
encoding (``store.columns``: codes into one string table, or one ``.npy`` array of
float64), without building the column in memory; reading a column (``table[name]``)
gives the array an in-memory table would hold.

The temporary file is the operating system's (``TMPDIR``), removed when it is closed
or the table is collected, so a failed import leaves nothing behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from store import columns

_CODE = np.dtype(np.int32)  # a text value's code in the spool (the stored width is chosen at the end)
_NUMBER = np.dtype(np.float64)  # every other column, as the in-memory tables hold them


@dataclass
class _Chunk:
    rows: int
    at: dict[str, int]  # column -> byte offset of its values in the file
    order: Any  # sort key of the chunk (a rank)
    keys: np.ndarray  # the distinct values of the key column in this chunk
    key_rows: np.ndarray  # and how many rows hold each


@dataclass
class StreamedColumn:
    """One column of a spooled table as the store writes it: its blob as pieces, in order."""

    dtype: str  # "str" (dictionary-coded text) or the numeric dtype, as ``run_column.dtype`` records it
    length: int
    size: int  # bytes of the whole blob (a SQLite writer allocates it first)
    pieces: Iterator[bytes | memoryview] = field(repr=False)


class SpooledTable(Mapping[str, np.ndarray]):
    """Columns of rows appended chunk by chunk; ``text`` names the string columns, ``key``
    the numeric column whose values ``exclude`` can leave out."""

    def __init__(self, columns_: Sequence[str], text: Sequence[str] = (), key: str | None = None) -> None:
        unknown = [c for c in (*text, *([key] if key else [])) if c not in columns_]
        if unknown or (key is not None and key in text):
            raise ValueError(f"text and key columns must be numeric or text columns of the table: {unknown or key}")
        self._columns = tuple(columns_)
        self._text = frozenset(text)
        self._key = key
        self._vocabulary: dict[str, dict[str, int]] = {c: {} for c in text}  # value -> code, first-seen order
        self._chunks: list[_Chunk] = []
        self._excluded: list[float] = []
        self._file: IO[bytes] | None = None
        self._end = 0

    # -- filling ------------------------------------------------------------------

    def append(
        self, chunk: Mapping[str, np.ndarray], labels: Mapping[str, Sequence[str]] | None = None, order: Any = None
    ) -> None:
        """Rows of every column; a text column as strings, or as codes into ``labels[column]``.
        A numeric column the chunk lacks is unknown (NaN) on its rows."""
        extra = set(chunk) - set(self._columns)
        if extra:
            raise ValueError(f"columns {sorted(extra)} are not columns of this table")
        missing_text = [c for c in self._text if c not in chunk]
        if missing_text:
            raise ValueError(f"text columns {missing_text} are missing from the chunk")
        lengths = {len(np.asarray(v)) for v in chunk.values()}
        if len(lengths) > 1:
            raise ValueError(f"the chunk's columns have different lengths: {sorted(lengths)}")
        rows = lengths.pop() if lengths else 0
        at: dict[str, int] = {}
        for column in self._columns:
            if column in self._text:
                values = self._codes(column, np.asarray(chunk[column]), (labels or {}).get(column))
            elif column in chunk:
                values = np.asarray(chunk[column], dtype=_NUMBER)
            else:
                values = np.full(rows, np.nan)
            at[column] = self._write(values)
        keys, key_rows = (
            np.unique(np.asarray(chunk.get(self._key, np.full(rows, np.nan)), dtype=_NUMBER), return_counts=True)
            if self._key is not None
            else (np.zeros(0), np.zeros(0, dtype=np.int64))
        )
        self._chunks.append(_Chunk(rows, at, order, keys, key_rows))

    def _codes(self, column: str, values: np.ndarray, labels: Sequence[str] | None) -> np.ndarray:
        index = self._vocabulary[column]
        if labels is not None:  # codes into the chunk's own labels: map each label once, then index
            if values.dtype.kind not in "iu":
                raise ValueError(f"column {column}: codes into its labels must be integers")
            remap = np.array([index.setdefault(v, len(index)) for v in labels], dtype=_CODE)
            if values.size and (int(values.min()) < 0 or int(values.max()) >= len(remap)):
                raise ValueError(f"column {column}: a code points outside its labels")
            return remap[values] if len(remap) else np.zeros(0, dtype=_CODE)
        if values.dtype.kind not in "UOT" or (
            values.dtype.kind == "O" and any(type(v) is not str for v in values.tolist())
        ):
            raise ValueError(f"column {column} holds text: strings, or codes with their labels")
        return np.array([index.setdefault(v, len(index)) for v in values.tolist()], dtype=_CODE)

    def _write(self, values: np.ndarray) -> int:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="wb-spool-")  # noqa: SIM115 (closed by close() or with the table)
        at = self._end
        data = np.ascontiguousarray(values).view(np.uint8)
        os.pwrite(self._file.fileno(), data.data, at)  # one chunk's column: megabytes at most
        self._end += data.nbytes
        return at

    def exclude(self, values: Sequence[float]) -> None:
        """Leave out the rows whose key column holds one of ``values`` (decided after the last chunk)."""
        if self._key is None:
            raise ValueError("this table has no key column to exclude rows by")
        self._excluded = [float(v) for v in values]

    def order(self) -> None:
        """Put the chunks in the order of their sort keys (stable: equal keys keep their arrival order)."""
        self._chunks.sort(key=lambda c: c.order)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    # -- reading ------------------------------------------------------------------

    @property
    def rows(self) -> int:
        """Rows kept (the excluded left out)."""
        return sum(c.rows - int(c.key_rows[np.isin(c.keys, self._excluded)].sum()) for c in self._chunks)

    @property
    def text(self) -> list[str]:
        """The text columns, in table order."""
        return [c for c in self._columns if c in self._text]

    @property
    def chunks(self) -> int:
        return len(self._chunks)

    def text_values(self, column: str) -> list[str]:
        """The distinct strings of a text column (each once; some may be on excluded rows only)."""
        return list(self._vocabulary[column])

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __getitem__(self, column: str) -> np.ndarray:
        if column not in self._columns:
            raise KeyError(column)
        parts = list(self._kept(column))
        if column not in self._text:
            return np.concatenate(parts) if parts else np.zeros(0)
        lookup = np.empty(len(self._vocabulary[column]), dtype=object)  # objects: one shared str per distinct value
        lookup[:] = list(self._vocabulary[column])
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=_CODE)
        return lookup[codes] if len(codes) else np.zeros(0, dtype=object)

    def stream(self, column: str) -> StreamedColumn:
        """The column's stored blob (``store.columns``), as pieces read chunk by chunk."""
        length = self.rows
        if column not in self._text:
            header = columns.npy_header(_NUMBER, length)
            return StreamedColumn(
                str(_NUMBER), length, len(header) + length * _NUMBER.itemsize, _pieces([header], self._kept(column), [])
            )
        width = columns.code_width(len(self._vocabulary[column]))
        offsets, utf8 = columns.string_table([v.encode("utf-8", "surrogatepass") for v in self._vocabulary[column]])
        head = [columns.STRINGS_MAGIC, columns.npy_header(width, length)]
        tail: list[bytes | memoryview] = [*columns.npy_parts(offsets), *columns.npy_parts(utf8)]
        size = columns.size([*head, *tail]) + length * width.itemsize
        return StreamedColumn("str", length, size, _pieces(head, (c.astype(width) for c in self._kept(column)), tail))

    def _kept(self, column: str) -> Iterator[np.ndarray]:
        """The column's values chunk by chunk, in order, the excluded rows left out."""
        dtype = _CODE if column in self._text else _NUMBER
        for chunk in self._chunks:
            values = self._read(chunk, column, dtype)
            if self._excluded and np.isin(chunk.keys, self._excluded).any():
                assert self._key is not None
                values = values[~np.isin(self._read(chunk, self._key, _NUMBER), self._excluded)]
            yield values

    def _read(self, chunk: _Chunk, column: str, dtype: np.dtype[Any]) -> np.ndarray:
        if not chunk.rows:
            return np.zeros(0, dtype=dtype)
        assert self._file is not None
        nbytes = chunk.rows * dtype.itemsize
        data = os.pread(self._file.fileno(), nbytes, chunk.at[column])
        if len(data) != nbytes:
            raise OSError(f"the spool file of a table ended early ({len(data)} of {nbytes} bytes)")
        return np.frombuffer(data, dtype=dtype)


def _pieces(
    head: list[bytes], body: Iterator[np.ndarray], tail: list[bytes | memoryview]
) -> Iterator[bytes | memoryview]:
    yield from head
    for values in body:
        yield np.ascontiguousarray(values).view(np.uint8).data
    yield from tail
