// phonepilot's page: start tasks, list them, and follow one live through
// the event stream (EventSource), drawing each step's Scene as a wireframe
// from element bounds. No screenshots: the API never has any.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// The words of the API (statuses, events, tones) come from GET
// /v1/lifecycle, loaded before anything else: the page spells none of them
// by hand. The events it handles are named once, in boot, through ev(),
// which fails at load when the server does not list one: a renamed event is
// an error on the page, not a handler that silently never fires.
let V = null;
let TERMINAL = new Set();
let EV = null; // the events the page handles, each checked against V at boot
let KIND = null; // the kinds of pending decision, checked the same way
function ev(name) {
  if (!V.event_types.includes(name) && name !== V.stream_end) throw new Error(`the server's vocabulary has no event "${name}"`);
  return name;
}
function kind(name) {
  if (!(V.pending_kinds || []).includes(name)) throw new Error(`the server's vocabulary has no pending kind "${name}"`);
  return name;
}
function tone(word) {
  return "tone-" + (V.tones[word] || "neutral");
}

let token = localStorage.getItem("phonepilot.token") || "";
// The approval key: a person's decisions carry it (X-Phonepilot-Approval).
// It comes in the approval link phonepilot prints when it starts
// (http://HOST/#approval=KEY): taken from the fragment, which no server
// ever sees, kept for this origin, and wiped from the address bar.
let approvalKey = localStorage.getItem("phonepilot.approval") || "";
{
  const m = /(?:^#|&)approval=([^&]+)/.exec(location.hash);
  if (m) {
    approvalKey = decodeURIComponent(m[1]);
    localStorage.setItem("phonepilot.approval", approvalKey);
    history.replaceState(null, "", location.pathname + location.search);
  }
}
let current = null; // {id, source, status}

// api calls the JSON API; on 401 it asks for the token once and retries.
// Calls that decide for a person carry the approval key; without it the
// server refuses them (403 approval_key_required) and the page asks for
// the approval link.
async function api(method, path, body, extra) {
  const headers = { "Content-Type": "application/json", ...(extra || {}) };
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  if (resp.status === 401) {
    const t = prompt("This phonepilot server needs its token:");
    if (t) {
      token = t.trim();
      localStorage.setItem("phonepilot.token", token);
      return api(method, path, body, extra);
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
  return el("span", { class: "badge " + tone(status), "data-status": status }, status);
}

function setBadge(node, status) {
  node.className = "badge " + tone(status);
  node.dataset.status = status;
  node.textContent = status;
}

function ms(ns) {
  if (!ns) return "0 ms";
  const v = ns / 1e6;
  return v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;
}

// span says how long from a to b (Dates) in the unit a person reads.
function span(a, b) {
  const s = Math.max(0, (b - a) / 1000);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 59.95) return `${s.toFixed(1)} s`;
  const r = Math.round(s); // whole seconds first: never "9 min 60 s"
  if (r < 3600) return `${Math.floor(r / 60)} min ${r % 60} s`;
  const m = Math.round(r / 60);
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

// when is a time of day, with the date when it is not today.
function when(d) {
  const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  if (d.toDateString() === new Date().toDateString()) return hm;
  return d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + hm;
}

// ran says when a task ran and how long it took (or has taken so far),
// from its created/started/finished times, and how much of that it waited
// for a person.
function ran(t) {
  if (!t.started) return t.finished ? `ended ${when(new Date(t.finished))} before it started` : `queued since ${when(new Date(t.created))}`;
  const start = new Date(t.started);
  const w = waited(t);
  const of = w >= 1000 ? ` (${span(0, w)} of it waiting for a person)` : "";
  if (!t.finished) return `started ${when(start)} · ${span(start, new Date())} so far${of}`;
  return `ran ${when(start)} · took ${span(start, new Date(t.finished))}${of}`;
}

// waited is how long a task has waited for a person, in ms: its waits that
// ended (waited_ns) and, while it waits, the one under way.
function waited(t) {
  let w = (t.waited_ns || 0) / 1e6;
  if (t.pending && t.pending.since) w += Math.max(0, Date.now() - new Date(t.pending.since));
  return w;
}

// ---- task list -------------------------------------------------------------

async function refreshList() {
  try {
    const page = await api("GET", "/v1/tasks?limit=50");
    if (page.tasks.some((t) => !tasks.has(t.id) || tasks.get(t.id).status !== t.status)) setTimeout(refreshDevices, 0);
    tasks = new Map(page.tasks.map((t) => [t.id, t]));
    const list = $("task-list");
    list.replaceChildren(...page.tasks.map((t) => {
      const li = el("li", { "data-id": t.id, title: t.goal, class: tone(t.status) },
        badge(t.status),
        el("div", { class: "what" },
          el("span", { class: "goal" }, t.goal),
          t.pending ? el("span", { class: "needs", title: needs(t.pending) }, needs(t.pending)) : null,
          t.cause ? el("span", { class: "cause", title: t.reason || t.cause }, t.cause + (t.reason ? ": " + t.reason : "")) : null,
          el("span", { class: "when", title: `created ${t.created}` + (t.started ? `, started ${t.started}` : "") + (t.finished ? `, finished ${t.finished}` : "") }, ran(t))));
      if (t.pending) li.dataset.pending = t.pending.kind;
      if (current && current.id === t.id) li.classList.add("current");
      li.addEventListener("click", () => open(t.id, true));
      return li;
    }));
  } catch (e) {
    console.warn("task list:", e.message);
  }
}

// needs says in a few words what a waiting task needs from a person.
function needs(p) {
  if (p.kind === KIND.question) return "asks you: " + (p.question || "");
  const what = p.element && p.element.label ? ` “${p.element.label}”` : "";
  return `needs your approval: ${p.category || "action"}${what}`;
}

// tasks are the tasks of the list's last page, by id.
let tasks = new Map();

async function refreshDevices() {
  try {
    const { devices } = await api("GET", "/v1/devices");
    $("device-list").replaceChildren(...devices.map((d) => el("option", { value: d.name })));
    // Each device says what it is doing: the name and its state on the
    // first line, the task on it (running or waiting for a person, with its
    // status) and the tasks queued for it, then (a farm's) the host and
    // heartbeat and the labels. An offline one is dimmed: nothing starts there.
    $("device-rows").replaceChildren(...devices.map((d) => {
      const labels = Object.entries(d.labels || {}).map(([k, v]) => `${k}=${v}`).join(" ");
      const where = [d.host ? `${d.worker}@${d.host}` : "",
        d.heartbeat ? `heartbeat ${new Date(d.heartbeat).toLocaleTimeString()}` : ""].filter(Boolean).join(" · ");
      const state = d.state || "";
      const queue = d.queued_tasks || [];
      const li = el("li", { class: "device state-" + (state || "unknown"), "data-device": d.name, "data-state": state, title: labels },
        el("div", { class: "device-head" }, el("strong", { class: "device-name" }, d.name),
          state ? el("span", { class: "device-state" }, state) : ""),
        d.task ? deviceTask(d.task, "device-task") : el("div", { class: "device-idle muted" }, "no task on it"),
        queue.length ? el("div", { class: "device-queue" }, el("span", { class: "muted" }, `${queue.length} ${queue[0].status}: `),
          ...queue.map((t) => deviceTask(t, "next-task"))) : null,
        where ? el("div", { class: "device-where muted" }, where) : "",
        labels ? el("div", { class: "device-labels muted" }, labels) : "");
      if (d.task) li.dataset.task = d.task.id;
      return li;
    }));
  } catch (e) {
    console.warn("devices:", e.message);
  }
}

// deviceTask is a task in a device's row: its status and goal, opening it
// when clicked.
function deviceTask(t, cls) {
  const n = el("div", { class: cls, "data-id": t.id, title: t.goal }, badge(t.status), " ", el("span", { class: "goal" }, t.goal));
  n.addEventListener("click", () => open(t.id, true));
  return n;
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
  setBadge($("task-status"), t.status);
  $("task-meta").textContent = `${t.device} · ${t.planner} planner · ${t.id} · ${ran(t)}` +
    (t.usage && t.usage.input_tokens ? ` · ${t.usage.input_tokens}+${t.usage.output_tokens} tokens` : "");
  $("task-reason").textContent = (t.cause ? t.cause + ": " : "") + (t.reason || "");
  showFinal(t);
  // A fetched task without a pending decision hides the card only once it
  // has ended: a fetch answered just before a new request must not hide it.
  // Decisions hide it through their events and the POST's answer.
  if (t.pending) showPending(t.id, t.pending);
  else if (TERMINAL.has(t.status)) decided("");
  $("cancel").hidden = TERMINAL.has(t.status);
  if (TERMINAL.has(t.status)) $("task-live").textContent = "";
  if (current) current.status = t.status;
  for (const li of $("task-list").children) li.classList.toggle("current", li.dataset.id === t.id);
}

async function open(id, push) {
  if (current && current.source) current.source.close();
  current = { id, source: null, status: "" };
  hidePending();
  pendingGone.clear();
  if (push) history.pushState({ id }, "", "/tasks/" + id);
  $("steps").replaceChildren();
  $("task-live").textContent = "";
  let t;
  const n = ++fetchSeq;
  try {
    t = await api("GET", "/v1/tasks/" + id);
  } catch (e) {
    $("detail-empty").hidden = false;
    $("detail-empty").textContent = e.message;
    $("task").hidden = true;
    return;
  }
  if (!current || current.id !== id) return;
  if (n === fetchSeq) showTask(t);
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
  src.addEventListener(EV.stepStarted, (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data);
    if (!shownPending) $("task-live").textContent = `step ${d.step} running…`; // a waiting card says what the task waits for
  });
  src.addEventListener(EV.attempt, (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data);
    const a = d.data || {};
    if (!shownPending) $("task-live").textContent = `step ${d.step}: attempt ${a.number || ""} ${a.result || ""}`;
  });
  src.addEventListener(EV.stepFinished, (e) => {
    if (!mine()) return;
    addStep(JSON.parse(e.data));
    if (!shownPending) $("task-live").textContent = "";
  });
  // A pending decision appears when it is requested and goes when it is
  // decided, by this page or anyone else (the CLI, another browser).
  const asked = (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data).data || {};
    if (d.pending) showPending(id, d.pending);
  };
  src.addEventListener(EV.approvalRequested, asked);
  src.addEventListener(EV.questionAsked, asked);
  src.addEventListener(EV.approvalDecided, (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data);
    const a = d.data || {};
    decided(`step ${d.step || "?"}: ${a.approved ? "approved" : "denied"}` + (a.by ? ` by ${a.by}` : "") + (a.note ? ` — ${a.note}` : ""));
  });
  src.addEventListener(EV.questionAnswered, (e) => {
    if (!mine()) return;
    const a = JSON.parse(e.data).data || {};
    decided("answered" + (a.by ? ` by ${a.by}` : ""));
  });
  // The badge follows the status events, which come in order; the rest of
  // the task (times, reason, pending) is fetched after each of them.
  src.addEventListener(EV.status, (e) => {
    if (!mine()) return;
    const d = JSON.parse(e.data).data || {};
    if (!d.status) return;
    if (TERMINAL.has(d.status)) decided(""); // ended while waiting: cancelled, timed out
    setBadge($("task-status"), d.status);
    $("task-reason").textContent = (d.cause ? d.cause + ": " : "") + (d.reason || "");
    $("cancel").hidden = TERMINAL.has(d.status);
    current.status = d.status;
    refreshTask(id);
    refreshList();
  });
  src.addEventListener(EV.end, () => {
    src.close();
    if (!mine()) return;
    refreshTask(id);
    refreshList();
  });
}

