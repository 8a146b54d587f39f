// The partner portal (docs/portal.md): plain JavaScript, no build step, no other origin.
// The session lives in the gateway's HttpOnly `pg_portal` cookie; this script stores nothing
// (no web storage, no cookie it can read), and a new key is held in memory only until it is
// copied.
"use strict";

const state = { me: null, keys: [], chart: null, auditAfter: null, newKey: null };
const $ = (id) => document.getElementById(id);

// --- calling the portal API ---------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message, result) {
    super(message);
    this.status = status;
    this.code = code;
    this.result = result; // what a change made without its audit entry made (AUDIT_UNAVAILABLE)
  }
}

async function api(method, path, body, accept) {
  const headers = { Accept: accept || "application/json" };
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch("/portal/v1" + path, init);
  if (response.status === 204) return null;
  if (!response.ok) {
    let code = "HTTP_" + response.status, message = response.statusText, result;
    try {
      const error = (await response.json()).error;
      code = error.code;
      message = error.message;
      result = error.result;
    } catch (ignored) { /* not the error shape: keep the status */ }
    if (response.status === 401 && state.me) signedOut("Your session ended: sign in again.");
    throw new ApiError(response.status, code, message, result);
  }
  return accept === "text/csv" ? response.text() : response.json();
}

function say(text) { $("status").textContent = text || ""; }
function fail(error) { $("error").textContent = error ? (error.message || String(error)) : ""; }

// Runs a user action: clears old messages, reports a failure in the alert region.
function act(handler) {
  return async (event) => {
    if (event) event.preventDefault();
    fail(null);
    try {
      await handler(event);
    } catch (error) {
      fail(error);
    }
  };
}

function can(permission) { return state.me !== null && state.me.permissions.includes(permission); }

// A cell, named after its column (a phone's screen shows tables as cards: name, then value).
function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  const header = row.closest("table")?.querySelectorAll("thead th")[row.children.length - 1];
  if (header && header.textContent.trim()) td.dataset.label = header.textContent.trim();
  return td;
}

function button(label, className, handler) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.className = className;
  b.addEventListener("click", act(handler));
  return b;
}

const when = (text) => (text ? text.replace("T", " ").replace("Z", " UTC") : "never");
const quotaText = (quota) => (quota ? `${quota.limit}/${quota.period}` : "none");

// --- pages ---------------------------------------------------------------------------------

const pages = ["signin", "keys", "usage", "members", "audit"];

