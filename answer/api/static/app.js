// cubesage chat page: plain JS, no build step. Streams /v1/ask/stream (stages as they finish), renders the
// text, the Vega-Lite chart or KPI card, the table (common.js) and the provenance panel; thumbs up/down go to
// /v1/feedback; suggested questions and the catalog come from the model; conversations are kept in this
// browser (localStorage) and follow-ups share the conversation's session id.
"use strict";

const STAGES = ["intent", "retrieval", "plan", "rows", "answer"];
const CJK = /[\u3400-\u9fff]/;
const SESSION_STORE = "cubesage.sessions";
const MAX_SESSIONS = 12;
const MAX_TURNS = 20;
const $ = (sel, root = document) => root.querySelector(sel);
const t = (key) => I18n.t(key);
const newId = () => (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random())
  .replace(/[^A-Za-z0-9-]/g, "");

const state = { sessionId: newId(), catalog: null, suggestions: null };

// ---- conversations kept in this browser ------------------------------------------------------
function loadSessions() {
  try { return JSON.parse(localStorage.getItem(SESSION_STORE) || "[]"); } catch (_) { return []; }
}

function saveSessions(sessions) {
  for (let keep = sessions.length; keep > 0; keep -= 1) {
    try {
      localStorage.setItem(SESSION_STORE, JSON.stringify(sessions.slice(0, keep)));
      return;
    } catch (_) { /* over the storage quota: drop the oldest conversation and retry */ }
  }
}

function remember(question, answer) {
  const sessions = loadSessions();
  let session = sessions.find((s) => s.id === state.sessionId);
  if (!session) {
    session = { id: state.sessionId, title: question, at: new Date().toISOString(), turns: [] };
    sessions.unshift(session);
  }
  session.turns = [...session.turns, { question, answer }].slice(-MAX_TURNS);
  saveSessions(sessions.slice(0, MAX_SESSIONS));
  renderHistory();
}

function renderHistory() {
  const list = $("#sessions");
  list.innerHTML = "";
  for (const session of loadSessions()) {
    const li = document.createElement("li");
    li.className = session.id === state.sessionId ? "current" : "";
    li.setAttribute("data-testid", "session");
    const title = document.createElement("button");
    title.type = "button";
    title.textContent = session.title;
    title.addEventListener("click", () => openSession(session.id));
    const meta = document.createElement("small");
    meta.textContent = t("turns")(session.turns.length);
    li.append(title, meta);
    if (session.id === state.sessionId) {
      const turns = document.createElement("ol");
      for (const turn of session.turns) {
        const item = document.createElement("li");
        item.textContent = turn.question;
        item.setAttribute("data-testid", "history-turn");
        turns.appendChild(item);
      }
      li.appendChild(turns);
    }
    list.appendChild(li);
  }
}

function clearConversation() {
  for (const node of document.querySelectorAll("#conversation .turn")) node.remove();
}

function openSession(id) {
  const session = loadSessions().find((s) => s.id === id);
  if (!session) return;
  state.sessionId = id;
  clearConversation();
  $("#welcome").hidden = true;
  for (const turn of session.turns) showAnswer(newTurn(turn.question), turn.answer);
  renderHistory();
}

function newSession() {
  state.sessionId = newId();
  clearConversation();
  $("#welcome").hidden = false;
  renderHistory();
}

// ---- suggestions, catalog, "as of" -----------------------------------------------------------
async function loadSuggestions() {
  const box = $("#suggestions");
  try {
    const res = await Cubesage.call("GET", `/v1/suggestions?language=${I18n.lang}`);
    state.suggestions = res;
    box.innerHTML = "";
    for (const question of res.questions) {
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "chip";
      chip.setAttribute("data-testid", "suggestion");
      chip.textContent = question;
      chip.addEventListener("click", () => submit(question));
      box.appendChild(chip);
    }
    $("[data-testid=as-of]").textContent = t("asOf")(res.today, res.period);
    if (res.questions.length) $("#question").placeholder = t("example")(res.questions[0]);
  } catch (err) {
    box.textContent = err.status === 401 ? t("needKey") : String(err.message);
  }
}

