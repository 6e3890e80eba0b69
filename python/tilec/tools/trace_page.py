"""The trace as one HTML page: data as inline JSON, rendered by inline JS (no network).

The page lists every stage and pass with its time and how many lines it changed; the selected
pass shows side by side what it changed (changed lines highlighted, the changed part of a
replaced line marked, lines whose value names or indentation alone changed in a paler colour,
unchanged runs folded), the whole IR after it, or the `tile.*` layouts and decisions per buffer
and op. Clicking a line with a source location shows the Python line
it came from. `#pass=NAME` in the address selects a pass (the browser test uses it).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from tilec.tools.trace import Decision, IRText, Trace, ir_diff

MAX_SOURCE_BYTES = 1 << 20


class _Tables:
    """Texts and source files stored once, referred to by index."""

    def __init__(self) -> None:
        self.texts: list[dict[str, Any]] = []
        self.text_index: dict[tuple[str, ...], int] = {}
        self.files: list[str] = []
        self.file_index: dict[str, int] = {}

    def file(self, path: str) -> int:
        if path not in self.file_index:
            self.file_index[path] = len(self.files)
            self.files.append(path)
        return self.file_index[path]

    def location(self, location: tuple[str, int] | None) -> list[int] | None:
        return None if location is None else [self.file(location[0]), location[1]]

    def text(self, text: IRText) -> int:
        key = tuple(text.lines)
        if key not in self.text_index:
            self.text_index[key] = len(self.texts)
            self.texts.append({"lines": text.lines,
                               "locs": [self.location(loc) for loc in text.locations]})
        return self.text_index[key]


PLOTTED = ("tile.layout", "tile.swizzle", "tile.swizzle_request")


def _pictures_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _picture(decision: Decision, pictures: dict[tuple, str]) -> str:
    """The layout picture of a buffer with a #tile.linear layout or a swizzle (drawn once per
    distinct buffer type and layout), "" for other ops or without matplotlib."""
    if decision.op != "tile.alloc" or not any(k in decision.attributes for k in PLOTTED):
        return ""
    key = (decision.type, tuple(sorted(decision.attributes.items())))
    if key not in pictures:
        from tilec.tools.layout_plot import data_uri

        pictures[key] = data_uri(decision) if _pictures_available() else ""
    return pictures[key]


def _kernel_data(trace: Trace, tables: _Tables) -> dict[str, Any]:
    pictures: dict[tuple, str] = {}
    steps = []
    previous: list[str] = []
    for step in trace.steps:
        changes = ir_diff(previous, step.text.lines)
        steps.append({
            "stage": step.stage,
            "name": step.name,
            "seconds": step.seconds,
            "text": tables.text(step.text),
            "diff": changes,
            "added": sum(j2 - j1 for tag, _, _, j1, j2 in changes if tag != "rename"),
            "removed": sum(i2 - i1 for tag, i1, i2, _, _ in changes if tag != "rename"),
            "renamed": sum(i2 - i1 for tag, i1, i2, _, _ in changes if tag == "rename"),
            "decisions": [{"op": d.op, "value": d.value, "type": d.type,
                           "attributes": d.attributes, "loc": tables.location(d.location),
                           "name": d.name,
                           "picture": _picture(d, pictures)}
                          for d in step.decisions],
        })
        previous = step.text.lines
    return {"kernel": trace.kernel, "target": trace.target,
            "location": tables.location(trace.location),
            "stages": [{"name": name, "seconds": seconds}
                       for name, seconds in trace.stage_seconds.items()],
            "steps": steps}


def _source(path: str) -> list[str]:
    file = Path(path)
    try:
        if file.is_file() and file.stat().st_size <= MAX_SOURCE_BYTES:
            return file.read_text(errors="replace").splitlines()
    except OSError:
        pass
    return []


def page_data(traces: list[Trace]) -> dict[str, Any]:
    """What the page's script reads (also what the tests inspect)."""
    tables = _Tables()
    kernels = [_kernel_data(trace, tables) for trace in traces]
    return {"kernels": kernels, "texts": tables.texts, "pictures": _pictures_available(),
            "files": [{"path": path, "lines": _source(path)} for path in tables.files]}


