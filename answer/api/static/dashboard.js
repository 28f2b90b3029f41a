// cubesage dashboard: tiles pinned from questions. A tile keeps the Cube query /v1/nl2cube returned and is
// refreshed through /v1/cube/load (Cube's REST API or the built-in compiler): the question is not parsed
// again. Tiles live in this browser's localStorage, shared with the chat page's "Pin" button.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const t = (key) => I18n.t(key);

function loadBody(tile) {
  const body = { language: I18n.lang };  // the tile's heading names the question: no title in the chart
  if (tile.cube_queries && tile.cube_queries.length > 1) body.cube_queries = tile.cube_queries;
  else body.cube_query = tile.cube_query;
  return body;
}

async function refresh(node, tile) {
  const error = $("[data-testid=tile-error]", node);
  const status = $("[data-testid=tile-status]", node);
  error.hidden = true;
  status.textContent = "…";
  node.classList.add("loading");
  try {
    const res = await Cubesage.call("POST", "/v1/cube/load", loadBody(tile));
    await Cubesage.renderChart($(".chart", node), res.chart);
    Cubesage.renderTable($(".table-root", node), res.table, t, { lang: I18n.lang, name: tile.question });
    $("[data-testid=tile-table-toggle]", node).textContent = t("rows")(1, res.table.row_count, res.table.row_count);
    status.textContent = t("refreshedAt")(new Date().toLocaleTimeString(), res.backend);
    node.dataset.refreshed = String(Date.now());
    node.dataset.backend = res.backend;
  } catch (err) {
    error.hidden = false;
    error.textContent = err.status === 401 ? t("needKey") : err.message;
    status.textContent = "";
  } finally {
    node.classList.remove("loading");
  }
}

function renderTile(tile) {
  const node = $("#tile-template").content.firstElementChild.cloneNode(true);
  for (const el of node.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  node.dataset.tileId = tile.id;
  $(".tile-title", node).textContent = tile.question;
  $(".tile-query", node).textContent = JSON.stringify(tile.cube_queries || tile.cube_query, null, 2);
  $(".refresh", node).addEventListener("click", () => refresh(node, tile));
  $(".remove", node).addEventListener("click", () => {
    Cubesage.saveTiles(Cubesage.loadTiles().filter((x) => x.id !== tile.id));
    node.remove();
    $("#empty-board").hidden = Cubesage.loadTiles().length > 0;
  });
  $("#board").appendChild(node);
  $("#empty-board").hidden = true;
  return refresh(node, tile);
}

function renderBoard() {
  for (const node of document.querySelectorAll(".tile")) node.remove();
  const tiles = Cubesage.loadTiles();
  $("#empty-board").hidden = tiles.length > 0;
  return Promise.all(tiles.map(renderTile));
}

document.addEventListener("DOMContentLoaded", () => {
  I18n.apply(I18n.lang);
  $("#pin-question").placeholder = t("placeholder");
  Cubesage.wireApiKey(renderBoard);
  $("#lang-toggle").addEventListener("click", () => {
    I18n.toggle();
    $("#pin-question").placeholder = t("placeholder");
    renderBoard();
  });
  $("#refresh-all").addEventListener("click", () => {
    for (const node of document.querySelectorAll(".tile")) {
      const tile = Cubesage.loadTiles().find((x) => x.id === node.dataset.tileId);
      if (tile) refresh(node, tile);
    }
  });
  $("#pin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("#pin-question");
    const question = input.value.trim();
    if (!question) return;
    $("#pin-error").textContent = "";
    $("#pin-send").disabled = true;
    try {
      const tile = await Cubesage.pin(question, I18n.lang, null);
      input.value = "";
      await renderTile(tile);
    } catch (err) {
      $("#pin-error").textContent = `${t("pinFailed")}: ${err.status === 401 ? t("needKey") : err.message}`;
    } finally {
      $("#pin-send").disabled = false;
    }
  });
  renderBoard();
});
