// cubesage chat page: plain JS, no build step. Streams /v1/ask/stream, renders text, a sortable table,
// the Vega-Lite chart (vendored vega-embed), provenance, and sends thumbs up/down to /v1/feedback.
"use strict";

const I18N = {
  en: {
    tagline: "Ask about your business in English or Chinese", apiKey: "API key", send: "Ask",
    placeholder: "e.g. GMV by region this quarter", showSources: "Show SQL / Cube query / sources",
    stages: { intent: "intent", retrieval: "retrieval", plan: "plan", rows: "rows", answer: "answer" },
    cubeQuery: "Cube query", sql: "SQL", sources: "Sources", bindings: "Term bindings", timings: "Timings (ms)",
    intent: "Intent", noRows: "No rows.", thanks: "Thanks for the feedback.", feedbackFailed: "Feedback failed",
    failed: "Sorry, the question could not be answered", other: "Other provenance",
  },
  zh: {
    tagline: "用中文或英文提问业务数据", apiKey: "API 密钥", send: "提问",
    placeholder: "例如：本季度各地区的GMV", showSources: "查看 SQL / Cube 查询 / 来源",
    stages: { intent: "意图", retrieval: "检索", plan: "查询计划", rows: "数据", answer: "回答" },
    cubeQuery: "Cube 查询", sql: "SQL", sources: "来源", bindings: "术语绑定", timings: "耗时（毫秒）",
    intent: "意图", noRows: "没有数据。", thanks: "感谢反馈。", feedbackFailed: "反馈失败",
    failed: "抱歉，无法回答这个问题", other: "其他溯源信息",
  },
};
const STAGES = ["intent", "retrieval", "plan", "rows", "answer"];
const CJK = /[\u3400-\u9fff]/;

const state = {
  lang: localStorage.getItem("cubesage.lang") || ((navigator.language || "en").startsWith("zh") ? "zh" : "en"),
  sessionId: (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random()).replace(/[^A-Za-z0-9-]/g, ""),
};

const $ = (sel, root = document) => root.querySelector(sel);
const t = (key) => I18N[state.lang][key];