// refreshTask fetches the task and shows it, unless a newer fetch (or a
// decision's answer) was started meanwhile: answers can arrive out of
// order, and an older one must not put back an older status.
let fetchSeq = 0;
async function refreshTask(id) {
  const n = ++fetchSeq;
  try {
    const t = await api("GET", "/v1/tasks/" + id);
    if (n === fetchSeq && current && current.id === id) showTask(t);
  } catch (_) { /* the next event fetches again */ }
}

$("cancel").addEventListener("click", async () => {
  if (!current) return;
  $("cancel").disabled = true;
  try {
    const t = await api("POST", `/v1/tasks/${current.id}/cancel`);
    fetchSeq++; // final: no fetch in flight may come back over it
    showTask(t);
  } catch (e) {
    $("task-reason").textContent = e.message;
  } finally {
    $("cancel").disabled = false;
  }
});

// ---- a pending decision ----------------------------------------------------

// shownPending is the key of the pending decision on the page (its kind,
// step and time), so that the same one arriving again (the stream's
// replay, a refresh of the task) keeps what the person has typed.
// pendingGone holds the keys of decided ones: a task fetched before the
// decision must not bring its card back.
let shownPending = "";
const pendingGone = new Set();
let expiresTimer = 0;

// The time is read to the millisecond: stores keep it to the microsecond
// or the nanosecond, and the event and the task must give the same key.
function pendingKey(p) {
  return `${p.kind}:${p.step}:${Date.parse(p.since) || p.since}`;
}

