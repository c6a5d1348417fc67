// phonepilot's page: start tasks, list them, and follow one live through
// the event stream (EventSource), drawing each step's Scene as a wireframe
// from element bounds. No screenshots: the API never has any.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const TERMINAL = new Set(["completed", "failed", "cancelled", "interrupted"]);

let token = localStorage.getItem("phonepilot.token") || "";
let current = null; // {id, source, status}

// api calls the JSON API; on 401 it asks for the token once and retries.
async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  if (resp.status === 401) {
    const t = prompt("This phonepilot server needs its token:");
    if (t) {
      token = t.trim();
      localStorage.setItem("phonepilot.token", token);
      return api(method, path, body);
    }
  }
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const e = (data && data.error) || { message: resp.statusText };
    const err = new Error(e.field ? `${e.field}: ${e.message}` : e.message);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") n.className = v;
    else n.setAttribute(k, v);
  }
  for (const c of children) if (c != null) n.append(c);
  return n;
}

function badge(status) {
  return el("span", { class: "badge " + status }, status);
}

function ms(ns) {
  if (!ns) return "0 ms";
  const v = ns / 1e6;
  return v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;
}

// ---- task list -------------------------------------------------------------

async function refreshList() {
  try {
    const page = await api("GET", "/v1/tasks?limit=50");
    const list = $("task-list");
    list.replaceChildren(...page.tasks.map((t) => {
      const li = el("li", { "data-id": t.id, title: t.goal }, badge(t.status), el("span", { class: "goal" }, t.goal));
      if (current && current.id === t.id) li.classList.add("current");
      li.addEventListener("click", () => open(t.id, true));
      return li;
    }));
  } catch (e) {
    console.warn("task list:", e.message);
  }
}

async function refreshDevices() {
  try {
    const { devices } = await api("GET", "/v1/devices");
    $("device-list").replaceChildren(...devices.map((d) => el("option", { value: d.name })));
  } catch (e) {
    console.warn("devices:", e.message);
  }
}

// ---- starting a task -------------------------------------------------------

$("new-task").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const err = $("form-error");
  err.hidden = true;
  $("start").disabled = true;
  try {
    const task = await api("POST", "/v1/tasks", {
      goal: $("goal").value, device: $("device").value, planner: $("planner").value,
    });
    await refreshList();
    open(task.id, true);
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
  } finally {
    $("start").disabled = false;
  }
});

// ---- one task --------------------------------------------------------------

function showTask(t) {
  $("detail-empty").hidden = true;
  $("task").hidden = false;
  $("task-goal").textContent = t.goal;
  const st = $("task-status");
  st.className = "badge " + t.status;
  st.textContent = t.status;
  $("task-meta").textContent = `${t.device} · ${t.planner} planner · ${t.id}` +
    (t.usage && t.usage.input_tokens ? ` · ${t.usage.input_tokens}+${t.usage.output_tokens} tokens` : "");
  $("task-reason").textContent = t.reason || "";
  $("cancel").hidden = TERMINAL.has(t.status);
  if (TERMINAL.has(t.status)) $("task-live").textContent = "";
  if (current) current.status = t.status;
  for (const li of $("task-list").children) li.classList.toggle("current", li.dataset.id === t.id);
}

async function open(id, push) {
  if (current && current.source) current.source.close();
  current = { id, source: null, status: "" };
  if (push) history.pushState({ id }, "", "/tasks/" + id);
  $("steps").replaceChildren();
  $("task-live").textContent = "";
  let t;
  try {
    t = await api("GET", "/v1/tasks/" + id);
  } catch (e) {
    $("detail-empty").hidden = false;
    $("detail-empty").textContent = e.message;
    $("task").hidden = true;
    return;
  }
  if (!current || current.id !== id) return;
  showTask(t);
  follow(id);
}

// follow subscribes to the task's events. The stream replays everything
// recorded so far, so the timeline is built from it alone; EventSource
// resumes with Last-Event-ID on its own after a network hiccup.
function follow(id) {
  const q = token ? "?access_token=" + encodeURIComponent(token) : "";
  const src = new EventSource(`/v1/tasks/${id}/events${q}`);
  current.source = src;
  const mine = () => current && current.id === id;
  src.addEventListener("step_started", (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data);
    $("task-live").textContent = `step ${d.step} running…`;
  });
  src.addEventListener("attempt", (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data);
    const a = d.data || {};
    $("task-live").textContent = `step ${d.step}: attempt ${a.number || ""} ${a.result || ""}`;
  });
  src.addEventListener("step_finished", (e) => {
    if (!mine()) return;
    addStep(JSON.parse(e.data));
    $("task-live").textContent = "";
  });
  src.addEventListener("status", async (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data).data || {};
    if (d.status && d.status !== current.status) {
      try { showTask(await api("GET", "/v1/tasks/" + id)); } catch (_) { /* next event retries */ }
      refreshList();
    }
  });
  src.addEventListener("end", async () => {
    src.close();
    if (!mine()) return;
    try { showTask(await api("GET", "/v1/tasks/" + id)); } catch (_) { /* shown already */ }
    refreshList();
  });
}