async function loadCatalog() {
  const root = $("#catalog");
  try {
    state.catalog = await Cubesage.call("GET", "/v1/catalog");
    renderCatalog();
  } catch (err) {
    root.textContent = err.status === 401 ? t("needKey") : String(err.message);
  }
}

function memberItem(member) {
  const li = document.createElement("li");
  li.setAttribute("data-testid", "catalog-member");
  const name = document.createElement("button");
  name.type = "button";
  name.className = "member";
  name.textContent = member.title || member.name;
  name.title = member.name;
  name.addEventListener("click", () => {
    const input = $("#question");
    input.value = (input.value ? input.value.trim() + " " : "") + (member.title || member.name);
    input.focus();
  });
  const code = document.createElement("code");
  code.textContent = member.name + (member.format ? ` · ${member.format}` : "") + (member.type ? ` · ${member.type}` : "");
  li.append(name, code);
  if (member.description) {
    const p = document.createElement("p");
    p.textContent = member.description;
    li.appendChild(p);
  }
  return li;
}

function renderCatalog() {
  const root = $("#catalog");
  const needle = $("#catalog-filter").value.trim().toLowerCase();
  const matches = (m) => !needle || [m.name, m.title, m.description].join(" ").toLowerCase().includes(needle);
  root.innerHTML = "";
  const { cubes = [], metrics = [], dimensions = [] } = state.catalog || {};
  for (const cube of cubes) {
    const own = (list) => list.filter((m) => m.cube === cube.name && matches(m));
    const measures = own(metrics);
    const dims = own(dimensions).filter((d) => !/(^|_)id$/.test(d.name.split(".").pop()));
    if (needle && !measures.length && !dims.length && !matches(cube)) continue;
    const section = document.createElement("details");
    section.className = "cube";
    section.setAttribute("data-testid", "catalog-cube");
    section.open = Boolean(needle) || cubes.length <= 3;
    const summary = document.createElement("summary");
    summary.textContent = cube.title || cube.name;
    const about = document.createElement("p");
    about.className = "about";
    about.textContent = cube.description;
    section.append(summary, about);
    for (const [heading, list] of [[t("measures"), measures], [t("dimensions"), dims]]) {
      if (!list.length) continue;
      const h = document.createElement("h4");
      h.textContent = heading;
      const ul = document.createElement("ul");
      list.forEach((m) => ul.appendChild(memberItem(m)));
      section.append(h, ul);
    }
    root.appendChild(section);
  }
}

// ---- provenance ------------------------------------------------------------------------------
function section(title, testid, content) {
  if (content === null || content === undefined || content === "" || (Array.isArray(content) && !content.length)) {
    return null;
  }
  const div = document.createElement("div");
  div.className = "prov-section";
  div.setAttribute("data-testid", testid);
  const h = document.createElement("h4");
  h.textContent = title;
  div.appendChild(h);
  if (content instanceof Node) div.appendChild(content);
  else {
    const pre = document.createElement("pre");
    pre.textContent = typeof content === "string" ? content : JSON.stringify(content, null, 2);
    div.appendChild(pre);
  }
  return div;
}

function bindingTable(bindings) {
  if (!bindings || !bindings.length) return null;
  const table = document.createElement("table");
  table.className = "mini";
  const head = table.createTHead().insertRow();
  for (const h of [t("term"), t("member"), t("engine")]) {
    head.appendChild(Object.assign(document.createElement("th"), { textContent: h }));
  }
  for (const b of bindings) {
    const row = table.insertRow();
    const member = (b.mapped_asset_id || "").replace(/^[a-z]+:/, "") + (b.filter_value ? ` = ${b.filter_value}` : "");
    const term = b.matched && b.matched !== b.canonical_term ? `${b.matched} → ${b.canonical_term}` : b.canonical_term;
    for (const v of [term || "", member, b.source || ""]) row.insertCell().textContent = v;
  }
  return table;
}

function passageList(passages) {
  if (!passages || !passages.length) return null;
  const ol = document.createElement("ol");
  ol.className = "passages";
  for (const p of passages) {
    const li = document.createElement("li");
    const b = document.createElement("b");
    b.textContent = p.title || p.source;
    const src = document.createElement("small");
    src.textContent = ` ${p.table} · ${p.source}`;
    const text = document.createElement("p");
    text.textContent = p.text;
    li.append(b, src, text);
    ol.appendChild(li);
  }
  return ol;
}