function showPending(id, p) {
  const key = pendingKey(p);
  if (pendingGone.has(key) || key === shownPending) return;
  shownPending = key;
  const question = p.kind === KIND.question;
  const box = $("pending");
  box.dataset.kind = p.kind;
  box.dataset.task = id;
  box.dataset.key = key;
  $("pending-title").textContent = question ? `Step ${p.step}: the agent asks you` : `Step ${p.step} waits for your approval`;
  const acted = p.element ? p.element.index : null;
  $("pending-screen").replaceChildren(wireframe(sceneOf(p.scene), acted));
  $("pending-category").hidden = question || !p.category;
  $("pending-category").textContent = p.category || "";
  const e = p.element;
  $("pending-element").textContent = e ? `${e.label ? `“${e.label}”` : "element"} [${e.index}]` + (e.class ? ` · ${e.class}` : "") + (e.id ? ` · ${e.id}` : "") : "";
  $("pending-reason").textContent = question ? "" : p.reason || "";
  const args = p.call && p.call.args ? p.call.args : {};
  $("pending-call").textContent = p.call ? `${p.call.name} ${JSON.stringify(args)}` : "";
  $("pending-call").hidden = question || !p.call;
  $("pending-question").textContent = question ? p.question || "" : "";
  $("approval-form").hidden = question;
  $("answer-form").hidden = !question;
  $("approval-note").value = "";
  $("answer-text").value = "";
  $("pending-error").hidden = true;
  for (const b of box.querySelectorAll("button")) b.disabled = false;
  clearInterval(expiresTimer);
  const tick = () => {
    const end = p.expires ? new Date(p.expires) : null;
    $("pending-expires").textContent = end && end > 0 ? `decide by ${when(end)} (${span(new Date(), end)} left), or the task fails` : "";
  };
  tick();
  expiresTimer = setInterval(tick, 1000);
  box.hidden = false;
  $("task-live").textContent = question ? "waiting for your answer…" : "waiting for your approval…";
}

