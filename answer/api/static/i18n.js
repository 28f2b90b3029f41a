// UI strings of the chat page and the dashboard in English and Chinese; `I18n.t(key)` in the current language.
"use strict";

const I18n = (() => {
  const STRINGS = {
    en: {
      tagline: "Ask about your business in English or Chinese", apiKey: "API key", send: "Ask",
      placeholder: "Ask about your data", example: (q) => `e.g. ${q}`, showSources: "Show SQL / Cube query / sources",
      stages: { intent: "intent", retrieval: "retrieval", plan: "plan", rows: "rows", answer: "answer" },
      cubeQuery: "Cube query", sql: "SQL", passages: "Wiki passages", bindings: "Term bindings",
      timings: "Timings (ms)", intent: "Intent", reasons: "why", noRows: "No rows.",
      thanks: "Thanks for the feedback.", feedbackFailed: "Feedback failed",
      failed: "Sorry, the question could not be answered", other: "Other provenance",
      history: "History", newSession: "New conversation", catalog: "Catalog", dashboard: "Dashboard",
      welcome: "Try one of these questions, or ask your own:", measures: "Measures", dimensions: "Dimensions",
      filter: "Filter the catalog", followUp: (q) => `follow-up of “${q}”`, turns: (n) => `${n} question${n === 1 ? "" : "s"}`,
      asOf: (d, p) => `relative dates resolve to ${d}` + (p ? ` · data ${p[0]} to ${p[1]}` : ""),
      rows: (a, b, n) => (n <= b - a + 1 ? `${n} row${n === 1 ? "" : "s"}` : `rows ${a}–${b} of ${n}`),
      cut: (n, m) => (m == null ? "the query stopped at its row limit: there are more rows"
        : `the query stopped at its row limit: ${n} of ${m} rows`), csv: "Download CSV",
      up: "▲ Helpful", down: "▼ Not helpful", pin: "Pin to dashboard", pinned: "Pinned to the dashboard", pinFailed: "Could not pin",
      needKey: "This server needs an API key: paste it into the API key field.",
      term: "term", member: "member", engine: "engine", ms: "ms", confidence: "confidence",
      tiles: "Tiles", addTile: "Pin a question", refreshAll: "Refresh all", refresh: "Refresh", remove: "Remove",
      refreshedAt: (t, b) => `refreshed ${t} via ${b}`, emptyBoard: "No tiles yet: pin a question here or from the chat page.",
      storedQuery: "Stored Cube query", back: "Chat",
    },
    zh: {
      tagline: "用中文或英文提问业务数据", apiKey: "API 密钥", send: "提问",
      placeholder: "输入关于数据的问题", example: (q) => `例如：${q}`, showSources: "查看 SQL / Cube 查询 / 来源",
      stages: { intent: "意图", retrieval: "检索", plan: "查询计划", rows: "数据", answer: "回答" },
      cubeQuery: "Cube 查询", sql: "SQL", passages: "Wiki 段落", bindings: "术语绑定", timings: "耗时（毫秒）",
      intent: "意图", reasons: "依据", noRows: "没有数据。", thanks: "感谢反馈。", feedbackFailed: "反馈失败",
      failed: "抱歉，无法回答这个问题", other: "其他溯源信息",
      history: "历史", newSession: "新对话", catalog: "数据目录", dashboard: "看板",
      welcome: "试试这些问题，或者直接提问：", measures: "指标", dimensions: "维度", filter: "筛选目录",
      followUp: (q) => `追问自“${q}”`, turns: (n) => `${n} 个问题`,
      asOf: (d, p) => `相对日期以 ${d} 为准` + (p ? ` · 数据范围 ${p[0]} 至 ${p[1]}` : ""),
      rows: (a, b, n) => (n <= b - a + 1 ? `共 ${n} 行` : `第 ${a}–${b} 行，共 ${n} 行`),
      cut: (n, m) => (m == null ? "查询在行数上限处截断：还有更多行" : `查询在行数上限处截断：显示 ${n} 行，共 ${m} 行`), csv: "下载 CSV",
      up: "▲ 有帮助", down: "▼ 没帮助", pin: "固定到看板", pinned: "已固定到看板", pinFailed: "无法固定",
      needKey: "此服务需要 API 密钥：请填入 API 密钥输入框。",
      term: "术语", member: "成员", engine: "引擎", ms: "毫秒", confidence: "置信度",
      tiles: "卡片", addTile: "固定一个问题", refreshAll: "全部刷新", refresh: "刷新", remove: "移除",
      refreshedAt: (t, b) => `${t} 经 ${b} 刷新`, emptyBoard: "还没有卡片：在这里或在问答页固定一个问题。",
      storedQuery: "已保存的 Cube 查询", back: "问答",
    },
  };
  const state = {
    lang: localStorage.getItem("cubesage.lang") || ((navigator.language || "en").startsWith("zh") ? "zh" : "en"),
  };

  function t(key) { return STRINGS[state.lang][key]; }

  function apply(lang) {
    state.lang = lang;
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    const toggle = document.querySelector("#lang-toggle");
    if (toggle) toggle.textContent = lang === "zh" ? "English" : "中文";
  }

  function toggle() {
    apply(state.lang === "zh" ? "en" : "zh");
    localStorage.setItem("cubesage.lang", state.lang);
  }

  return { t, apply, toggle, get lang() { return state.lang; } };
})();
