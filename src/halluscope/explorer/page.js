// The explorer page's script: filters, order and paging over the data inlined in the page.
// Every number it shows is a value of the data (the score files' values) or a sum of them.
"use strict";

const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
const PAGE_SIZE = 10;
const state = { model: "", instruction: "", benchmark: "", hallucinated: false, page: 1 };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "cls") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  return node;
}

function count(n) {
  return n.toLocaleString("en-US");
}

function fixed(v) {
  return v === null || v === undefined ? "–" : v.toFixed(3);
}

// Values named "GROUP LABEL" (an embedder and a metric) are shown one group per line.
function grouped(names, values) {
  const lines = [];
  if (values.every((v) => v === null)) return lines;
  names.forEach((name, i) => {
    const cut = name.indexOf(" ");
    const group = cut < 0 ? "" : name.slice(0, cut);
    const label = cut < 0 ? name : name.slice(cut + 1);
    const last = lines[lines.length - 1];
    const part = label + " " + fixed(values[i]);
    if (last && last.group === group) last.parts.push(part);
    else lines.push({ group, parts: [part] });
  });
  return lines.map((l) => (l.group ? l.group + ": " : "") + l.parts.join(" · "));
}

function readHash() {
  const params = new URLSearchParams(window.location.hash.slice(1));
  state.model = params.get("model") || "";
  state.instruction = params.get("instruction") || "";
  state.benchmark = params.get("benchmark") || "";
  state.hallucinated = params.get("hallucinated") === "1";
  state.page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
}

function writeHash() {
  const params = new URLSearchParams();
  if (state.model) params.set("model", state.model);
  if (state.instruction) params.set("instruction", state.instruction);
  if (state.benchmark) params.set("benchmark", state.benchmark);
  if (state.hallucinated) params.set("hallucinated", "1");
  if (state.page > 1) params.set("page", String(state.page));
  const hash = params.toString();
  try {
    history.replaceState(null, "", hash ? "#" + hash : window.location.pathname);
  } catch (error) {
    // some browsers refuse history changes on file:// pages; the filters still work
  }
}

function filtered() {
  const model = DATA.models.indexOf(state.model);
  const instruction = DATA.instructions.findIndex((i) => i[0] === state.instruction);
  const benchmark = DATA.benchmarks.findIndex((b) => b.name === state.benchmark);
  const any = model >= 0 || instruction >= 0 || benchmark >= 0 || state.hallucinated;
  const out = [];
  DATA.images.forEach((image, rank) => {
    const captions = image.c.filter(
      (c) =>
        (model < 0 || c[1] === model) &&
        (instruction < 0 || c[2] === instruction) &&
        (benchmark < 0 || c[0] === benchmark) &&
        (!state.hallucinated || c[4] > 0),
    );
    const answers = image.a.filter(
      (a) =>
        (model < 0 || a[1] === model) &&
        (benchmark < 0 || a[0] === benchmark) &&
        (!state.hallucinated || a[7] === 1),
    );
    if (any && captions.length + answers.length === 0) return;
    const hallucinated = captions.reduce((s, c) => s + c[4], 0);
    const wrong = answers.reduce((s, a) => s + (a[7] === 1 ? 1 : 0), 0);
    out.push({ image, rank, captions, answers, hallucinated, wrong });
  });
  out.sort((x, y) => y.hallucinated + y.wrong - (x.hallucinated + x.wrong) || x.rank - y.rank);
  return out;
}

function option(value, label, selected) {
  return el("option", { value, selected: value === selected }, label);
}

function fillFilters() {
  const model = document.getElementById("f-model");
  model.replaceChildren(option("", "all models", state.model));
  DATA.models.forEach((m) => model.append(option(m, m, state.model)));
  const instruction = document.getElementById("f-instruction");
  instruction.replaceChildren(option("", "all instructions", state.instruction));
  DATA.instructions.forEach(([id, text]) =>
    instruction.append(option(id, text ? id + ": " + text : id, state.instruction)),
  );
  const benchmark = document.getElementById("f-benchmark");
  benchmark.replaceChildren(option("", "all benchmarks", state.benchmark));
  DATA.benchmarks.forEach((b) => benchmark.append(option(b.name, b.title, state.benchmark)));
  document.getElementById("f-hallucinated").checked = state.hallucinated;
}

