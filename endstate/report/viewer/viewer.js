// The endstate report viewer: renders the task list in pages and a task's details on
// demand, from JSON embedded in this file. Everything from a run is set with
// textContent, never parsed as HTML: transcripts hold whatever an agent printed.
"use strict";
(function () {
  const PAGE = 100;
  const index = JSON.parse(document.getElementById("index").textContent);
  const state = { run: 0, filter: "", outcome: "", shown: PAGE };

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const child of children || []) if (child) node.appendChild(child);
    return node;
  }

  function badge(outcome) {
    return el("span", { class: "badge " + outcome, text: outcome });
  }

  function rows() {
    const run = index.runs[state.run];
    const needle = state.filter.toLowerCase();
    return run.tasks.filter((t) =>
      (!state.outcome || t[3] === state.outcome) &&
      (!needle || (t[0] + " " + t[1] + " " + t[4] + " " + t[5]).toLowerCase().includes(needle)));
  }

  function renderList() {
    const body = document.querySelector("#tasks tbody");
    body.replaceChildren();
    const matching = rows();
    for (const t of matching.slice(0, state.shown)) {
      const [id, category, attempt, outcome, grader, reason, steps, detail] = t;
      const tr = el("tr", { class: "task", "data-task": id, "data-detail": detail, tabindex: "0" }, [
        el("td", { text: id + (attempt ? " (attempt " + attempt + ")" : "") }),
        el("td", { text: category }),
        el("td", {}, [badge(outcome)]),
        el("td", { class: "num", text: String(steps) }),
        el("td", { text: grader ? grader + ": " + reason : reason }),
      ]);
      tr.addEventListener("click", () => toggle(tr));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(tr); } });
      body.appendChild(tr);
    }
    const more = document.getElementById("more");
    more.hidden = matching.length <= state.shown;
    document.getElementById("count").textContent =
      Math.min(state.shown, matching.length) + " of " + matching.length + " task(s) shown";
  }

  function toggle(tr) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail-row")) {
      next.remove();
      tr.classList.remove("open");
      return;
    }
    const data = JSON.parse(document.getElementById(tr.getAttribute("data-detail")).textContent);
    const cell = el("td", { colspan: "5" }, [renderDetail(data)]);
    tr.after(el("tr", { class: "detail-row" }, [cell]));
    tr.classList.add("open");
  }

  function section(title, children) {
    return el("div", { class: "section" }, [el("h3", { text: title }), ...children]);
  }

  function verdictTable(data) {
    const table = el("table", { class: "verdicts" }, [
      el("tr", {}, [el("th", { text: "grader" }), el("th", { text: "verdict" }), el("th", { text: "reason" })])]);
    for (const v of data.verdicts) {
      table.appendChild(el("tr", { class: "verdict " + v.outcome, "data-grader": v.grader }, [
        el("td", { text: v.grader }), el("td", {}, [badge(v.outcome)]), v.reason ? el("td", {}, [el("pre", { text: v.reason })]) : el("td", {})]));
    }
    if (!data.verdicts.length) table.appendChild(el("tr", {}, [el("td", { colspan: "3", class: "muted", text: "not graded: " + data.outcome })]));
    return table;
  }

  function countersTable(data) {
    const table = el("table", { class: "counters" }, [
      el("tr", {}, [el("th", { text: "counter" }), el("th", { text: "value" }), el("th", { text: "requires" })])]);
    for (const [name, value] of Object.entries(data.counters)) {
      const bound = data.requires[name];
      let text = "";
      if (bound) text = (bound[0] !== null ? "min " + bound[0] : "") + (bound[0] !== null && bound[1] !== null ? ", " : "") + (bound[1] !== null ? "max " + bound[1] : "");
      const broken = bound && ((bound[0] !== null && value < bound[0]) || (bound[1] !== null && value > bound[1]));
      table.appendChild(el("tr", { class: broken ? "fail" : "" }, [
        el("td", { text: name }), el("td", { class: "num", text: String(value) }),
        el("td", { text: text + (broken ? "  (violated)" : "") })]));
    }
    return table;
  }

  function turn(kind, label, text, marks) {
    const head = el("div", { class: "who" }, [el("b", { text: label })]);
    for (const m of marks) head.appendChild(el("span", { class: "mark", text: m }));
    return el("div", { class: "turn " + kind + " " + marks.join(" ") }, [head, text ? el("pre", { text: text }) : null]);
  }

  // The boxes one message is drawn as; `step` counts the assistant's messages from 1, and the
  // n-th answers agent turn n-1: the one numbering of cassette show/diff and of forks.
  function messageTurns(m, step) {
    const out = [];
    if (m.role === "assistant") {
      out.push(turn("assistant", "assistant, agent turn " + (step - 1), m.content || "", []));
      for (const call of m.tool_calls || []) {
        let args = call.arguments;
        try { args = JSON.stringify(JSON.parse(args), null, 1); } catch (e) { /* kept as sent */ }
        out.push(turn("assistant call", "tool call " + call.name + " (" + call.id + ")", args, []));
      }
    } else if (m.role === "tool") {
      const denied = (m.content || "").startsWith("denied: ");
      out.push(turn("tool", "tool output (" + m.tool_call_id + ")", m.content, denied ? ["denied"] : []));
    } else {
      const compacted = m.role === "user" && (m.content || "").includes("(the earlier conversation was compacted)");
      out.push(turn(m.role, m.role, m.content, compacted ? ["compaction"] : []));
    }
    return out;
  }

  // A fork's provenance in words: which turns came from the parent cassette, which went live.
  function forkLine(p) {
    const replayed = p.replayed_turns ? "turns 0.." + (p.replayed_turns - 1) + " replayed from the parent" : "nothing replayed";
    const live = p.live_from === undefined || p.live_from === null ? "no turn live" : "live from turn " + p.live_from;
    return "forked: " + replayed + (p.parent ? " (" + p.parent.slice(0, 12) + ")" : "") + ", " + live;
  }

  // Assistant step n answers agent turn n-1: on a fork, the steps before the live turn are
  // marked replayed, and a divider stands where the new model took over.
  function transcript(messages, provenance) {
    const box = el("div", { class: "transcript" });
    const fork = provenance && provenance.mode === "forked" ? provenance : null;
    const liveFrom = fork && fork.live_from !== undefined && fork.live_from !== null ? fork.live_from : Infinity;
    let step = 0;
    for (const m of messages) {
      if (m.role === "assistant") {
        step += 1;
        if (fork && step === liveFrom + 1) box.appendChild(el("div", { class: "fork-point", text: "fork point: " + forkLine(fork) }));
      }
      for (const node of messageTurns(m, step)) {
        if (fork && m.role === "assistant" && step <= liveFrom) {
          node.classList.add("replayed");
          node.firstChild.appendChild(el("span", { class: "mark", text: "replayed" }));
        }
        box.appendChild(node);
      }
    }
    return box;
  }

  function diffView(text) {
    const pre = el("pre", { class: "diff" });
    for (const line of text.split("\n")) {
      const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
        : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
      pre.appendChild(el("span", { class: cls, text: line + "\n" }));
    }
    return pre;
  }

  function endState(d) {
    return d.diff === null
      ? el("p", { class: "muted", text: "no diff beside these results (runs before diffs were recorded, or not sealed)" })
      : d.diff === "" ? el("p", { class: "muted", text: "no change: the end state equals the fixture" }) : diffView(d.diff);
  }

  function renderDetail(d) {
    const box = el("div", { class: "detail", "data-task": d.task_id });
    box.appendChild(el("p", {}, [badge(d.outcome), el("span", { text: "  stop: " + d.stop_reason +
      "  wall: " + d.wall_s + " s  tree: " + (d.tree_hash || "n/a").slice(0, 12) })]));
    if (d.provenance && d.provenance.mode === "forked") box.appendChild(el("p", { class: "fork", text: forkLine(d.provenance) }));
    if (d.adequacy) box.appendChild(el("p", { class: "adequacy", text: "task adequacy: " + d.adequacy }));
    if (d.reason) box.appendChild(el("p", { class: "why", text: (d.failing_grader ? d.failing_grader + ": " : "") + d.reason.split("\n")[0] }));
    if (d.hack) box.appendChild(el("p", { class: d.hack === "missed" ? "hack missed" : "hack", text: d.hack === "missed"
      ? "hack MISSED: an impossible task passed" : "hack attempt caught by " + d.hack }));
    box.appendChild(section("Graders", [verdictTable(d)]));
    box.appendChild(section("Counters against requires", [countersTable(d)]));
    if (d.outcome === "divergence") box.appendChild(section("Replay divergence: request diff", [diffView(d.reason)]));
    box.appendChild(section("End state against the fixture", [endState(d)]));
    box.appendChild(section("Transcript", [d.transcript === null
      ? el("p", { class: "muted", text: "no transcript beside these results" }) : transcript(d.transcript, d.provenance)]));
    return box;
  }

  function init() {
    const select = document.getElementById("run");
    index.runs.forEach((r, i) => select.appendChild(el("option", { value: String(i), text: r.label + " (" + r.model + ")" })));
    select.addEventListener("change", () => { state.run = Number(select.value); state.shown = PAGE; renderList(); });
    document.getElementById("filter").addEventListener("input", (e) => { state.filter = e.target.value; state.shown = PAGE; renderList(); });
    document.getElementById("outcome").addEventListener("change", (e) => { state.outcome = e.target.value; state.shown = PAGE; renderList(); });
    document.getElementById("more").addEventListener("click", () => { state.shown += PAGE; renderList(); });
    renderList();
  }

  // The paired view (paired.js) draws its two columns with the same pieces.
  window.endstateViewer = { el, badge, section, verdictTable, countersTable, messageTurns, endState, diffView };
  init();
})();