function show(page) {
  for (const name of pages) $("page-" + name).hidden = name !== page;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.page === page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function route() {
  if (!state.me) return show("signin");
  let page = location.hash.replace("#", "") || "keys";
  if (!pages.includes(page) || page === "signin" || (page === "members" && !can("members.read"))) page = "keys";
  show(page);
  say("");
  fail(null);
  try {
    if (page === "keys") await loadKeys();
    if (page === "usage") await loadUsage();
    if (page === "members") await loadMembers();
    if (page === "audit") await loadAudit(true);
  } catch (error) {
    fail(error);
  }
  $("main").focus();
}

function signedOut(message) {
  state.me = null;
  state.newKey = null;
  $("nav").hidden = true;
  $("who").hidden = true;
  $("code-form").hidden = false;
  $("signin-form").hidden = true;
  show("signin");
  say(message || "");
}

async function start() {
  try {
    state.me = await api("GET", "/me");
  } catch (error) {
    if (error.status !== 401) fail(error);
    return signedOut();
  }
  const { member, partner } = state.me;
  $("who").textContent = `${member.name} (${member.role}) · ${partner.name}`;
  $("who").hidden = false;
  $("nav").hidden = false;
  for (const element of document.querySelectorAll("[data-needs]")) {
    const needed = element.dataset.needs === "members" ? "members.read" : element.dataset.needs;
    element.hidden = !can(needed);
  }
  await route();
}

// --- sign-in and sign-out ------------------------------------------------------------------

$("code-form").addEventListener("submit", act(async () => {
  await api("POST", "/session/code", { email: $("email").value });
  $("code-form").hidden = true;
  $("signin-form").hidden = false;
  $("code").value = "";
  $("code").focus();
  say("Code sent, if the address is a member's.");
}));

$("signin-form").addEventListener("submit", act(async () => {
  await api("POST", "/session", { email: $("email").value, code: $("code").value });
  say("");
  await start();
}));

$("other-email").addEventListener("click", () => {
  $("signin-form").hidden = true;
  $("code-form").hidden = false;
  $("email").focus();
});

$("sign-out").addEventListener("click", act(async () => {
  await api("DELETE", "/session");
  signedOut("Signed out.");
}));

// --- keys ----------------------------------------------------------------------------------

async function loadKeys() {
  const { partner } = state.me;
  const scopes = $("key-scopes");
  scopes.querySelectorAll("label").forEach((label) => label.remove());
  for (const scope of partner.scopes) {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = scope;
    box.checked = true;
    label.append(box, " " + scope);
    scopes.appendChild(label);
  }
  const cidrs = partner.allowed_cidrs.length ? partner.allowed_cidrs.join(", ") : "any address";
  $("grant").textContent = `Granted to ${partner.name}: scopes ${partner.scopes.join(", ")}; from ${cidrs}; ` +
    `quota ${quotaText(partner.quota)}; at most ${partner.max_keys} live keys.`;
  showNewKey();
  const page = await api("GET", "/keys?limit=1000");
  state.keys = page.items;
  const body = $("keys-table").querySelector("tbody");
  body.replaceChildren();
  for (const key of state.keys) {
    const row = document.createElement("tr");
    body.appendChild(row);
    row.dataset.key = key.key_id;
    cell(row, key.name || "(no name)");
    cell(row, key.start + "…", "mono");
    cell(row, key.status);
    cell(row, key.scopes.join(", "));
    cell(row, key.allowed_cidrs.length ? key.allowed_cidrs.join(", ") : "any");
    cell(row, quotaText(key.quota));
    cell(row, when(key.expires_at));
    cell(row, when(key.last_used_at));
    const actions = cell(row, "");
    if (can("keys.write") && key.status === "active") {
      actions.append(
        button("Edit", "small", () => editKey(key)),
        button("Rotate", "small", () => rotateKey(key)),
        button("Revoke", "small danger", () => revokeKey(key)),
      );
    }
  }
}

function showNewKey() {
  $("new-key").hidden = state.newKey === null;
  $("new-key-text").value = state.newKey || "";
}

// Creates or rotates a key. A key made without its audit entry is refused with the key inside:
// it is shown all the same, as no other answer holds it, and the refusal reported.
async function makeKey(path, body) {
  try {
    return await api("POST", path, body);
  } catch (error) {
    if (error.result && error.result.key) {
      state.newKey = error.result.key;
      showNewKey();
    }
    throw error;
  }
}

$("create-key").addEventListener("submit", act(async () => {
  const scopes = [...$("key-scopes").querySelectorAll("input:checked")].map((box) => box.value);
  const body = { scopes };
  if ($("key-name").value.trim()) body.name = $("key-name").value.trim();
  if ($("key-expiry").value) body.expires_in = $("key-expiry").value;
  const created = await makeKey("/keys", body);
  state.newKey = created.key;
  $("key-name").value = "";
  await loadKeys();
  say(`Key ${created.key_id} created.`);
  $("new-key-text").focus();
  $("new-key-text").select();
}));

$("copy-key").addEventListener("click", act(async () => {
  await navigator.clipboard.writeText($("new-key-text").value);
  say("Copied.");
}));

$("done-key").addEventListener("click", () => {
  state.newKey = null;
  showNewKey();
  say("");
});

async function rotateKey(key) {
  const grace = prompt(`Rotate ${key.name || key.key_id}: how long may the old key still work? (e.g. 1h, 24h, 0)`, "24h");
  if (grace === null) return;
  const rotated = await makeKey(`/keys/${key.key_id}/rotate`, { grace: grace.trim() });
  state.newKey = rotated.key;
  await loadKeys();
  say(`Rotated: the old key works until ${when(rotated.previous_key_expires_at)}.`);
  $("new-key-text").focus();
}

async function revokeKey(key) {
  if (!confirm(`Revoke ${key.name || key.key_id}? It stops working at once, everywhere.`)) return;
  await api("POST", `/keys/${key.key_id}/revoke`);
  await loadKeys();
  say(`Key ${key.key_id} revoked.`);
}

let editing = null;

function editKey(key) {
  editing = key;
  $("edit-key-label").textContent = key.name || key.key_id;
  $("edit-name").value = key.name || "";
  $("edit-cidrs").value = key.allowed_cidrs.join("\n");
  $("edit-quota").value = key.quota ? String(key.quota.limit) : "";
  $("edit-period").value = key.quota ? key.quota.period : "day";
  $("edit-key").hidden = false;
  $("edit-name").focus();
}

$("edit-key").addEventListener("submit", act(async () => {
  // Only what changed: a field the member did not touch is not theirs to be refused for.
  const body = {};
  const cidrs = $("edit-cidrs").value.split(/[\s,]+/).filter((text) => text !== "");
  if (cidrs.join(" ") !== editing.allowed_cidrs.join(" ")) body.allowed_cidrs = cidrs;
  const quota = $("edit-quota").value.trim() ? { limit: Number($("edit-quota").value), period: $("edit-period").value } : null;
  if (quotaText(quota) !== quotaText(editing.quota)) body.quota = quota;
  const name = $("edit-name").value.trim();
  if (name && name !== editing.name) body.name = name;
  if (Object.keys(body).length === 0) {
    $("edit-key").hidden = true;
    return say("Nothing changed.");
  }
  await api("PATCH", `/keys/${editing.key_id}`, body);
  $("edit-key").hidden = true;
  await loadKeys();
  say(`Key ${editing.key_id} saved.`);
}));

$("cancel-edit").addEventListener("click", () => { $("edit-key").hidden = true; });

// --- usage ---------------------------------------------------------------------------------

function day(offset) {
  const date = new Date();
  date.setDate(date.getDate() + offset);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;
}

function usageQuery() {
  const key = $("usage-key").value;
  return `/usage?from=${$("usage-from").value}&to=${$("usage-to").value}` + (key ? `&key_id=${encodeURIComponent(key)}` : "");
}

async function loadUsage() {
  if (!$("usage-from").value) {
    $("usage-from").value = day(-13);
    $("usage-to").value = day(0);
  }
  const chosen = $("usage-key").value;
  state.keys = (await api("GET", "/keys?limit=1000")).items;
  const select = $("usage-key");
  select.replaceChildren(new Option("All keys", ""));
  for (const key of state.keys) select.appendChild(new Option(`${key.name || key.key_id} (${key.start}…, ${key.status})`, key.key_id));
  select.value = chosen && state.keys.some((key) => key.key_id === chosen) ? chosen : "";
  await drawUsage();
}

async function drawUsage() {
  const report = await api("GET", usageQuery());
  $("usage-zone").textContent = report.time_zone;
  const labels = report.days.map((d) => d.date);
  const refused = (d) => d.refused_auth + d.refused_limit + d.refused_quota;
  const series = [
    ["Allowed", report.days.map((d) => d.allowed), "#1f5fbf"],
    ["Refused", report.days.map(refused), "#b3261e"],
    ["Upstream 2xx", report.days.map((d) => d.upstream_2xx), "#2e7d32"],
    ["Upstream 4xx", report.days.map((d) => d.upstream_4xx), "#ef8f00"],
    ["Upstream 5xx", report.days.map((d) => d.upstream_5xx), "#6a1b9a"],
  ];
  const data = { labels, datasets: series.map(([label, values, color]) => ({ label, data: values, backgroundColor: color })) };
  if (state.chart) {
    state.chart.data = data;
    state.chart.update();
  } else {
    state.chart = new Chart($("usage-chart"), {
      type: "bar",
      data,
      options: { responsive: true, maintainAspectRatio: false, animation: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
  }
  const body = $("usage-table").querySelector("tbody");
  body.replaceChildren();
  for (const d of report.days) {
    const row = document.createElement("tr");
    body.appendChild(row);
    for (const value of [d.date, d.allowed, refused(d), d.upstream_2xx, d.upstream_4xx, d.upstream_5xx]) cell(row, String(value));
  }
}

$("usage-form").addEventListener("submit", act(drawUsage));
$("usage-key").addEventListener("change", act(drawUsage));

$("download-csv").addEventListener("click", act(async () => {
  const text = await api("GET", usageQuery(), undefined, "text/csv");
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  link.download = `usage-${$("usage-key").value || state.me.partner.partner_id}-${$("usage-from").value}-${$("usage-to").value}.csv`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  say("CSV downloaded.");
}));

// --- members -------------------------------------------------------------------------------

async function loadMembers() {
  const page = await api("GET", "/members?limit=1000");
  const body = $("members-table").querySelector("tbody");
  body.replaceChildren();
  for (const member of page.items) {
    const row = document.createElement("tr");
    body.appendChild(row);
    row.dataset.member = member.member_id;
    cell(row, member.name);
    cell(row, member.email);
    const roleCell = cell(row, "");
    const actions = cell(row, "");
    if (member.member_id === state.me.member.member_id || !can("members.write")) {
      roleCell.textContent = member.role;
    } else {
      const select = document.createElement("select");
      select.setAttribute("aria-label", `Role of ${member.name}`);
      for (const role of ["viewer", "developer", "partner_admin"]) select.appendChild(new Option(role, role));
      select.value = member.role;
      select.addEventListener("change", act(async () => {
        await api("PATCH", `/members/${member.member_id}`, { role: select.value });
        say(`${member.name} is now ${select.value}.`);
      }));
      roleCell.appendChild(select);
      actions.appendChild(button("Remove", "small danger", async () => {
        if (!confirm(`Remove ${member.name}? Their sessions end at once.`)) return;
        await api("DELETE", `/members/${member.member_id}`);
        await loadMembers();
        say(`${member.name} removed.`);
      }));
    }
  }
}

$("invite").addEventListener("submit", act(async () => {
  const invited = await api("POST", "/members", { email: $("invite-email").value, name: $("invite-name").value, role: $("invite-role").value });
  $("invite-email").value = "";
  $("invite-name").value = "";
  await loadMembers();
  say(`${invited.email} invited as ${invited.role}.`);
}));

// --- audit ---------------------------------------------------------------------------------

async function loadAudit(first) {
  if (first) state.auditAfter = null;
  const page = await api("GET", "/audit?limit=50" + (state.auditAfter ? `&after=${encodeURIComponent(state.auditAfter)}` : ""));
  const body = $("audit-table").querySelector("tbody");
  if (first) body.replaceChildren();
  for (const entry of page.items) {
    const row = document.createElement("tr");
    body.appendChild(row);
    for (const value of [when(entry.at), entry.actor, entry.action, entry.target, entry.source, entry.note || ""]) cell(row, value);
  }
  state.auditAfter = page.next_cursor;
  $("audit-more").hidden = page.next_cursor === null;
}

$("audit-more").addEventListener("click", act(() => loadAudit(false)));

window.addEventListener("hashchange", route);
start();
