// Shared by the chat page and the dashboard: API calls with the API key, the answer table (sorting, paging,
// CSV download) and the Vega-Lite chart. Plain JS, no build step; the page's own script calls these.
"use strict";

const Cubesage = (() => {
  const PAGE_SIZE = 25;
  const KEY_STORE = "cubesage.apiKey";

  function apiKey() {
    const input = document.querySelector("#api-key");
    return (input ? input.value : localStorage.getItem(KEY_STORE) || "").trim();
  }

  function headers() {
    const h = { "Content-Type": "application/json" };
    const key = apiKey();
    if (key) h.Authorization = "Bearer " + key;
    return h;
  }

  class ApiError extends Error {
    constructor(status, detail) {
      super(detail);
      this.status = status;
    }
  }

  async function call(method, path, body) {
    const init = { method, headers: headers() };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(path, init);
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (!res.ok) throw new ApiError(res.status, (data && (data.detail || data.error)) || String(res.status));
    return data;
  }

  function wireApiKey(onChange) {
    const input = document.querySelector("#api-key");
    if (!input) return;
    input.value = localStorage.getItem(KEY_STORE) || "";
    input.addEventListener("change", () => {
      localStorage.setItem(KEY_STORE, input.value.trim());
      if (onChange) onChange();
    });
  }

  // ---- table ---------------------------------------------------------------------------------
  function compare(a, b, lang) {
    if (a === b) return 0;
    if (a === null || a === undefined) return -1;
    if (b === null || b === undefined) return 1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), lang === "zh" ? "zh" : "en");
  }

  function csvText(table) {
    const quote = (v) => {
      const s = v === null || v === undefined ? "" : String(v);
      return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    const kinds = table.kinds || [];
    const head = (table.labels && table.labels.length ? table.labels : table.columns).map(quote).join(",");
    const lines = (table.rows || []).map((row, r) => row.map((v, i) =>
      quote(kinds[i] === "time" && table.display ? table.display[r][i] : v)).join(","));
    return [head, ...lines].join("\n") + "\n";
  }

  function downloadCsv(table, name) {
    const blob = new Blob(["\ufeff" + csvText(table)], { type: "text/csv;charset=utf-8" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (name || "cubesage").replace(/[^\w\u3400-\u9fff-]+/g, "_").slice(0, 80) + ".csv";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  // Renders table (the API's Table) into `root`: header titles from the model, cells as the server formatted
  // them, click a header to sort, pages of PAGE_SIZE rows, a row count, a note when the query cut rows, CSV.
  function renderTable(root, table, t, opts = {}) {
    root.innerHTML = "";
    const columns = table.columns || [];
    if (!columns.length) return;
    const display = table.display && table.display.length === (table.rows || []).length
      ? table.display : (table.rows || []).map((r) => r.map((v) => (v === null || v === undefined ? "" : String(v))));
    let order = display.map((_, i) => i);
    if (!order.length) {
      const p = document.createElement("p");
      p.className = "norows";
      p.textContent = t("noRows");
      root.appendChild(p);
      return;
    }
    const kinds = table.kinds || [];
    const sort = { col: -1, dir: 1 };
    let page = 0;
    const wrap = document.createElement("div");
    wrap.className = "table-wrap";
    const el = document.createElement("table");
    el.className = "result";
    el.setAttribute("data-testid", "result-table");
    wrap.appendChild(el);
    const bar = document.createElement("div");
    bar.className = "table-bar";
    root.append(wrap, bar);
    const pages = () => Math.max(1, Math.ceil(order.length / PAGE_SIZE));

    function draw() {
      el.innerHTML = "";
      const head = el.createTHead().insertRow();
      columns.forEach((name, i) => {
        const th = document.createElement("th");
        th.textContent = (table.labels && table.labels[i]) || name;
        th.title = name;
        if (kinds[i] === "number") th.className = "num";
        if (sort.col === i) th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
        th.addEventListener("click", () => {
          sort.dir = sort.col === i ? -sort.dir : 1;
          sort.col = i;
          order = [...order].sort((a, b) => compare(table.rows[a][i], table.rows[b][i], opts.lang) * sort.dir);
          page = 0;
          draw();
        });
        head.appendChild(th);
      });
      const body = el.createTBody();
      for (const r of order.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)) {
        const tr = body.insertRow();
        display[r].forEach((text, i) => {
          const td = tr.insertCell();
          td.textContent = text;
          if (kinds[i] === "number") td.className = "num";
        });
      }
      drawBar();
    }

    function button(label, testid, onClick, disabled) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.setAttribute("data-testid", testid);
      b.disabled = Boolean(disabled);
      b.addEventListener("click", onClick);
      return b;
    }

    function drawBar() {
      bar.innerHTML = "";
      const count = document.createElement("span");
      count.className = "row-count";
      count.setAttribute("data-testid", "row-count");
      const first = page * PAGE_SIZE + 1;
      const last = Math.min(order.length, (page + 1) * PAGE_SIZE);
      count.textContent = t("rows")(first, last, order.length);
      bar.appendChild(count);
      if (pages() > 1) {
        bar.append(button("‹", "page-prev", () => { page -= 1; draw(); }, page === 0),
          button("›", "page-next", () => { page += 1; draw(); }, page >= pages() - 1));
      }
      if (table.truncated) {
        const cut = document.createElement("span");
        cut.className = "cut";
        cut.setAttribute("data-testid", "rows-cut");
        cut.textContent = t("cut")(table.row_count, table.total_rows);
        bar.appendChild(cut);
      }
      bar.appendChild(button(t("csv"), "csv", () => downloadCsv(table, opts.name)));
    }

    draw();
  }

  // ---- chart ---------------------------------------------------------------------------------
  async function renderChart(el, spec) {
    el.innerHTML = "";
    if (!spec) return false;
    if (typeof window.vegaEmbed !== "function") {
      el.textContent = "charts are unavailable: Vega-Lite is not installed (bash answer/api/web/vendor.sh)";
      return false;
    }
    const shape = (spec.usermeta && spec.usermeta.shape) || "";
    el.dataset.shape = shape;
    el.classList.toggle("kpi", shape === "kpi");
    await window.vegaEmbed(el, spec, { actions: false, renderer: "svg" });
    return true;
  }

  // ---- dashboard tiles (this browser's localStorage, shared by the chat page and the dashboard) ----------
  const TILE_STORE = "cubesage.tiles";

  function loadTiles() {
    try { return JSON.parse(localStorage.getItem(TILE_STORE) || "[]"); } catch (_) { return []; }
  }

  function saveTiles(tiles) { localStorage.setItem(TILE_STORE, JSON.stringify(tiles)); }

  // A tile stores the Cube query (or queries) /v1/nl2cube returns for the question; `cubeQuery` (an answer's
  // own query) is used instead when given, e.g. for a follow-up that nl2cube cannot see the context of.
  async function pin(question, language, cubeQuery) {
    let tile = { id: String(Date.now()) + Math.random().toString(16).slice(2, 6), question, language,
      pinned_at: new Date().toISOString() };
    if (cubeQuery) tile.cube_query = cubeQuery;
    else {
      const res = await call("POST", "/v1/nl2cube", { question });
      if (!res.cube_query || !res.cube_query.measures) throw new ApiError(422, "the question has no Cube query");
      tile = { ...tile, cube_query: res.cube_query, cube_queries: res.cube_queries || null };
    }
    saveTiles([...loadTiles(), tile]);
    return tile;
  }

  return { ApiError, call, headers, wireApiKey, renderTable, renderChart, csvText, downloadCsv, loadTiles,
    saveTiles, pin };
})();