function applyLanguage(lang) {
  state.lang = lang;
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  $("#question").placeholder = t("placeholder");
  $("#lang-toggle").textContent = lang === "zh" ? "English" : "中文";
  for (const li of document.querySelectorAll(".stages li")) li.textContent = t("stages")[li.dataset.stage];
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("#api-key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

// ---- rendering -------------------------------------------------------------------------------
function columnNames(columns) {
  return (columns || []).map((c) => (typeof c === "string" ? c : c.name || c.title || JSON.stringify(c)));
}

function rowValues(row, names) {
  if (Array.isArray(row)) return row;
  if (row && typeof row === "object") return names.map((n) => row[n]);
  return [row];
}

function formatCell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isInteger(v) ? v.toLocaleString() : v.toLocaleString(undefined, { maximumFractionDigits: 4 });
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function renderTable(tableEl, table) {
  const names = columnNames(table.columns);
  let rows = (table.rows || []).map((r) => rowValues(r, names));
  if (names.length === 0 && rows.length === 0) return;
  if (rows.length === 0) { tableEl.outerHTML = `<p class="norows">${t("noRows")}</p>`; return; }
  const sort = { col: -1, dir: 1 };
  const draw = () => {
    tableEl.innerHTML = "";
    const head = tableEl.createTHead().insertRow();
    names.forEach((name, i) => {
      const th = document.createElement("th");
      th.textContent = (table.labels && table.labels[i]) || name;
      th.title = name;
      th.dataset.col = String(i);
      if (sort.col === i) th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
      th.addEventListener("click", () => {
        sort.dir = sort.col === i ? -sort.dir : 1;
        sort.col = i;
        rows = [...rows].sort((a, b) => compare(a[i], b[i]) * sort.dir);
        draw();
      });
      head.appendChild(th);
    });
    const body = tableEl.createTBody();
    for (const r of rows) {
      const tr = body.insertRow();
      r.forEach((v) => {
        const td = tr.insertCell();
        td.textContent = formatCell(v);
        if (typeof v === "number") td.className = "num";
      });
    }
  };
  draw();
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  const na = Number(a), nb = Number(b);
  if (!Number.isNaN(na) && !Number.isNaN(nb) && a !== "" && b !== "") return na - nb;
  return String(a).localeCompare(String(b), state.lang === "zh" ? "zh" : "en");
}

async function renderChart(el, spec) {
  if (!spec || typeof window.vegaEmbed !== "function") return;
  try {
    await window.vegaEmbed(el, spec, { actions: false, renderer: "svg" });
  } catch (err) {
    el.textContent = "chart: " + err.message;
  }
}

function block(title, value) {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const pre = document.createElement("pre");
  pre.textContent = text;
  return `<h4>${title}</h4>${pre.outerHTML}`;
}

function renderProvenance(el, answer) {
  const p = answer.provenance || {};
  const sources = p.sources || p.sag_events || p.events || p.chunks || p.sag || null;
  const shown = new Set(["cube_query", "sql", "sources", "sag_events", "events", "chunks", "sag", "bindings"]);
  const rest = Object.fromEntries(Object.entries(p).filter(([k]) => !shown.has(k)));
  el.innerHTML = [
    `<p><b>${t("intent")}:</b> ${answer.intent || ""} · query_id <code>${answer.query_id}</code></p>`,
    block(t("cubeQuery"), p.cube_query),
    block(t("sql"), p.sql),
    block(t("sources"), sources),
    block(t("bindings"), p.bindings),
    block(t("timings"), answer.timings_ms),
    block(t("other"), Object.keys(rest).length ? rest : null),
  ].join("");
}

// ---- one turn --------------------------------------------------------------------------------
function newTurn(question) {
  const node = $("#turn-template").content.firstElementChild.cloneNode(true);
  $(".question", node).textContent = question;
  const stages = $(".stages", node);
  for (const name of STAGES) {
    const li = document.createElement("li");
    li.dataset.stage = name;
    li.textContent = t("stages")[name];
    stages.appendChild(li);
  }
  for (const el of node.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  $("#conversation").appendChild(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

function markStage(node, name) {
  const li = $(`.stages li[data-stage="${name}"]`, node);
  if (li) li.classList.add("done");
}

function showError(node, detail) {
  const el = $(".error", node);
  el.hidden = false;
  el.textContent = `${t("failed")}: ${detail}`;
  $(".feedback", node).hidden = true;
  $(".provenance", node).hidden = true;
}

function showAnswer(node, answer) {
  markStage(node, "answer");
  $(".text", node).textContent = answer.text;
  renderTable($(".result", node), answer.table || {});
  renderChart($(".chart", node), answer.chart);
  renderProvenance($(".prov-body", node), answer);
  node.dataset.queryId = answer.query_id;
  for (const btn of node.querySelectorAll(".feedback button")) {
    btn.addEventListener("click", () => sendFeedback(node, btn.classList.contains("up") ? "up" : "down", btn));
  }
  node.scrollIntoView({ block: "end" });
}

async function sendFeedback(node, verdict, btn) {
  const status = $(".feedback-status", node);
  try {
    const res = await fetch("/v1/feedback", {
      method: "POST", headers: headers(), body: JSON.stringify({ query_id: node.dataset.queryId, verdict }),
    });
    const body = await res.json();
    if (!res.ok) throw new Error(body.detail || res.status);
    for (const b of node.querySelectorAll(".feedback button")) b.setAttribute("aria-pressed", String(b === btn));
    status.textContent = t("thanks");
  } catch (err) {
    status.textContent = `${t("feedbackFailed")}: ${err.message}`;
  }
}

function parseEvents(buffer) {
  const events = [];
  const normalized = buffer.replace(/\r\n/g, "\n");
  const parts = normalized.split("\n\n");
  const rest = parts.pop();
  for (const part of parts) {
    let event = "message";
    const data = [];
    for (const line of part.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length) events.push({ event, data: data.join("\n") });
  }
  return { events, rest };
}

async function ask(question) {
  if (CJK.test(question) && state.lang !== "zh") applyLanguage("zh");
  else if (!CJK.test(question) && /[A-Za-z]/.test(question) && state.lang !== "en") applyLanguage("en");
  const node = newTurn(question);
  const body = { question, session_id: state.sessionId };
  const mode = $("#mode").value;
  if (mode) body.mode = mode;
  const res = await fetch("/v1/ask/stream", { method: "POST", headers: headers(), body: JSON.stringify(body) });
  if (!res.ok) {
    let detail = String(res.status);
    try { detail = (await res.json()).detail || detail; } catch (_) { /* not JSON */ }
    showError(node, detail);
    return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseEvents(buffer);
    buffer = parsed.rest;
    for (const ev of parsed.events) {
      const data = JSON.parse(ev.data);
      if (ev.event === "answer") showAnswer(node, data);
      else if (ev.event === "error") showError(node, data.detail);
      else markStage(node, ev.event);
    }
  }
}

// ---- wiring ----------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  $("#api-key").value = localStorage.getItem("cubesage.apiKey") || "";
  $("#api-key").addEventListener("change", (e) => localStorage.setItem("cubesage.apiKey", e.target.value.trim()));
  $("#lang-toggle").addEventListener("click", () => {
    applyLanguage(state.lang === "zh" ? "en" : "zh");
    localStorage.setItem("cubesage.lang", state.lang);
  });
  $("#ask-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("#question");
    const question = input.value.trim();
    if (!question) return;
    input.value = "";
    $("#send").disabled = true;
    try { await ask(question); } finally { $("#send").disabled = false; input.focus(); }
  });
  applyLanguage(state.lang);
});