function hidePending() {
  shownPending = "";
  clearInterval(expiresTimer);
  $("pending").hidden = true;
  delete $("pending").dataset.key;
  $("pending-screen").replaceChildren();
}

// decided removes the card of the decision just made and says who made it.
function decided(what) {
  if (shownPending) pendingGone.add(shownPending);
  hidePending();
  if (what) $("task-live").textContent = what;
}

// sceneOf reads the pending screen, which the API sends as the Scene's
// JSON (an object), or as its text when a store kept it as a string.
function sceneOf(s) {
  if (typeof s !== "string") return s;
  try { return JSON.parse(s); } catch (_) { return null; }
}

// decisionCall posts a decision with the approval key; refused for want
// of it, it asks the person for the approval link (or key) once and
// retries.
async function decisionCall(path, body) {
  try {
    return await api("POST", path, body, approvalKey ? { "X-Phonepilot-Approval": approvalKey } : {});
  } catch (e) {
    if (e.status !== 403 || !/approval key/.test(e.message)) throw e;
    const given = prompt("Deciding needs the approval link phonepilot printed when it started. Paste the link or its key:");
    const m = given && /(?:approval=)?([A-Za-z0-9_-]{16,})\s*$/.exec(given.trim());
    if (!m) throw e;
    approvalKey = m[1];
    localStorage.setItem("phonepilot.approval", approvalKey);
    return api("POST", path, body, { "X-Phonepilot-Approval": approvalKey });
  }
}