def render(traces: list[Trace]) -> str:
    # no "<" inside the script element: the data holds Python sources and IR text
    data = json.dumps(page_data(traces), separators=(",", ":")).replace("<", "\\u003c")
    title = ", ".join(f"{t.kernel} ({t.target})" for t in traces)
    return (PAGE.replace("{{title}}", html.escape(title))
            .replace("{{style}}", STYLE).replace("{{script}}", SCRIPT).replace("{{data}}", data))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>tilec trace: {{title}}</title>
<style>{{style}}</style></head>
<body>
<header><b>tilec trace</b> <select id="kernel"></select> <span id="summary"></span>
<span class="tabs"><button data-view="diff">Diff</button><button data-view="ir">IR</button>
<button data-view="decisions">Layouts &amp; decisions</button></span>
<label><input type="checkbox" id="changed-only"> changed passes only</label>
<span class="hint">j / k: next / previous pass</span></header>
<nav id="passes"></nav>
<main id="view"></main>
<aside id="source"><div id="source-title"></div><div id="source-lines"></div></aside>
<script type="application/json" id="trace-data">{{data}}</script>
<script>{{script}}</script>
</body></html>
"""

STYLE = """
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.35 system-ui, sans-serif; color: #1d2430; display: grid;
  grid-template: "head head head" auto "nav main src" 1fr / 270px 1fr 28%; height: 100vh; }
header { grid-area: head; padding: 6px 10px; background: #24304a; color: #eef; display: flex;
  gap: 14px; align-items: center; flex-wrap: wrap; }