function timingBars(timings) {
  const entries = Object.entries(timings || {}).filter(([, v]) => typeof v === "number");
  if (!entries.length) return null;
  const total = timings.total || Math.max(...entries.map(([, v]) => v));
  const ul = document.createElement("ul");
  ul.className = "timings";
  for (const [name, ms] of entries) {
    const li = document.createElement("li");
    const bar = document.createElement("span");
    bar.className = "bar";
    bar.style.width = `${Math.max(1, Math.min(100, (ms / total) * 100))}%`;
    li.append(Object.assign(document.createElement("span"), { className: "name", textContent: name }), bar,
      Object.assign(document.createElement("span"), { className: "ms", textContent: `${ms.toFixed(1)} ${t("ms")}` }));
    ul.appendChild(li);
  }
  return ul;
}

function renderProvenance(el, answer) {
  const p = answer.provenance || {};
  const shown = new Set(["cube_query", "sql", "bindings", "passages", "timings_ms", "intent", "intent_confidence",
    "intent_reasons"]);
  const rest = Object.fromEntries(Object.entries(p).filter(([k, v]) => !shown.has(k) && v !== null
    && !(Array.isArray(v) && !v.length)));
  const intent = `${answer.intent || ""} · ${t("confidence")} ${p.intent_confidence ?? ""}` +
    (p.intent_reasons && p.intent_reasons.length ? ` · ${t("reasons")}: ${p.intent_reasons.join("; ")}` : "") +
    ` · query_id ${answer.query_id}`;
  el.innerHTML = "";
  for (const node of [
    section(t("intent"), "prov-intent", intent),
    section(t("bindings"), "prov-bindings", bindingTable(p.bindings)),
    section(t("cubeQuery"), "prov-cube-query", p.cube_query),
    section(t("sql"), "prov-sql", Array.isArray(p.sql) ? p.sql.join("\n;\n") : p.sql),
    section(t("passages"), "prov-passages", passageList(p.passages)),
    section(t("timings"), "prov-timings", timingBars(answer.timings_ms || p.timings_ms)),
    section(t("other"), "prov-other", Object.keys(rest).length ? rest : null),
  ]) if (node) el.appendChild(node);
}