// decide posts a decision (approve, deny, answer) for the card shown; a
// 409 means someone else decided first or it expired: the page shows the
// task as it now is.
async function decide(action, body) {
  const box = $("pending");
  const id = box.dataset.task;
  const key = shownPending;
  const err = $("pending-error");
  err.hidden = true;
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  try {
    await decisionCall(`/v1/tasks/${id}/${action}`, body);
    pendingGone.add(key);
    if (current && current.id === id) {
      if (shownPending === key) decided(action === "answer" ? "answered" : action === "deny" ? "denied" : "approved");
      // The answer is the task as of the decision; the task may already
      // be further (the next step, the next pending): fetch it afresh.
      refreshTask(id);
    }
    refreshList();
  } catch (e) {
    if (e.status === 409) {
      // Someone else decided first, or it expired: say so and show the task.
      if (shownPending === key) decided("no longer pending: " + e.message);
      pendingGone.add(key);
      if (current && current.id === id) refreshTask(id);
      return;
    }
    err.textContent = e.message;
    err.hidden = false;
    for (const b of box.querySelectorAll("button")) b.disabled = false;
  }
}

// Approve and Deny are plain buttons: Enter in the note decides nothing.
$("approval-form").addEventListener("submit", (e) => e.preventDefault());
for (const action of ["approve", "deny"]) {
  $(action).addEventListener("click", () => {
    const note = $("approval-note").value.trim();
    decide(action, note ? { note } : {});
  });
}

$("answer-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("answer-text").value.trim();
  if (!text) return;
  decide("answer", { text });
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
  else $("steps").insertBefore(card, $("final-screen")); // the final screen stays last
}

// showFinal draws the task's final Scene (the screen after its last
// action, same JSON as a step's scene) as the last card.
function showFinal(t) {
  const old = $("final-screen");
  if (!t.final_scene || !t.final_scene.width) {
    if (old) old.remove();
    return;
  }
  const card = el("li", { class: "step final", id: "final-screen" },
    wireframe(t.final_scene, null),
    el("div", { class: "info" },
      el("div", { class: "title" }, "final screen"),
      el("div", { class: "outcome" }, `after the last action · ${t.final_scene.package || "unknown app"}`)));
  if (old) old.replaceWith(card);
  else $("steps").append(card);
}

// wireframe draws a Scene (docs/scene-json.md) as boxes at their bounds;
// the element the step acted on is highlighted.
//
// Layers: boxes are drawn in dump order, so a later box lies over an
// earlier one. A box that covers an earlier sibling (a dialog over the page,
// a window over the app, a button floating over a list) starts a layer that
// is painted solid, so the page below does not show through it; a layer
// that covers the whole screen is a modal's scrim and dims the page.
//
// Labels: the SVG is WIREFRAME_PX wide on the page whatever the screen's
// resolution, so the font is chosen in screen pixels from that width and
// labels are clipped to their box.
const WIREFRAME_PX = 200;
const LABEL_PX = 11;