header .hint { color: #9ab; margin-left: auto; }
.tabs button { background: #3b4a6b; color: #eef; border: 0; padding: 4px 10px; cursor: pointer; }
.tabs button.on { background: #f0c040; color: #222; }
nav { grid-area: nav; overflow: auto; border-right: 1px solid #ccd; background: #f6f7fa; }
nav h3 { margin: 0; padding: 6px 8px 2px; font-size: 12px; color: #556; display: flex;
  justify-content: space-between; border-top: 1px solid #dde; }
nav ol { list-style: none; margin: 0; padding: 0 0 4px; }
nav li { padding: 2px 8px 2px 14px; cursor: pointer; display: grid;
  grid-template-columns: 1fr auto; column-gap: 6px; }
nav li .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
nav li .time { color: #667; font-variant-numeric: tabular-nums; }
nav li .delta { grid-column: 1 / 3; font-size: 11px; color: #889; }
nav li .bar { grid-column: 1 / 3; height: 2px; background: #7a9ad0; }
nav li.unchanged .name { color: #99a; }
nav li.on { background: #dbe6ff; }
nav li.hidden { display: none; }
main { grid-area: main; overflow: auto; }
main h2 { margin: 0; padding: 6px 10px; font-size: 14px; background: #eef1f7;
  position: sticky; top: 0; z-index: 1; }
table.code { border-collapse: collapse; width: 100%; font: 12px/1.4 ui-monospace, monospace;
  table-layout: fixed; }
table.code td { padding: 0 6px; white-space: pre-wrap; word-break: break-all;
  vertical-align: top; }
table.code td.n { color: #99a; text-align: right; user-select: none; }
table.code col.n { width: 44px; }
tr.linked { cursor: pointer; }
td.del { background: #ffe5e5; } td.add { background: #e2f7e2; }
td.del mark { background: #f5a3a3; } td.add mark { background: #9fdc9f; }
td.ren { background: #fbf7e6; } td.ren mark { background: #efe0a0; }
td.empty { background: #f3f3f3; }
tr.fold td { background: #eef3fb; color: #557; cursor: pointer; text-align: center; }
tr.hl td { outline: 1px solid #f0c040; background-image: linear-gradient(#fff4c240, #fff4c240); }
table.decisions { border-collapse: collapse; margin: 8px; font-size: 12px; }
table.decisions th, table.decisions td { border: 1px solid #dde; padding: 3px 6px;
  text-align: left; vertical-align: top; }
table.decisions td code { white-space: pre-wrap; word-break: break-all; }
table.decisions td:nth-child(4) { min-width: 300px; }
table.decisions img { max-width: 420px; display: block; }
aside { grid-area: src; overflow: auto; border-left: 1px solid #ccd; background: #fbfbf8; }
#source-title { padding: 6px 10px; font-weight: bold; background: #eef1f7; position: sticky;
  top: 0; }
#source-lines div { font: 12px/1.4 ui-monospace, monospace; white-space: pre; padding: 0 8px; }
#source-lines div span { color: #99a; display: inline-block; width: 38px; text-align: right;
  margin-right: 8px; }
#source-lines div.hl { background: #fff0b0; }
#source-lines div.used { cursor: pointer; }
.note { padding: 10px; color: #667; }
"""

SCRIPT = r"""
"use strict";
const data = JSON.parse(document.getElementById("trace-data").textContent);
const CONTEXT = 3;
const state = { kernel: 0, step: 0, view: "diff" };
const $ = (id) => document.getElementById(id);

function node(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function ms(seconds) { return (seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1) + " ms"; }
function kernel() { return data.kernels[state.kernel]; }
function textOf(step) { return data.texts[step.text]; }
function previousText(index) {
  return index > 0 ? textOf(kernel().steps[index - 1]) : { lines: [], locs: [] };
}

function renderNav() {
  const nav = $("passes");
  nav.replaceChildren();
  const steps = kernel().steps;
  const longest = Math.max(...steps.map((s) => s.seconds), 1e-9);
  let list = null, stage = null;
  steps.forEach((step, index) => {
    if (step.stage !== stage) {
      stage = step.stage;
      const info = kernel().stages.find((s) => s.name === stage);
      const head = node("h3");
      head.append(node("span", "", stage), node("span", "", info ? ms(info.seconds) : ""));
      list = node("ol");
      nav.append(head, list);
    }
    const changed = step.added + step.removed > 0;
    const item = node("li", "pass " + (changed ? "changed" : "unchanged"));
    const renamed = step.renamed ? ` ~${step.renamed} renamed` : "";
    item.dataset.step = index;
    item.dataset.name = step.name;
    item.append(node("span", "name", step.name), node("span", "time", ms(step.seconds)),
                node("span", "delta",
                     (changed ? `+${step.added} −${step.removed}` : "no change") + renamed));
    const bar = node("span", "bar");
    bar.style.width = Math.max(1, 100 * step.seconds / longest) + "%";
    item.append(bar);
    item.onclick = () => select(index);
    list.append(item);
  });
  applyFilter();
}

function applyFilter() {
  const only = $("changed-only").checked;
  for (const item of document.querySelectorAll("nav li"))
    item.classList.toggle("hidden", only && item.classList.contains("unchanged"));
}

function lineRow(cells, loc) {
  const row = node("tr");
  row.append(...cells);
  if (loc) {
    row.classList.add("linked");
    row.dataset.file = loc[0];
    row.dataset.line = loc[1];
    row.onclick = () => showSource(loc[0], loc[1]);
  }
  return row;
}

function marked(cell, text, from, to) {
  cell.append(document.createTextNode(text.slice(0, from)));
  if (to > from) cell.append(node("mark", "", text.slice(from, to)));
  cell.append(document.createTextNode(text.slice(to)));
}

function changedSpan(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start &&
         a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return [start, a.length - end, b.length - end];
}

function diffRows(before, after, changes) {
  // rows: ["same", i, j] | ["change", [i...], [j...]] | ["fold", i, j, count]
  const rows = [];
  let i = 0, j = 0;
  const same = (untilI, first, last) => {
    const count = untilI - i;
    if (count > 2 * CONTEXT + 1) {
      const head = first ? 0 : CONTEXT, tail = last ? 0 : CONTEXT;
      for (let k = 0; k < head; k++) rows.push(["same", i + k, j + k]);
      rows.push(["fold", i + head, j + head, count - head - tail]);
      for (let k = count - tail; k < count; k++) rows.push(["same", i + k, j + k]);
    } else {
      for (let k = 0; k < count; k++) rows.push(["same", i + k, j + k]);
    }
    i += count; j += count;
  };
  changes.forEach(([tag, i1, i2, j1, j2], index) => {
    same(i1, index === 0, false);
    const left = [], right = [];
    for (let k = i1; k < i2; k++) left.push(k);
    for (let k = j1; k < j2; k++) right.push(k);
    rows.push(["change", left, right, tag]);
    i = i2; j = j2;
  });
  same(before.lines.length, changes.length === 0, true);
  return rows;
}

function sameRow(before, after, i, j) {
  return lineRow([node("td", "n", i + 1), node("td", "t", before.lines[i]),
                  node("td", "n", j + 1), node("td", "t", after.lines[j])], after.locs[j]);
}

function columns(table, count) {
  const group = node("colgroup");
  for (let k = 0; k < count; k++) group.append(node("col", "n"), node("col", "t"));
  table.append(group);
}

function renderDiff(index, step) {
  const before = previousText(index), after = textOf(step);
  const table = node("table", "code diff");
  columns(table, 2);
  const body = node("tbody");
  table.append(body);
  for (const row of diffRows(before, after, step.diff)) {
    if (row[0] === "same") {
      body.append(sameRow(before, after, row[1], row[2]));
    } else if (row[0] === "fold") {
      const [, i, j, count] = row;
      const fold = node("tr", "fold");
      const cell = node("td", "", `⋯ ${count} unchanged lines ⋯`);
      cell.colSpan = 4;
      fold.append(cell);
      fold.onclick = () => {
        const rows = [];
        for (let k = 0; k < count; k++) rows.push(sameRow(before, after, i + k, j + k));
        fold.replaceWith(...rows);
      };
      body.append(fold);
    } else {
      const [, left, right, tag] = row;
      const kinds = tag === "rename" ? ["ren", "ren"] : ["del", "add"];
      for (let k = 0; k < Math.max(left.length, right.length); k++) {
        const a = left[k], b = right[k];
        const cells = [];
        const textA = a === undefined ? null : before.lines[a];
        const textB = b === undefined ? null : after.lines[b];
        const span = textA !== null && textB !== null ? changedSpan(textA, textB) : null;
        cells.push(node("td", "n", a === undefined ? "" : a + 1));
        const cellA = node("td", "t " + (textA === null ? "empty" : kinds[0]));
        if (textA !== null) marked(cellA, textA, span ? span[0] : 0, span ? span[1] : 0);
        cells.push(cellA, node("td", "n", b === undefined ? "" : b + 1));
        const cellB = node("td", "t " + (textB === null ? "empty" : kinds[1]));
        if (textB !== null) marked(cellB, textB, span ? span[0] : 0, span ? span[2] : 0);
        cells.push(cellB);
        body.append(lineRow(cells, b === undefined ? before.locs[a] : after.locs[b]));
      }
    }
  }
  if (!step.added && !step.removed) {
    const note = node("div", "note", step.renamed ? "This pass only renamed values or re-indented."
                                                   : "This pass left the IR as it was.");
    return [note, table];
  }
  return [table];
}

function renderIR(step) {
  const text = textOf(step);
  const table = node("table", "code ir");
  columns(table, 1);
  const body = node("tbody");
  table.append(body);
  text.lines.forEach((line, i) =>
    body.append(lineRow([node("td", "n", i + 1), node("td", "t", line)], text.locs[i])));
  return [table];
}

function renderDecisions(step) {
  if (!step.decisions.length)
    return [node("div", "note", "No buffer or op carries a tile.* attribute at this point.")];
  const table = node("table", "decisions");
  const head = node("tr");
  for (const title of ["op", "value", "buffer type", "tile.* attributes", "source", "layout"])
    head.append(node("th", "", title));
  table.append(head);
  for (const d of step.decisions) {
    const attrs = node("td");
    for (const [name, value] of Object.entries(d.attributes)) {
      attrs.append(node("code", "", `${name} = ${value}`), node("br"));
    }
    const where = d.loc ? `${data.files[d.loc[0]].path.split("/").pop()}:${d.loc[1]}` : "";
    const picture = node("td");
    if (d.picture) {
      const img = node("img");
      img.src = d.picture;
      img.alt = "layout of " + d.value;
      picture.append(img);
    } else if (!data.pictures && d.op === "tile.alloc" && Object.keys(d.attributes).length) {
      picture.append(node("span", "note", "(pip install matplotlib for layout pictures)"));
    }
    const value = d.name ? `${d.value} (${d.name})` : d.value;
    const row = lineRow([node("td", "", d.op), node("td", "", value), node("td", "", d.type),
                         attrs, node("td", "", where), picture], d.loc);
    table.append(row);
  }
  return [table];
}

function select(index) {
  state.step = index;
  const step = kernel().steps[index];
  for (const item of document.querySelectorAll("nav li"))
    item.classList.toggle("on", Number(item.dataset.step) === index);
  const current = document.querySelector(`nav li[data-step="${index}"]`);
  if (current) current.scrollIntoView({ block: "nearest" });
  for (const button of document.querySelectorAll(".tabs button"))
    button.classList.toggle("on", button.dataset.view === state.view);
  const title = node("h2", "",
    `${step.stage} › ${step.name} — ${ms(step.seconds)}, +${step.added} −${step.removed} lines` +
    (step.renamed ? `, ${step.renamed} renamed or re-indented only` : ""));
  const parts = state.view === "diff" ? renderDiff(index, step)
    : state.view === "ir" ? renderIR(step) : renderDecisions(step);
  const view = $("view");
  view.replaceChildren(title, ...parts);
  view.dataset.step = index;
  view.dataset.name = step.name;
  view.dataset.view = state.view;
  history.replaceState(null, "", `#pass=${encodeURIComponent(step.name)}&view=${state.view}` +
                       (state.kernel ? `&kernel=${state.kernel}` : ""));
}

function showSource(file, line) {
  const source = data.files[file];
  const title = $("source-title");
  const lines = $("source-lines");
  if (Number(lines.dataset.file) !== file) {
    lines.replaceChildren();
    lines.dataset.file = file;
    title.textContent = source.path;
    const used = new Set();
    for (const text of data.texts)
      text.locs.forEach((loc) => { if (loc && loc[0] === file) used.add(loc[1]); });
    source.lines.forEach((text, i) => {
      const row = node("div", used.has(i + 1) ? "used" : "");
      row.dataset.line = i + 1;
      row.append(node("span", "", i + 1), document.createTextNode(text));
      if (used.has(i + 1)) row.onclick = () => highlightIR(file, i + 1);
      lines.append(row);
    });
    if (!source.lines.length) lines.append(node("div", "note", "(source not readable)"));
  }
  for (const row of lines.querySelectorAll("div.hl")) row.classList.remove("hl");
  const target = lines.querySelector(`div[data-line="${line}"]`);
  if (target) { target.classList.add("hl"); target.scrollIntoView({ block: "center" }); }
  highlightIR(file, line, true);
}

function highlightIR(file, line, quiet) {
  let first = null;
  for (const row of document.querySelectorAll("main tr.linked")) {
    const on = Number(row.dataset.file) === file && Number(row.dataset.line) === line;
    row.classList.toggle("hl", on);
    if (on && !first) first = row;
  }
  if (!quiet && first) first.scrollIntoView({ block: "center" });
  if (!quiet) {
    const lines = $("source-lines");
    for (const row of lines.querySelectorAll("div.hl")) row.classList.remove("hl");
    const target = lines.querySelector(`div[data-line="${line}"]`);
    if (target) target.classList.add("hl");
  }
}

function fromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  state.kernel = Math.min(Number(params.get("kernel") || 0), data.kernels.length - 1);
  if (["diff", "ir", "decisions"].includes(params.get("view"))) state.view = params.get("view");
  const name = params.get("pass");
  const found = name === null ? -1 : kernel().steps.findIndex((s) => s.name === name);
  return found >= 0 ? found : 0;
}

function start() {
  const chooser = $("kernel");
  data.kernels.forEach((k, i) => chooser.append(node("option", "", `${k.kernel} — ${k.target}`)));
  chooser.onchange = () => { state.kernel = chooser.selectedIndex; load(0); };
  for (const button of document.querySelectorAll(".tabs button"))
    button.onclick = () => { state.view = button.dataset.view; select(state.step); };
  $("changed-only").onchange = applyFilter;
  document.addEventListener("keydown", (event) => {
    const steps = kernel().steps;
    if (event.key === "j") select(Math.min(state.step + 1, steps.length - 1));
    if (event.key === "k") select(Math.max(state.step - 1, 0));
  });
  const first = fromHash();
  chooser.selectedIndex = state.kernel;
  load(first);
}

function load(index) {
  const k = kernel();
  const total = k.stages.reduce((sum, s) => sum + s.seconds, 0);
  $("summary").textContent =
    `${k.kernel} for ${k.target}: ${k.stages.length} stages, ${k.steps.length} passes, ` +
    `${ms(total)}`;
  renderNav();
  select(index);
  if (k.location) showSource(k.location[0], k.location[1]);
}

start();
"""
