"""A report's structure, read back from what was written: headings, sections, tables (their
header row and first column) and labelled lines. No numbers: goldens of structure, never
of floats (tests/report/golden/*.json; ``python -m tests.report.regen`` rewrites them)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
# Tables whose first column is names, not figures (a ranks table's order follows its numbers).
NAMED_FIRST_COLUMN = {"metric", "dimension", "phase", "side", "guardrail", "file", "run", "part", "status", "decision"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self.sections: list[str] = []
        self.tables: list[dict] = []
        self.tags: dict[str, int] = {}
        self.attributes: list[tuple[str, str, str]] = []
        self._heading: list[str] | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_svg = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            self.attributes.append((tag, name, value or ""))
        if tag == "svg":
            self._in_svg += 1
        if self._in_svg:
            return
        if tag in ("h1", "h2", "h3"):
            self._heading = []
        elif tag == "section":
            self.sections.append(dict(attrs).get("id") or "")
        elif tag == "table":
            self.tables.append({"header": [], "first_column": [], "rows": 0})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "svg":
            self._in_svg -= 1
        if self._in_svg:
            return
        if tag in ("h1", "h2", "h3") and self._heading is not None:
            self.headings.append(f"{tag} " + " ".join("".join(self._heading).split()))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            table = self.tables[-1]
            if not table["header"]:
                table["header"] = self._row
            else:
                table["rows"] += 1
                if table["header"][0] in NAMED_FIRST_COLUMN:
                    table["first_column"].append(self._row[0])
            self._row = None

    def handle_data(self, data):
        if self._in_svg:
            return
        self.text.append(data)
        for sink in (self._heading, self._cell):
            if sink is not None:
                sink.append(data)


def html_page(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def html_structure(text: str) -> dict:
    page = html_page(text)
    return {
        "headings": page.headings,
        "sections": page.sections,
        "tables": page.tables,
        "charts": page.tags.get("svg", 0),
    }


_TABLE_ROW = re.compile(r"^\|(.*)\|$")


def markdown_structure(text: str) -> dict:
    """Headings, each table's header and first column, and the bold labels of list items."""
    headings, tables, labels = [], [], []
    table: dict | None = None
    for line in text.splitlines():
        row = _TABLE_ROW.match(line)
        if row:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.group(1))]
            if table is None:
                table = {"header": cells, "first_column": [], "rows": 0, "columns": len(cells)}
                tables.append(table)
            elif not set(row.group(1)) <= set("-:| "):
                table["rows"] += 1
                table["first_column"].append(cells[0] if table["header"][0] in NAMED_FIRST_COLUMN else "")
                assert len(cells) == table["columns"], f"a row of {len(cells)} cells in a table of {table['columns']}"
            continue
        table = None
        if line.startswith("#"):
            headings.append(line)
        label = re.match(r"^\s*- \*\*([^*]+?)\*\*", line)
        if label:
            labels.append(label.group(1))
    return {"headings": headings, "tables": tables, "labels": labels}


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def read_golden(name: str) -> dict:
    return json.loads(golden_path(name).read_text(encoding="utf-8"))


def write_golden(name: str, doc: dict) -> None:
    GOLDEN.mkdir(exist_ok=True)
    golden_path(name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