function header() {
  const s = DATA.summary;
  document.getElementById("title").textContent = "Explorer: profile " + DATA.profile;
  const parts = [
    ["images", s.images, "images"],
    ["models", s.models, "models"],
    ["captions", s.captions, "captions"],
    ["hallucinated", s.hallucinated, "hallucinated objects"],
  ];
  if (s.answers) parts.push(["answers", s.answers, "answers"], ["wrong", s.wrong, "wrong answers"]);
  const summary = document.getElementById("summary");
  parts.forEach(([key, n, label], i) => {
    if (i) summary.append(" · ");
    summary.append(el("b", { "data-count": key, text: count(n) }), " " + label);
  });
  const benchmarks = document.getElementById("benchmarks");
  DATA.benchmarks.forEach((b, i) => {
    if (i) benchmarks.append(" · ");
    const what = b.captions
      ? count(b.captions) + " captions, " + count(b.hallucinated) + " hallucinated objects"
      : count(b.answers) + " answers, " + count(b.wrong) + " wrong";
    benchmarks.append(el("span", { title: b.note, "data-benchmark": b.name }, b.title + ": " + what));
  });
  headline();
  const legend = document.getElementById("legend");
  legend.append("Objects in captions: ");
  DATA.kinds.forEach(([key, label]) => legend.append(el("mark", { cls: "k-" + key }, label), " "));
}

// The headline numbers (metrics/<profile>/), one row per model, each with its interval: the
// tables' CSV twins' value, lo and hi.
function headline() {
  const rows = DATA.headline || [];
  if (!rows.length) return;
  const models = [...new Set(rows.map((r) => r[0]))];
  const names = [...new Set(rows.map((r) => r[1]))];
  const cells = new Map(rows.map(([m, n, v, lo, hi]) => [m + "\u0000" + n, [v, lo, hi]]));
  const head = el("tr", {}, el("th", { text: "model" }), ...names.map((n) => el("th", { text: n })));
  const body = models.map((m) => el("tr", {}, el("td", { cls: "id", text: m }), ...names.map((n) => {
    const cell = cells.get(m + "\u0000" + n);
    if (!cell) return el("td", { cls: "num", text: "–" });
    const [v, lo, hi] = cell;
    const bounds = lo === null || hi === null ? "" : " [" + fixed(lo) + ", " + fixed(hi) + "]";
    return el("td", { cls: "num", "data-headline": m + " " + n, text: fixed(v) + bounds });
  })));
  const level = DATA.headlineLevel ? DATA.headlineLevel + " " : "";
  const caption = "Headline numbers (metrics/), each with its " + level + "interval [lo, hi]";
  document.getElementById("headline").replaceChildren(
    el("table", {}, el("caption", { text: caption }), head, ...body));
}

function shown(list) {
  const total = (f) => list.reduce((s, x) => s + f(x), 0);
  const parts = [
    ["images", list.length, "images"],
    ["captions", total((x) => x.captions.length), "captions"],
    ["hallucinated", total((x) => x.hallucinated), "hallucinated objects"],
  ];
  if (DATA.summary.answers) {
    parts.push(["answers", total((x) => x.answers.length), "answers"], ["wrong", total((x) => x.wrong), "wrong"]);
  }
  const line = document.getElementById("shown");
  line.replaceChildren("Shown (worst first): ");
  parts.forEach(([key, n, label], i) => {
    if (i) line.append(", ");
    line.append(el("b", { "data-shown": key, text: count(n) }), " " + label);
  });
}

function pager(node, pages) {
  node.replaceChildren();
  const go = (page) => () => {
    state.page = page;
    render();
    window.scrollTo(0, 0);
  };
  const button = (label, disabled) => el("button", { type: "button", disabled }, label);
  const first = button("« first", state.page <= 1);
  const prev = button("‹ previous", state.page <= 1);
  const next = button("next ›", state.page >= pages);
  const last = button("last »", state.page >= pages);
  first.onclick = go(1);
  prev.onclick = go(state.page - 1);
  next.onclick = go(state.page + 1);
  last.onclick = go(pages);
  node.append(first, prev, el("span", { "data-page": state.page }, `page ${state.page} of ${pages} `), next, last);
}

function captionText(text, marks) {
  const span = el("span", { cls: "text" });
  let cursor = 0;
  for (const [start, end, kind, name] of [...marks].sort((x, y) => x[0] - y[0])) {
    if (start < cursor) continue; // overlapping mentions: the first one is marked
    span.append(text.slice(cursor, start));
    const [key, label] = DATA.kinds[kind];
    span.append(el("mark", { cls: "k-" + key, title: name + ": " + label, "data-kind": key }, text.slice(start, end)));
    cursor = end;
  }
  span.append(text.slice(cursor));
  return span;
}

