// The paired view: the list of tasks paired across base and candidate, discordant
// first, and one pair opened into two columns (verdicts, counters, end-state diff,
// transcript turn by turn with the first differing turn marked). A pair's details are
// the two runs' own task details, parsed from this page when the pair is opened.
"use strict";
(function () {
  const data = document.getElementById("paired-index");
  if (!data || !document.getElementById("pairs")) return;
  const V = window.endstateViewer;
  const el = V.el;
  const PAGE = 100;
  const index = JSON.parse(data.textContent);
  if (!index.cands.length) return;
  const kindLabel = Object.fromEntries(index.kinds);
  const state = { cand: 0, kind: "", category: "", shown: PAGE };

  const cand = () => index.cands[state.cand];
  const manyAttempts = () => cand().pairs.some((p) => p.b.length > 1 || p.c.length > 1);

  function columns() {
    const cols = ["task", "category", "base", "cand", "change", "first differing turn"];
    if (manyAttempts()) cols.push("pass@k base → cand", "pass^k base → cand");
    if (index.hack) cols.push("hack attempt base / cand");
    return cols;
  }

  function strip(outcomes) {
    if (outcomes.length === 1) return V.badge(outcomes[0]);
    const passed = outcomes.filter((o) => o === "pass").length;
    const box = el("span", { class: "strip", title: outcomes.join(", "), "aria-label": outcomes.join(", ") });
    for (const o of outcomes) box.appendChild(el("span", { class: "cell " + o }));
    box.appendChild(el("span", { class: "tally", text: passed + "/" + outcomes.length }));
    return box;
  }

  function share(value) { return Math.round(value * 100) + "%"; }

  function turnText(turns) {
    const found = turns.find((t) => typeof t === "number");
    if (found !== undefined) return found === 0 ? "the prompt" : "agent turn " + (found - 1);
    return turns.every((t) => t === null) ? "none: same transcripts" : "no transcript";
  }

  function hackText(values) {
    const seen = [...new Set(values.filter((v) => v !== null))];
    return seen.length ? seen.join(", ") : "–";
  }

  function rows() {
    return cand().pairs.filter((p) =>
      (!state.kind || p.kind === state.kind || (state.kind === "flipped" && (p.kind === "to-fail" || p.kind === "to-pass"))) &&
      (!state.category || p.cat === state.category));
  }

  function renderList() {
    const head = document.querySelector("#pairs thead");
    const cols = columns();
    head.replaceChildren(el("tr", {}, cols.map((c) => el("th", { text: c }))));
    const body = document.querySelector("#pairs tbody");
    body.replaceChildren();
    const matching = rows();
    for (const p of matching.slice(0, state.shown)) {
      const cells = [
        el("td", { text: p.id }), el("td", { text: p.cat }),
        el("td", {}, [strip(p.b)]), el("td", {}, [strip(p.c)]),
        el("td", {}, [el("span", { class: "kind " + p.kind, text: kindLabel[p.kind] })]),
        el("td", { text: turnText(p.turn) }),
      ];
      if (manyAttempts()) {
        cells.push(el("td", { class: "num", text: share(p.bk[0]) + " → " + share(p.ck[0]) + " (k=" + p.k + ")" }));
        cells.push(el("td", { class: "num", text: share(p.bk[1]) + " → " + share(p.ck[1]) + " (k=" + p.k + ")" }));
      }
      if (index.hack) {
        const text = hackText(p.bh) + " / " + hackText(p.ch);
        cells.push(el("td", { class: text.includes("missed") ? "hack missed" : "hack", text: text }));
      }
      const tr = el("tr", { class: "pair " + p.kind, "data-task": p.id, "data-kind": p.kind, tabindex: "0" }, cells);
      tr.addEventListener("click", () => toggle(tr, p));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(tr, p); } });
      body.appendChild(tr);
    }
    document.getElementById("pairs-more").hidden = matching.length <= state.shown;
    document.getElementById("pair-count").textContent =
      Math.min(state.shown, matching.length) + " of " + matching.length + " paired task(s) shown";
  }

  function toggle(tr, pair) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("pair-detail-row")) {
      next.remove();
      tr.classList.remove("open");
      return;
    }
    const cell = el("td", { colspan: String(columns().length) }, [pairDetail(pair)]);
    tr.after(el("tr", { class: "pair-detail-row" }, [cell]));
    tr.classList.add("open");
  }

  function load(id) {
    return id ? JSON.parse(document.getElementById(id).textContent) : null;
  }

  function pairDetail(pair) {
    const box = el("div", { class: "pair-detail", "data-task": pair.id });
    const body = el("div", { class: "pair-body" });
    const attempts = Math.max(pair.b.length, pair.c.length);
    if (attempts > 1) {
      const bar = el("div", { class: "attempts" }, [el("span", { text: "attempt " })]);
      for (let a = 0; a < attempts; a++) {
        const button = el("button", { type: "button", "data-attempt": String(a), text: String(a + 1) });
        button.addEventListener("click", () => {
          for (const b of bar.querySelectorAll("button")) b.classList.toggle("current", b === button);
          body.replaceChildren(sideBySide(pair, a));
        });
        bar.appendChild(button);
      }
      bar.querySelector("button").classList.add("current");
      box.appendChild(bar);
    }
    body.appendChild(sideBySide(pair, 0));
    box.appendChild(body);
    return box;
  }

  function two(left, right, cls) {
    return el("div", { class: "pair-grid" + (cls ? " " + cls : "") }, [
      el("div", { class: "side base" }, [left]), el("div", { class: "side cand" }, [right])]);
  }

  function missing(attempt) {
    return el("p", { class: "muted", text: "no attempt " + (attempt + 1) + " in this run" });
  }

  function header(role, label, d, attempt) {
    const box = el("div", { class: "side-head" }, [el("h4", { text: role + ": " + label })]);
    if (!d) { box.appendChild(missing(attempt)); return box; }
    box.appendChild(el("p", {}, [V.badge(d.outcome), el("span", { text: "  stop: " + d.stop_reason +
      "  wall: " + d.wall_s + " s  tree: " + (d.tree_hash || "n/a").slice(0, 12) })]));
    if (d.reason) box.appendChild(el("p", { class: "why", text: (d.failing_grader ? d.failing_grader + ": " : "") + d.reason.split("\n")[0] }));
    return box;
  }

  function verdictCell(d, grader, side) {
    const v = d ? d.verdicts.find((x) => x.grader === grader) : undefined;
    if (!v) return el("td", { class: side + " muted", text: d && !d.verdicts.length ? "not graded: " + d.outcome : "–" });
    return el("td", { class: side + " " + v.outcome }, [V.badge(v.outcome), v.reason ? el("pre", { text: v.reason }) : null]);
  }

  function verdicts(b, c) {
    // One row per grader, both runs' verdicts beside each other.
    const table = el("table", { class: "verdicts paired" }, [el("tr", {}, [
      el("th", { text: "grader" }), el("th", { text: "base" }), el("th", { text: "cand" })])]);
    const graders = [...new Set([...(b ? b.verdicts : []), ...(c ? c.verdicts : [])].map((v) => v.grader))];
    for (const g of graders) {
      const bv = b && b.verdicts.find((x) => x.grader === g), cv = c && c.verdicts.find((x) => x.grader === g);
      const differs = (bv ? bv.outcome : "") !== (cv ? cv.outcome : "");
      table.appendChild(el("tr", { class: "verdict" + (differs ? " differs" : ""), "data-grader": g }, [
        el("td", { text: g }), verdictCell(b, g, "base"), verdictCell(c, g, "cand")]));
    }
    if (!graders.length) table.appendChild(el("tr", {}, [el("td", { text: "" }), verdictCell(b, "", "base"), verdictCell(c, "", "cand")]));
    return el("div", { class: "wide" }, [table]);
  }

  function counters(b, c) {
    const table = el("table", { class: "counters paired" }, [el("tr", {}, [
      el("th", { text: "counter" }), el("th", { text: "base" }), el("th", { text: "cand" }), el("th", { text: "requires" })])]);
    const names = [...new Set([...Object.keys(b ? b.counters : {}), ...Object.keys(c ? c.counters : {})])];
    for (const name of names) {
      const bv = b ? b.counters[name] : undefined, cv = c ? c.counters[name] : undefined;
      const bound = ((b || c).requires || {})[name];
      const text = bound ? [bound[0] !== null ? "min " + bound[0] : "", bound[1] !== null ? "max " + bound[1] : ""].filter(Boolean).join(", ") : "";
      table.appendChild(el("tr", { class: bv !== cv ? "differs" : "" }, [
        el("td", { text: name }), el("td", { class: "num", text: bv === undefined ? "–" : String(bv) }),
        el("td", { class: "num", text: cv === undefined ? "–" : String(cv) }), el("td", { text: text })]));
    }
    return el("div", { class: "wide" }, [table]);
  }

  function splitTurns(messages) {
    // Turn 0 is the prompt; each assistant message opens the next turn (as endstate/report/_turns.py).
    const turns = [[]];
    for (const m of messages) {
      if (m.role === "assistant") turns.push([]);
      turns[turns.length - 1].push(m);
    }
    return turns;
  }

  function turnCell(turn, n, cls) {
    const cell = el("div", { class: "turn-cell " + cls });
    if (!turn) { cell.appendChild(el("p", { class: "muted", text: n === 0 ? "no prompt" : "no agent turn " + (n - 1) })); return cell; }
    for (const m of turn) for (const node of V.messageTurns(m, n)) cell.appendChild(node);
    return cell;
  }

  function aligned(b, c, first) {
    if (!b || !c || b.transcript === null || c.transcript === null) {
      return two(b && b.transcript ? aligned1(b.transcript) : el("p", { class: "muted", text: "no transcript" }),
        c && c.transcript ? aligned1(c.transcript) : el("p", { class: "muted", text: "no transcript" }));
    }
    const bt = splitTurns(b.transcript), ct = splitTurns(c.transcript);
    const grid = el("div", { class: "aligned" });
    let firstRow = null;
    for (let n = 0; n < Math.max(bt.length, ct.length); n++) {
      const mark = n === first ? " first-diff" : "";
      const label = el("div", { class: "turn-label" + mark, "data-turn": String(n) }, [
        el("b", { text: n === 0 ? "prompt" : "agent turn " + (n - 1) })]);
      if (mark) { label.appendChild(el("span", { class: "mark", text: "first difference" })); firstRow = label; }
      grid.appendChild(label);
      grid.appendChild(turnCell(bt[n], n, "base" + mark));
      grid.appendChild(turnCell(ct[n], n, "cand" + mark));
    }
    const parts = [];
    if (firstRow) {
      const jump = el("button", { type: "button", class: "jump", text: "go to the first difference (" + (first === 0 ? "the prompt" : "agent turn " + (first - 1)) + ")" });
      jump.addEventListener("click", () => firstRow.scrollIntoView({ block: "start" }));
      parts.push(jump);
    } else {
      parts.push(el("p", { class: "muted", text: "the two transcripts read the same, turn by turn" }));
    }
    parts.push(grid);
    return el("div", {}, parts);
  }

  function aligned1(messages) {
    const box = el("div", {});
    splitTurns(messages).forEach((t, n) => box.appendChild(turnCell(t, n, "")));
    return box;
  }

  function sideBySide(pair, attempt) {
    const b = load(pair.be[attempt]), c = load(pair.ce[attempt]);
    const box = el("div", { class: "side-by-side", "data-attempt": String(attempt) });
    box.appendChild(two(header("base", index.base, b, attempt), header("cand", cand().label, c, attempt), "heads"));
    box.appendChild(V.section("Graders", [verdicts(b, c)]));
    box.appendChild(V.section("Counters", [counters(b, c)]));
    box.appendChild(V.section("End state against the fixture",
      [two(b ? V.endState(b) : missing(attempt), c ? V.endState(c) : missing(attempt), "end-states")]));
    box.appendChild(V.section("Transcript, turn by turn", [aligned(b, c, pair.turn[attempt])]));
    return box;
  }

  function init() {
    const candSelect = document.getElementById("pair-cand");
    index.cands.forEach((c, i) => candSelect.appendChild(el("option", { value: String(i), text: c.label + " (" + c.model + ")" })));
    if (index.cands.length < 2) document.getElementById("pair-cand-label").hidden = true;
    const kindSelect = document.getElementById("pair-kind");
    for (const [kind, label] of index.kinds) kindSelect.appendChild(el("option", { value: kind, text: label }));
    const categorySelect = document.getElementById("pair-category");
    const categories = [...new Set(index.cands.flatMap((c) => c.pairs.map((p) => p.cat)))].sort();
    for (const cat of categories) categorySelect.appendChild(el("option", { value: cat, text: cat }));
    const reset = () => { state.shown = PAGE; renderList(); };
    candSelect.addEventListener("change", () => { state.cand = Number(candSelect.value); reset(); });
    kindSelect.addEventListener("change", () => { state.kind = kindSelect.value; reset(); });
    categorySelect.addEventListener("change", () => { state.category = categorySelect.value; reset(); });
    document.getElementById("pairs-more").addEventListener("click", () => { state.shown += PAGE; renderList(); });
    document.getElementById("pair-list").hidden = false;
    renderList();
  }

  init();
})();