// ---- one turn --------------------------------------------------------------------------------
function newTurn(question) {
  const node = $("#turn-template").content.firstElementChild.cloneNode(true);
  $(".q", node).textContent = question;
  const stages = $(".stages", node);
  for (const name of STAGES) {
    const li = document.createElement("li");
    li.dataset.stage = name;
    li.textContent = t("stages")[name];
    stages.appendChild(li);
  }
  for (const el of node.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  node.dataset.question = question;
  node.dataset.started = String(performance.now());
  $("#conversation").appendChild(node);
  $("#welcome").hidden = true;
  node.scrollIntoView({ block: "end" });
  return node;
}

function markStage(node, name, data) {
  const li = $(`.stages li[data-stage="${name}"]`, node);
  if (!li || li.classList.contains("done")) return;
  li.classList.add("done");
  const ms = performance.now() - Number(node.dataset.started || performance.now());
  const detail = name === "intent" && data && data.intent ? `: ${data.intent}`
    : name === "rows" && data && data.row_count !== undefined ? `: ${data.row_count}` : "";
  li.textContent = `${t("stages")[name]}${detail} · ${Math.round(ms)} ${t("ms")}`;
}

function showError(node, detail, status) {
  const el = $(".error", node);
  el.hidden = false;
  el.textContent = status === 401 ? t("needKey") : `${t("failed")}: ${detail}`;
  $(".actions", node).hidden = true;
  $(".provenance", node).hidden = true;
  if (status === 401) $("#api-key").focus();
}

function showAnswer(node, answer) {
  for (const name of STAGES) markStage(node, name, null);
  $(".text", node).textContent = answer.text;
  const follow = (answer.provenance || {}).follow_up_of;
  if (follow) {
    const badge = $(".follow-up", node);
    badge.hidden = false;
    badge.textContent = t("followUp")(follow);
  }
  Cubesage.renderTable($(".table-root", node), answer.table || {}, t, { lang: I18n.lang, name: answer.question });
  Cubesage.renderChart($(".chart", node), answer.chart).catch((err) => {
    $(".chart", node).textContent = "chart: " + err.message;
  });
  renderProvenance($(".prov-body", node), answer);
  node.dataset.queryId = answer.query_id;
  for (const btn of node.querySelectorAll(".actions button.up, .actions button.down")) {
    btn.addEventListener("click", () => sendFeedback(node, btn.classList.contains("up") ? "up" : "down", btn));
  }
  $(".pin", node).hidden = !(answer.provenance || {}).cube_query;
  $(".pin", node).addEventListener("click", () => pinTurn(node, answer));
}

async function sendFeedback(node, verdict, btn) {
  const status = $(".feedback-status", node);
  try {
    const body = await Cubesage.call("POST", "/v1/feedback", { query_id: node.dataset.queryId, verdict });
    for (const b of node.querySelectorAll(".actions button.up, .actions button.down")) {
      b.setAttribute("aria-pressed", String(b === btn));
    }
    const reply = body && (body.message || body.status || "");
    status.textContent = `${t("thanks")}${reply ? " " + reply : ""}`;
  } catch (err) {
    status.textContent = `${t("feedbackFailed")}: ${err.message}`;
  }
}

async function pinTurn(node, answer) {
  const status = $(".pin-status", node);
  const prov = answer.provenance || {};
  try {
    await Cubesage.pin(answer.question, I18n.lang, prov.follow_up_of ? prov.cube_query : null);
    status.innerHTML = "";
    const link = Object.assign(document.createElement("a"), { href: "/dashboard", textContent: t("pinned") });
    status.appendChild(link);
  } catch (err) {
    status.textContent = `${t("pinFailed")}: ${err.message}`;
  }
}

function parseEvents(buffer) {
  const events = [];
  const parts = buffer.replace(/\r\n/g, "\n").split("\n\n");
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
  if (CJK.test(question) && I18n.lang !== "zh") switchLanguage("zh");
  else if (!CJK.test(question) && /[A-Za-z]/.test(question) && I18n.lang !== "en") switchLanguage("en");
  const node = newTurn(question);
  const body = { question, session_id: state.sessionId };
  const mode = $("#mode").value;
  if (mode) body.mode = mode;
  const res = await fetch("/v1/ask/stream", { method: "POST", headers: Cubesage.headers(), body: JSON.stringify(body) });
  if (!res.ok) {
    let detail = String(res.status);
    try { detail = (await res.json()).detail || detail; } catch (_) { /* not JSON */ }
    showError(node, detail, res.status);
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
      if (ev.event === "answer") {
        showAnswer(node, data);
        remember(question, data);
      } else if (ev.event === "error") showError(node, data.detail, data.status_code);
      else markStage(node, ev.event, data);
    }
  }
}

async function submit(question) {
  $("#send").disabled = true;
  try { await ask(question); } finally { $("#send").disabled = false; $("#question").focus(); }
}

// ---- wiring ----------------------------------------------------------------------------------
function switchLanguage(lang) {
  I18n.apply(lang);
  $("#question").placeholder = t("placeholder");
  $("#catalog-filter").placeholder = t("filter");
  for (const li of document.querySelectorAll(".stages li:not(.done)")) li.textContent = t("stages")[li.dataset.stage];
  renderHistory();
  loadSuggestions();
}

document.addEventListener("DOMContentLoaded", () => {
  Cubesage.wireApiKey(() => { loadSuggestions(); loadCatalog(); });
  $("#lang-toggle").addEventListener("click", () => {
    I18n.toggle();
    switchLanguage(I18n.lang);
  });
  $("#catalog-toggle").addEventListener("click", () => {
    const panel = $("#catalog-panel");
    panel.hidden = !panel.hidden;
    if (!panel.hidden && !state.catalog) loadCatalog();
  });
  $("#history-toggle").addEventListener("click", () => { $("#history-panel").hidden = !$("#history-panel").hidden; });
  $("#catalog-filter").addEventListener("input", renderCatalog);
  $("#new-session").addEventListener("click", newSession);
  $("#ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("#question");
    const question = input.value.trim();
    if (!question) return;
    input.value = "";
    submit(question);
  });
  switchLanguage(I18n.lang);
});
