// The reference web app of docs/public-api.md, "Web apps": plain JavaScript, no build step.
//
// The access token lives in this closure only: never in localStorage, sessionStorage or a
// script-readable cookie. The refresh token never reaches JavaScript at all: the gateway
// keeps it in an HttpOnly cookie of its own host (`__Host-pg_refresh`), sent by
// `credentials: 'include'` and cut out of every request the gateway forwards.
(() => {
  'use strict';
  // The gateway's origin: the development stack's (scripts/run.sh; a deployment writes its
  // own here), or ?gateway=... on a page served from this machine only. A deployed page that
  // took it from its URL would post the codes typed into it wherever a link said.
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(location.hostname);
  const gateway = (local && new URLSearchParams(location.search).get('gateway')) || 'http://localhost:8080';
  const REFRESH_EARLY_MS = 5 * 60 * 1000;

  let session = null;        // {accessToken, expiresAt (ms), userID}
  let refreshTimer = null;
  let refreshing = null;     // the one refresh in flight, shared by every caller

  const $ = (id) => document.getElementById(id);

  function show() {
    $('gateway').textContent = gateway;
    $('login').hidden = session !== null;
    $('session').hidden = session === null;
    $('status').textContent = session ? 'logged in' : 'logged out';
    if (session) {
      $('user').textContent = session.userID;
      // A date and a time: a token lives a day (tokens.access_ttl), so a time alone is ambiguous.
      $('expires').textContent = new Date(session.expiresAt).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    } else {
      $('identity').textContent = '';
    }
  }

  function fail(message) { $('error').textContent = message; }

  // Keeps the new access token and plans the next refresh 5 minutes before it expires.
  function accept(body) {
    session = { accessToken: body.access_token, expiresAt: body.access_token_expires_at * 1000, userID: body.user_id };
    clearTimeout(refreshTimer);
    const wait = Math.max(0, session.expiresAt - REFRESH_EARLY_MS - Date.now());
    // A refresh the network failed is tried again in a minute, not dropped.
    const tick = () => { refresh().catch(() => { refreshTimer = setTimeout(tick, 60 * 1000); }); };
    refreshTimer = setTimeout(tick, wait);
    show();
  }

  function forget() {
    session = null;
    clearTimeout(refreshTimer);
    refreshTimer = null;
    show();
  }

  // POST /auth/token/refresh with the cookie and an empty body (a CORS "simple" request:
  // no preflight). Concurrent callers share one request: the gateway would answer a second
  // one with the same successor anyway, but one is enough.
  function refresh() {
    if (!refreshing) {
      refreshing = fetch(gateway + '/auth/token/refresh', { method: 'POST', credentials: 'include' })
        .then(async (response) => {
          if (response.status === 200) { accept(await response.json()); return true; }
          forget();
          return false;
        })
        .finally(() => { refreshing = null; });
    }
    return refreshing;
  }

  async function post(path, body) {
    const response = await fetch(gateway + path, {
      method: 'POST', credentials: 'include',
      headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((json.error && json.error.message) || response.status);
    return json;
  }

  // A bearer call; on 401 one refresh and one retry (the token may have just expired).
  async function callBearer(path, options = {}) {
    const send = () => fetch(gateway + path, { ...options, headers: { Authorization: 'Bearer ' + session.accessToken } });
    let response = await send();
    if (response.status === 401 && await refresh()) response = await send();
    return response;
  }

  $('send-code').addEventListener('click', async () => {
    fail('');
    try {
      await post('/auth/otp/trigger', { phone: $('phone').value });
      $('otp').placeholder = 'code sent';
      $('otp').focus();
    } catch (error) { fail('send code: ' + error.message); }
  });

  $('login').addEventListener('submit', async (event) => {
    event.preventDefault();
    fail('');
    try { accept(await post('/auth/otp/verify', { phone: $('phone').value, otp: $('otp').value })); } catch (error) { fail('log in: ' + error.message); }
  });

  $('call-profile').addEventListener('click', async () => {
    fail('');
    try {
      const response = await callBearer('/user/profile');
      const echoed = await response.json();
      // The demo upstream echoes the request it got: the identity headers the gateway set.
      const identity = Object.fromEntries(Object.entries(echoed.headers || {})
        .filter(([name]) => name.startsWith('x-gateway-') && name !== 'x-gateway-assertion'));
      $('identity').textContent = JSON.stringify({ status: response.status, ...identity }, null, 2);
    } catch (error) { fail('call: ' + error.message); }
  });

  // The access token names the session to end, the cookie goes with it. Only a 204 ended
  // it: a page that forgot the session on any other answer would show "logged out" while the
  // cookie still logs the next visitor of this browser in. A refresh the gateway refused
  // has forgotten it already (the cookie is spent).
  $('logout').addEventListener('click', async () => {
    fail('');
    try {
      const response = await callBearer('/auth/logout', { method: 'POST', credentials: 'include' });
      if (response.status === 204) forget();
      else if (session) fail('log out: ' + response.status);
    } catch (error) { fail('log out: ' + error.message); }
  });

  // A reload keeps no token: the cookie (if any) gets a new access token.
  refresh().catch((error) => { fail('refresh: ' + error.message); forget(); });
  show();
})();