function captionsTable(entries) {
  const table = el("table", { cls: "captions" });
  table.append(
    el("tr", {}, el("th", {}, "model"), el("th", {}, "instruction"), el("th", {}, "caption"),
      el("th", {}, "hallucinated"), el("th", {}, "numbers")),
  );
  for (const c of entries) {
    const [b, m, i, text, nh, marks, values] = c;
    const bench = DATA.benchmarks[b];
    const [instruction, instructionText] = DATA.instructions[i];
    const cell = el("td", {}, captionText(text, marks));
    const scored = marks.filter((mark) => DATA.kinds[mark[2]][2] && mark[4].length);
    if (scored.length) {
      const list = el("ul", { cls: "objects" });
      for (const mark of scored) {
        list.append(el("li", {}, mark[3] + ": " + grouped(bench.markValues, mark[4]).join("; ")));
      }
      cell.append(list);
    }
    table.append(
      el("tr", { cls: "caption", "data-model": DATA.models[m], "data-instruction": instruction, "data-hallucinated": nh },
        el("td", { cls: "id" }, DATA.models[m]),
        el("td", { cls: "id", title: instructionText }, instruction),
        cell,
        el("td", { cls: "num" }, String(nh)),
        el("td", { cls: "values" }, grouped(bench.captionValues, values).join("\n")),
      ),
    );
  }
  return table;
}

function answersTable(entries) {
  const table = el("table", { cls: "answers" });
  table.append(
    el("tr", {}, ...["model", "question", "answer", "truth", "judge"].map((h) => el("th", {}, h))),
  );
  for (const [, m, label, question, answer, truth, judge, wrong] of entries) {
    table.append(
      el("tr", { cls: wrong === 1 ? "answer wrong" : "answer", "data-wrong": wrong === null ? "" : wrong },
        el("td", {}, DATA.models[m]),
        el("td", {}, label ? el("span", { cls: "note" }, label + ": ") : null, question),
        el("td", { cls: "pre" }, answer),
        el("td", { cls: "pre" }, truth),
        el("td", { cls: "pre" }, judge + (wrong === 1 ? " (wrong)" : wrong === null ? " (not judged)" : "")),
      ),
    );
  }
  return table;
}

function imageCard(x) {
  const { image, captions, answers, hallucinated, wrong } = x;
  const n = hallucinated + wrong;
  const card = el("section", { cls: "image", "data-image": image.id, "data-hallucinations": n });
  const info = el("div", {},
    el("h2", {}, image.id, el("span", { cls: n ? "badge" : "badge zero" },
      count(hallucinated) + " hallucinated objects, " + count(wrong) + " wrong answers")),
    el("p", { cls: "truth" }, el("b", {}, "Ground truth: "), image.gt.join(", ") || "none"),
  );
  if (image.other.length) {
    info.append(el("p", { cls: "truth" }, el("b", {}, "Other annotated objects: "), image.other.join(", ")));
  }
  card.append(el("div", { cls: "head" },
    image.thumb ? el("img", { cls: "thumb", src: image.thumb, alt: image.id }) : null, info));
  if (captions.length) card.append(captionsTable(captions));
  DATA.benchmarks.forEach((bench, b) => {
    const mine = answers.filter((a) => a[0] === b);
    if (!mine.length) return;
    const bad = mine.filter((a) => a[7] === 1).length;
    const details = el("details", { cls: "answers", "data-benchmark": bench.name },
      el("summary", {}, `${bench.title}: ${count(mine.length)} answers, ${count(bad)} wrong`));
    // answers are rendered when opened: a page of images stays light
    details.addEventListener("toggle", () => {
      if (details.open && details.children.length === 1) details.append(answersTable(mine));
    });
    card.append(details);
  });
  return card;
}

function render() {
  const list = filtered();
  const pages = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
  state.page = Math.min(state.page, pages);
  writeHash();
  shown(list);
  pager(document.getElementById("pager-top"), pages);
  pager(document.getElementById("pager-bottom"), pages);
  const start = (state.page - 1) * PAGE_SIZE;
  const main = document.getElementById("images");
  main.replaceChildren(...list.slice(start, start + PAGE_SIZE).map(imageCard));
}

function listen() {
  const on = (id, key, read) =>
    document.getElementById(id).addEventListener("change", (event) => {
      state[key] = read(event.target);
      state.page = 1;
      render();
    });
  on("f-model", "model", (t) => t.value);
  on("f-instruction", "instruction", (t) => t.value);
  on("f-benchmark", "benchmark", (t) => t.value);
  on("f-hallucinated", "hallucinated", (t) => t.checked);
}

readHash();
header();
fillFilters();
listen();
render();