$("cancel").addEventListener("click", async () => {
  if (!current) return;
  $("cancel").disabled = true;
  try {
    showTask(await api("POST", `/v1/tasks/${current.id}/cancel`));
  } catch (e) {
    $("task-reason").textContent = e.message;
  } finally {
    $("cancel").disabled = false;
  }
});

function addStep(s) {
  const id = "step-" + s.number;
  const args = s.call && s.call.args ? s.call.args : {};
  const attempts = s.attempts || [];
  const last = attempts.length ? attempts[attempts.length - 1].result : "";
  const card = el("li", { class: "step", id },
    wireframe(s.scene, args.element),
    el("div", { class: "info" },
      el("div", { class: "title" }, `${s.number}. ${s.intent || s.call.name}`),
      el("code", {}, `${s.call.name} ${JSON.stringify(args)}`),
      el("div", { class: "outcome" }, badge(s.status), " ", s.reason || last || ""),
      el("div", { class: "timing" },
        `${ms(s.duration_ns)} · ${attempts.length} attempt${attempts.length === 1 ? "" : "s"}` +
        (s.usage && s.usage.input_tokens ? ` · ${s.usage.input_tokens}+${s.usage.output_tokens} tokens` : ""))));
  const old = $(id);
  if (old) old.replaceWith(card);
  else $("steps").append(card);
}

// wireframe draws a Scene (docs/scene-json.md) as boxes at their bounds;
// the element the step acted on is highlighted.
function wireframe(scene, acted) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "wireframe");
  if (!scene || !scene.width) {
    svg.setAttribute("viewBox", "0 0 90 160");
    return svg;
  }
  const W = scene.width, H = scene.height;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `screen of ${scene.package || "the phone"}`);
  const stroke = Math.max(2, W / 300);
  const font = Math.max(18, H / 60);
  let actedRect = null;
  for (const e of scene.elements || []) {
    const [l, t, r, b] = e.bounds || [0, 0, 0, 0];
    if (r <= l || b <= t) continue;
    const flags = e.flags || [];
    const rect = document.createElementNS(SVG, "rect");
    let cls = "el";
    if (flags.includes("editable")) cls += " editable";
    else if (flags.includes("clickable")) cls += " clickable";
    rect.setAttribute("x", l);
    rect.setAttribute("y", t);
    rect.setAttribute("width", r - l);
    rect.setAttribute("height", b - t);
    rect.setAttribute("stroke-width", stroke);
    rect.setAttribute("class", cls);
    const label = e.text || e.desc;
    if (label) {
      const title = document.createElementNS(SVG, "title");
      title.textContent = `[${e.index}] ${label}`;
      rect.append(title);
    }
    svg.append(rect);
    if (e.index === acted) actedRect = rect;
    if (label && b - t >= font && r - l >= font * 2) {
      const text = document.createElementNS(SVG, "text");
      text.setAttribute("x", l + stroke * 2);
      text.setAttribute("y", t + Math.min(b - t, font * 1.1));
      text.setAttribute("font-size", font);
      text.textContent = label.length > 24 ? label.slice(0, 23) + "…" : label;
      svg.append(text);
    }
  }
  if (actedRect) {
    // Drawn again on top so nothing hides it.
    const hit = actedRect.cloneNode(true);
    hit.setAttribute("class", actedRect.getAttribute("class") + " acted");
    hit.setAttribute("stroke-width", stroke * 3);
    svg.append(hit);
  }
  return svg;
}

// ---- routing ---------------------------------------------------------------

function route() {
  const m = location.pathname.match(/^\/tasks\/([^/]+)$/);
  if (m) open(decodeURIComponent(m[1]), false);
}

window.addEventListener("popstate", route);
$("home").addEventListener("click", (ev) => {
  ev.preventDefault();
  if (current && current.source) current.source.close();
  current = null;
  history.pushState({}, "", "/");
  $("task").hidden = true;
  $("detail-empty").hidden = false;
  $("detail-empty").textContent = "Start a task or pick one from the list.";
  refreshList();
});

refreshDevices();
refreshList();
route();
setInterval(refreshList, 2000);