function wireframe(scene, acted) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "wireframe");
  svg.setAttribute("width", WIREFRAME_PX);
  if (!scene || !scene.width) {
    svg.setAttribute("viewBox", "0 0 90 160");
    svg.setAttribute("height", Math.round(WIREFRAME_PX * 160 / 90));
    return svg;
  }
  const W = scene.width, H = scene.height;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("height", Math.round(WIREFRAME_PX * H / W));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `screen of ${scene.package || "the phone"}`);
  const unit = W / WIREFRAME_PX; // scene pixels per page pixel
  const stroke = Math.max(1, unit);
  const font = LABEL_PX * unit;
  const els = scene.elements || [];
  const layer = layers(els);
  const pad = stroke * 3;
  const shown = labels(els, font, pad);
  const screen = W * H;
  let actedRect = null;
  for (const e of els) {
    const [l, t, r, b] = e.bounds || [0, 0, 0, 0];
    if (r <= l || b <= t) continue;
    const flags = e.flags || [];
    const covers = area([l, t, r, b], [0, 0, W, H]) >= 0.9 * screen;
    const rect = document.createElementNS(SVG, "rect");
    let cls = "el";
    if (layer[e.index] === e.index && covers) cls = "scrim";
    else if (layer[e.index] >= 0 && !covers) cls += " solid";
    if (flags.includes("editable")) cls += " editable";
    else if (flags.includes("clickable")) cls += " clickable";
    rect.setAttribute("x", l);
    rect.setAttribute("y", t);
    rect.setAttribute("width", r - l);
    rect.setAttribute("height", b - t);
    rect.setAttribute("stroke-width", stroke);
    rect.setAttribute("class", cls);
    rect.dataset.index = e.index;
    const label = e.text || e.desc;
    if (label) {
      const title = document.createElementNS(SVG, "title");
      title.textContent = `[${e.index}] ${label}`;
      rect.append(title);
    }
    svg.append(rect);
    if (e.index === acted) actedRect = rect;
    if (shown[e.index]) {
      const text = document.createElementNS(SVG, "text");
      text.setAttribute("x", l + pad);
      text.setAttribute("y", (t + b) / 2 + font * 0.35); // one line, centred in its box
      text.setAttribute("font-size", font);
      text.dataset.index = e.index;
      text.textContent = shown[e.index];
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

// layers maps each element's index to the index of the layer root it lies
// in, or -1 for the page at the bottom. A layer root is an element at
// least half of which lies over an earlier sibling (window roots are
// siblings of each other).
function layers(els) {
  const out = new Array(els.length).fill(-1);
  const siblings = new Map(); // parent index -> boxes drawn so far
  for (const e of els) {
    const bx = e.bounds || [0, 0, 0, 0];
    const own = area(bx, bx);
    const prev = siblings.get(e.parent) || [];
    let over = false;
    if (own > 0) for (const p of prev) if (area(bx, p) >= own / 2) { over = true; break; }
    prev.push(bx);
    siblings.set(e.parent, prev);
    const up = e.parent >= 0 && e.parent < out.length ? out[e.parent] : -1;
    out[e.index] = over ? e.index : up;
  }
  return out;
}

// labels returns, per index, the label text drawn in the element's box
// ("" for none): its text or description, clipped to the box, when the box
// is tall enough for a line (a 60 px row of a 1080×2400 screen is). A box
// some of whose descendants draw a label leaves the words to them (a search
// bar's "Search" would otherwise print over its field's "Search products").
function labels(els, font, pad) {
  const out = new Array(els.length).fill("");
  const inside = new Array(els.length).fill(false);
  for (let i = els.length - 1; i >= 0; i--) {
    const e = els[i];
    const [l, t, r, b] = e.bounds || [0, 0, 0, 0];
    const label = e.text || e.desc;
    if (label && !inside[i] && r > l && b - t >= font * 0.95) out[i] = fit(label.replace(/\s+/g, " "), (r - l - 2 * pad) / font);
    const p = e.parent;
    if (p >= 0 && p < els.length && (out[i] || inside[i])) inside[p] = true;
  }
  return out;
}

// area is the area of the intersection of two [l, t, r, b] boxes.
function area(a, b) {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  return w > 0 && h > 0 ? w * h : 0;
}

// fit shortens s to about ems font-sizes of width (wide CJK characters
// count 1, others about 0.58), with an ellipsis; "" when not even three
// characters fit.
function fit(s, ems) {
  let used = 0, out = "";
  for (const ch of s) {
    const w = ch.codePointAt(0) >= 0x2e80 ? 1 : 0.58;
    if (used + w > ems) {
      if (out.length < 3) return "";
      return out.slice(0, -1) + "…";
    }
    used += w;
    out += ch;
  }
  return out;
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

// boot loads the vocabulary first: without it the page cannot tell a
// finished task from a running one, so it says so instead of guessing.
async function boot() {
  try {
    V = await api("GET", "/v1/lifecycle");
    TERMINAL = new Set(V.terminal);
    if (!V.stream_end) throw new Error("the server's vocabulary has no stream_end");
    EV = {
      stepStarted: ev("step_started"), attempt: ev("attempt"), stepFinished: ev("step_finished"), status: ev("status"),
      approvalRequested: ev("approval_requested"), approvalDecided: ev("approval_decided"),
      questionAsked: ev("question_asked"), questionAnswered: ev("question_answered"), end: V.stream_end,
    };
    KIND = { approval: kind("approval"), question: kind("question") };
  } catch (e) {
    $("detail-empty").textContent = "This page cannot work with this server: " + e.message;
    $("start").disabled = true;
    document.body.dataset.boot = "refused"; // the page's own state, not a task's
    return;
  }
  document.body.dataset.boot = "ready"; // tests wait for this
  refreshDevices();
  refreshList();
  route();
  setInterval(refreshList, 2000);
  setInterval(refreshDevices, 5000);
}

boot();
