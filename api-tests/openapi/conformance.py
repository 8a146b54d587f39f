#!/usr/bin/env python3
"""Keeps docs/openapi.yaml true: drives every operation of a running gateway through its
documented answers (successes and errors) and checks each real response against the document:
the status is documented for the operation, the Content-Type is, required headers are present
and valid, and the body validates against the documented schema. Each scenario also asserts
the status it expects, so the gateway's behaviour and the document are checked together.

Run by scripts/api-checks.sh, which starts the processes and sets:
  API_PUBLIC_URL, API_ADMIN_URL, API_AUTHZ_URL, API_ADMIN_TOKEN, API_OPENAPI, API_REDIS_PID (for --redis-outage)

  conformance.py --credentials FILE   the scenarios; writes credentials for schemathesis to FILE
  conformance.py --redis-outage       /readyz and fail-closed endpoints while Redis is frozen
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import string
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openapi_check import OpenAPIDocument, Recorder, raw_exchange, request  # noqa: E402

PUBLIC = os.environ["API_PUBLIC_URL"]
ADMIN = os.environ["API_ADMIN_URL"]
AUTHZ = os.environ["API_AUTHZ_URL"]
ADMIN_TOKEN = os.environ["API_ADMIN_TOKEN"]
DOC = OpenAPIDocument(os.environ.get("API_OPENAPI", "docs/openapi.yaml"))
R = Recorder(DOC)
UAT_CODE = "123456"
# The origin scripts/api-checks.sh lists in web.allowed_origins.
WEB_ORIGIN = "http://localhost:5173"
# portal.origin in scripts/api-checks.sh: every portal call carries it.
PORTAL_ORIGIN = os.environ["API_PORTAL_ORIGIN"]
_phone_counter = [0]


def admin_headers(extra=None):
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "X-Admin-Actor": "conformance-test"}
    headers.update(extra or {})
    return headers


def client_ip():
    """A fresh client IP per scenario (the gateway trusts X-Forwarded-For from loopback)."""
    _phone_counter[0] += 1
    n = _phone_counter[0]
    return {"X-Forwarded-For": f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"}


def fresh_phone():
    """Unique per run: the phone buckets live in this run's Redis only, but stay distinct."""
    _phone_counter[0] += 1
    return "9" + str(int(time.time() * 1000) % 10**6).zfill(6) + str(_phone_counter[0] % 1000).zfill(3)


def pub(method, path, expect, label, **kwargs):
    return R.check(method, path, request(PUBLIC, method, path, **kwargs), expect, label)


def adm(method, path, expect, label, token=True, **kwargs):
    if token:
        kwargs["headers"] = admin_headers(kwargs.get("headers"))
    return R.check(method, path, request(ADMIN, method, path, **kwargs), expect, label)


def authz(method, path, expect, label, token=None, **kwargs):
    """A call on the authorization listener; `token`: a verifier's credential (verify API)."""
    if token is not None:
        kwargs["headers"] = {"Authorization": f"Bearer {token}", **(kwargs.get("headers") or {})}
    return R.check(method, path, request(AUTHZ, method, path, **kwargs), expect, label)


def unissued_key():
    """A well-formed partner key (valid CRC-32 checksum in base62) that was never issued."""
    body = "pgk_live_" + "".join(random.choice(string.ascii_letters + string.digits) for _ in range(43))
    value = zlib.crc32(body.encode())
    alphabet = string.digits + string.ascii_uppercase + string.ascii_lowercase
    digits = ""
    for _ in range(6):
        digits = alphabet[value % 62] + digits
        value //= 62
    return body + "_" + digits


def portal(method, path, expect, label, cookie=None, origin=True, **kwargs):
    """A portal API call as the portal's page makes it: its Origin, and the session cookie."""
    headers = dict(kwargs.pop("headers", {}))
    if origin:
        headers["Origin"] = PORTAL_ORIGIN
    if cookie:
        headers["Cookie"] = cookie
    return pub(method, "/portal/v1" + path, expect, label, headers=headers, **kwargs)


def portal_sign_in(email, ip):
    portal("POST", "/session/code", 202, "portal code for sign-in", headers=ip, body={"email": email})
    signed_in = portal("POST", "/session", 200, "portal sign-in", headers=ip, body={"email": email, "code": UAT_CODE})
    return (signed_in.header("Set-Cookie") or "").split(";")[0]


def portal_scenarios():
    """The partner portal's API and the admin API's members (docs/portal.md)."""
    partner = adm("POST", "/v1/partners", 201, "portal partner", body={"name": "Portal Partner", "scopes": ["orders:read", "orders:write"], "max_keys": 3}).json()
    require(partner["max_keys"] == 3, f"max_keys: {partner}")
    other = adm("POST", "/v1/partners", 201, "portal other partner", body={"name": "Portal Other"}).json()
    other_key = adm("POST", f"/v1/partners/{other['partner_id']}/keys", 201, "portal other partner's key", body={}).json()
    pid = partner["partner_id"]
    # --- members through the admin API
    admin_member = adm("POST", f"/v1/partners/{pid}/members", 201, "invite member", body={"email": "Lead@Portal.example", "name": "Lead", "role": "partner_admin"}).json()
    require(admin_member["email"] == "lead@portal.example" and set(admin_member) == {"member_id", "partner_id", "email", "name", "role", "revision"}, f"member: {admin_member}")
    viewer = adm("POST", f"/v1/partners/{pid}/members", 201, "invite viewer", body={"email": "viewer@portal.example", "name": "Viewer", "role": "viewer"}).json()
    adm("POST", f"/v1/partners/{pid}/members", 409, "invite taken email", body={"email": "lead@portal.example", "name": "Again", "role": "viewer"})
    adm("POST", f"/v1/partners/{pid}/members", 400, "invite bad role", body={"email": "x@portal.example", "name": "X", "role": "owner"})
    adm("POST", f"/v1/partners/{pid}/members", 400, "invite bad email", body={"email": "not an email", "name": "X", "role": "viewer"})
    adm("POST", "/v1/partners/ptr_0000000000000000/members", 404, "invite to unknown partner", body={"email": "y@portal.example", "name": "Y", "role": "viewer"})
    listed = adm("GET", f"/v1/partners/{pid}/members?limit=1", 200, "list members").json()
    require(len(listed["items"]) == 1 and listed["next_cursor"] == admin_member["member_id"], f"members page: {listed}")
    adm("GET", f"/v1/partners/{pid}/members?after=mbr_0000000000000000", 400, "list members unknown cursor")
    adm("PATCH", f"/v1/partners/{pid}/members/{viewer['member_id']}", 200, "update member", body={"name": "Viewer One"})
    adm("PATCH", f"/v1/partners/{pid}/members/{viewer['member_id']}", 400, "update member nothing", body={})
    adm("PATCH", f"/v1/partners/{other['partner_id']}/members/{viewer['member_id']}", 404, "update member of another partner", body={"name": "x"})
    gone = adm("POST", f"/v1/partners/{pid}/members", 201, "invite to remove", body={"email": "gone@portal.example", "name": "Gone", "role": "viewer"}).json()
    adm("DELETE", f"/v1/partners/{pid}/members/{gone['member_id']}", 204, "remove member")
    adm("DELETE", f"/v1/partners/{pid}/members/{gone['member_id']}", 404, "remove member again")
    chosen = adm("POST", f"/v1/partners/{pid}/members", 201, "invite member with id", body={
        "member_id": "mbr_00000000000c0f01", "email": "chosen@portal.example", "name": "Chosen", "role": "viewer"}).json()
    require(chosen["member_id"] == "mbr_00000000000c0f01" and chosen["revision"] == 1, f"chosen member: {chosen}")
    adm("POST", f"/v1/partners/{pid}/members", 409, "invite member under a taken id", body={
        "member_id": chosen["member_id"], "email": "again@portal.example", "name": "Again", "role": "viewer"})
    adm("POST", f"/v1/partners/{pid}/members", 400, "invite member under a malformed id", body={
        "member_id": "mbr_XYZ", "email": "bad-id@portal.example", "name": "Bad", "role": "viewer"})
    chosen_path = f"/v1/partners/{pid}/members/{chosen['member_id']}"
    adm("PATCH", chosen_path, 412, "update member at a stale revision", headers={"If-Match": '"7"'}, body={"name": "x"})
    moved = adm("PATCH", chosen_path, 200, "update member at its revision", headers={"If-Match": '"1"'}, body={"role": "developer"}).json()
    require(moved["revision"] == 2 and moved["role"] == "developer", f"member update at revision: {moved}")
    adm("DELETE", chosen_path, 412, "remove member at a stale revision", headers={"If-Match": '"1"'})
    adm("DELETE", chosen_path, 400, "remove member malformed If-Match", headers={"If-Match": "two"})
    adm("DELETE", chosen_path, 204, "remove member at its revision", headers={"If-Match": '"2"'})
    # --- sign-in
    ip = client_ip()
    for_anyone = portal("POST", "/session/code", 202, "portal code unknown address", headers=ip, body={"email": "nobody@portal.example"})
    require(for_anyone.json() == {"status": "accepted", "expires_in": 3}, f"code: {for_anyone.body}")
    portal("POST", "/session/code", 400, "portal code bad email", headers=ip, body={"email": "@"})
    portal("POST", "/session/code", 403, "portal code other origin", headers={**ip, "Origin": "https://evil.example"}, origin=False, body={"email": "lead@portal.example"})
    portal("POST", "/session/code", 202, "portal code", headers=ip, body={"email": "lead@portal.example"})
    portal("POST", "/session", 401, "portal sign-in wrong code", headers=ip, body={"email": "lead@portal.example", "code": "000000"})
    portal("POST", "/session", 400, "portal sign-in bad code", headers=ip, body={"email": "lead@portal.example", "code": "12ab"})
    signed_in = portal("POST", "/session", 200, "portal sign-in", headers=ip, body={"email": "lead@portal.example", "code": UAT_CODE})
    lead = (signed_in.header("Set-Cookie") or "").split(";")[0]
    require(lead.startswith("pg_portal=mbr_"), f"session cookie: {signed_in.headers}")
    viewer_cookie = portal_sign_in("viewer@portal.example", ip)
    # --- reads, refusals
    me = portal("GET", "/me", 200, "portal me", cookie=lead).json()
    require(me["member"]["role"] == "partner_admin" and me["partner"]["partner_id"] == pid and "members.write" in me["permissions"], f"me: {me}")
    portal("GET", "/me", 401, "portal me signed out")
    portal("GET", "/me", 403, "portal me no origin", cookie=lead, origin=False)
    portal("GET", "/me", 200, "portal me same-origin read", cookie=lead, origin=False, headers={"Sec-Fetch-Site": "same-origin"})
    portal("GET", "/me", 403, "portal me cross-site", cookie=lead, headers={"Sec-Fetch-Site": "cross-site"})
    portal("GET", f"/me?partner_id={other['partner_id']}", 404, "portal me other partner", cookie=lead)
    portal("GET", "/me", 400, "portal two session cookies", cookie=f"{lead}; {lead[:-1]}0")
    # --- keys
    key = portal("POST", "/keys", 201, "portal create key", cookie=lead, body={"name": "portal", "scopes": ["orders:read"], "expires_in": "30d"}).json()
    portal("POST", "/keys", 400, "portal create key unheld scope", cookie=lead, body={"scopes": ["admin:all"]})
    portal("POST", "/keys", 403, "portal create key as viewer", cookie=viewer_cookie, body={})
    portal("POST", "/keys", 404, "portal create key for another partner", cookie=lead, body={"partner_id": other["partner_id"]})
    portal("GET", "/keys", 200, "portal list keys", cookie=viewer_cookie)
    portal("GET", "/keys?limit=0", 400, "portal list keys limit 0", cookie=lead)
    portal("PATCH", f"/keys/{key['key_id']}", 200, "portal update key", cookie=lead, body={"scopes": ["orders:write"], "allowed_cidrs": ["10.0.0.0/8"], "quota": {"limit": 5, "period": "day"}})
    portal("PATCH", f"/keys/{key['key_id']}", 400, "portal update key nothing", cookie=lead, body={})
    portal("PATCH", f"/keys/{other_key['key_id']}", 404, "portal update another partner's key", cookie=lead, body={"name": "x"})
    portal("POST", f"/keys/{key['key_id']}/rotate", 400, "portal rotate bad grace", cookie=lead, body={"grace": "soon"})
    rotated = portal("POST", f"/keys/{key['key_id']}/rotate", 200, "portal rotate key", cookie=lead, body={"grace": "1h"}).json()
    portal("POST", f"/keys/{key['key_id']}/rotate", 409, "portal rotate expiring key", cookie=lead)
    portal("POST", f"/keys/{rotated['key_id']}/revoke", 200, "portal revoke key", cookie=lead)
    portal("POST", f"/keys/{rotated['key_id']}/revoke", 409, "portal revoke key again", cookie=lead)
    portal("POST", "/keys", 201, "portal create key 2", cookie=lead, body={})
    portal("POST", "/keys", 201, "portal create key 3", cookie=lead, body={})
    portal("POST", "/keys", 409, "portal create key past max_keys", cookie=lead, body={})
    # --- usage, audit
    portal("GET", "/usage?from=2026-01-01&to=2026-01-31", 200, "portal usage", cookie=viewer_cookie)
    csv = portal("GET", f"/usage?from=2026-01-01&to=2026-01-02&key_id={key['key_id']}", 200, "portal usage csv", cookie=lead, headers={"Accept": "text/csv"})
    require(csv.body.startswith(b"date,allowed,") and (csv.header("Content-Disposition") or "").startswith("attachment"), f"csv: {csv.body[:80]!r}")
    portal("GET", "/usage?from=2026-01-31&to=2026-01-01", 400, "portal usage reversed", cookie=lead)
    portal("GET", f"/usage?from=2026-01-01&to=2026-01-02&key_id={other_key['key_id']}", 404, "portal usage of another partner's key", cookie=lead)
    page = portal("GET", "/audit?limit=2", 200, "portal audit", cookie=viewer_cookie).json()
    require(page["next_cursor"] and page["next_cursor"].startswith(("actions:", "refusals:")), f"portal audit cursor: {page['next_cursor']}")
    portal("GET", f"/audit?limit=2&after={page['next_cursor']}", 200, "portal audit page 2", cookie=lead)
    portal("GET", "/audit?after=actions:1-0", 400, "portal audit unknown cursor", cookie=lead)
    # --- members
    portal("GET", "/members", 200, "portal list members", cookie=lead)
    portal("GET", "/members", 403, "portal list members as viewer", cookie=viewer_cookie)
    invited = portal("POST", "/members", 201, "portal invite", cookie=lead, body={"email": "dev@portal.example", "name": "Dev", "role": "developer"}).json()
    portal("POST", "/members", 409, "portal invite taken", cookie=lead, body={"email": "viewer@portal.example", "name": "V", "role": "viewer"})
    portal("PATCH", f"/members/{invited['member_id']}", 200, "portal update member", cookie=lead, body={"role": "viewer"})
    portal("PATCH", f"/members/{admin_member['member_id']}", 409, "portal update own role", cookie=lead, body={"role": "viewer"})
    portal("DELETE", f"/members/{admin_member['member_id']}", 409, "portal remove oneself", cookie=lead)
    portal("DELETE", f"/members/{invited['member_id']}", 204, "portal remove member", cookie=lead)
    portal("DELETE", f"/members/{invited['member_id']}", 404, "portal remove member again", cookie=lead)
    # --- sign-out
    portal("DELETE", "/session", 403, "portal sign-out other origin", cookie=viewer_cookie, origin=False, headers={"Origin": "https://evil.example"})
    portal("DELETE", "/session", 204, "portal sign-out", cookie=viewer_cookie)
    portal("DELETE", "/session", 401, "portal sign-out again", cookie=viewer_cookie)
    # --- the pages
    index = request(PUBLIC, "GET", "/portal/")
    require(index.status == 200 and "script-src 'self'" in (index.header("Content-Security-Policy") or "") and index.header("X-Frame-Options") == "DENY",
            f"portal page: {index.status} {index.headers}")


def require(condition, message):
    if not condition:
        R.problems.append(message)


def scenarios(credentials_path):
    # --- health, jwks, metrics
    pub("GET", "/healthz", 200, "healthz public")
    adm("GET", "/healthz", 200, "healthz admin", token=False)
    pub("GET", "/readyz", 200, "readyz")
    status = adm("GET", "/v1/status", 200, "admin status").json()
    require(status["status"] == "ready" and status["redis"]["mode"] == "standalone", f"admin status: {status}")
    jwks = pub("GET", "/.well-known/jwks.json", 200, "jwks")
    metrics = adm("GET", "/metrics", 200, "metrics", token=False)
    require(b"gateway_http_requests_total" in metrics.body, "metrics: no gateway_http_requests_total")
    require(jwks.status == 200 and len(jwks.json()["keys"]) >= 1, "jwks: no key")

    # --- X-Request-Id: a sane one is kept, anything else replaced
    kept = pub("GET", "/healthz", 200, "request id kept", headers={"X-Request-Id": "abc-123.x:y_z"})
    require(kept.header("X-Request-Id") == "abc-123.x:y_z", f"X-Request-Id not kept: {kept.header('X-Request-Id')}")
    replaced = pub("GET", "/healthz", 200, "request id replaced", headers={"X-Request-Id": "bad id with spaces"})
    require(replaced.header("X-Request-Id") not in (None, "bad id with spaces"), "insane X-Request-Id was kept")

    # --- admin auth
    adm("GET", "/v1/partners", 401, "partners without token", token=False)
    adm("GET", "/v1/partners", 401, "partners wrong token", token=False, headers={"Authorization": "Bearer wrong-token-0123456789"})
    adm("POST", "/v1/partners", 401, "create partner basic auth", token=False, headers={"Authorization": "Basic YWRtaW46YWRtaW4="}, body={"name": "x"})

    # --- partners
    adm("POST", "/v1/partners", 400, "create partner bad json", body=b"{not json", headers={"Content-Type": "application/json"})
    adm("POST", "/v1/partners", 400, "create partner no body")
    adm("POST", "/v1/partners", 400, "create partner empty name", body={"name": "   "})
    adm("POST", "/v1/partners", 400, "create partner name wrong type", body={"name": 5})
    adm("POST", "/v1/partners", 400, "create partner rate 0", body={"name": "x", "rate": 0})
    adm("POST", "/v1/partners", 400, "create partner burst 0", body={"name": "x", "burst": 0})
    adm("POST", "/v1/partners", 400, "create partner bad scope", body={"name": "x", "scopes": ["BAD SCOPE"]})
    p1 = adm("POST", "/v1/partners", 201, "create partner", body={"name": "Conformance One", "rate": 50, "burst": 100}).json()
    p2 = adm("POST", "/v1/partners", 201, "create partner other scope", body={"name": "Conformance Two", "scopes": ["other:scope"]}).json()
    p3 = adm("POST", "/v1/partners", 201, "create slow partner", body={"name": "Slow", "rate": 0.001, "burst": 1, "scopes": None}).json()
    require(p1["scopes"] == ["sdk_tokens:mint"] and p1["status"] == "active", f"partner defaults: {p1}")
    partners = adm("GET", "/v1/partners", 200, "list partners").json()["items"]
    require({p1["partner_id"], p2["partner_id"]} <= {p["partner_id"] for p in partners}, "list partners misses new ones")
    first = adm("GET", "/v1/partners?limit=1", 200, "list partners page 1").json()
    require(len(first["items"]) == 1 and first["next_cursor"] == first["items"][0]["partner_id"], f"partners page: {first}")
    second = adm("GET", f"/v1/partners?limit=1&after={first['next_cursor']}", 200, "list partners page 2").json()
    require(second["items"][0]["partner_id"] != first["items"][0]["partner_id"], "page 2 repeats page 1")
    adm("GET", "/v1/partners?limit=0", 400, "list partners limit 0")
    adm("GET", "/v1/partners?after=ptr_0000000000000000", 400, "list partners unknown cursor")
    adm("GET", f"/v1/partners/{p1['partner_id']}", 200, "get partner")
    adm("PATCH", f"/v1/partners/{p2['partner_id']}", 400, "update partner nothing", body={})
    adm("PATCH", f"/v1/partners/{p2['partner_id']}", 400, "update partner burst 0", body={"burst": 0})
    adm("PATCH", f"/v1/partners/{p2['partner_id']}", 400, "update partner bad json", body=b"{", headers={"Content-Type": "application/json"})
    adm("PATCH", "/v1/partners/ptr_0000000000000000", 404, "update unknown partner", body={"burst": 2})
    updated = adm("PATCH", f"/v1/partners/{p2['partner_id']}", 200, "update partner", body={"name": "Two Renamed", "burst": 7}).json()
    require(updated["name"] == "Two Renamed" and updated["rate_limit"]["burst"] == 7 and updated["scopes"] == ["other:scope"], f"update: {updated}")
    adm("GET", "/v1/partners/ptr_0000000000000000", 404, "get unknown partner")
    adm("GET", "/v1/partners/not-an-id", 404, "get malformed partner id")

    # --- keys
    k1 = adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 201, "create key 90d", body={"expires_in": "90d"}).json()
    require(k1["expires_at"] is not None, "key with expires_in has no expires_at")
    k1b = adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 201, "create key empty body").json()
    require(k1b["expires_at"] is None and k1b["scopes"] == ["sdk_tokens:mint"], f"default key: {k1b}")
    k2 = adm("POST", f"/v1/partners/{p2['partner_id']}/keys", 201, "create key other scope", body={}).json()
    k3 = adm("POST", f"/v1/partners/{p3['partner_id']}/keys", 201, "create key slow partner", body={"scopes": ["sdk_tokens:mint"]}).json()
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key bad expiry", body={"expires_in": "ten days"})
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key zero expiry", body={"expires_in": "0s"})
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key expiry too far", body={"expires_in": "999999999999d"})
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key scopes wrong type", body={"scopes": "sdk_tokens:mint"})
    adm("POST", "/v1/partners/ptr_0000000000000000/keys", 404, "create key unknown partner", body={})
    named = adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 201, "create named key", body={"name": "checkout", "meta": {"team": "payments"}, "expires_in": "1d12h"}).json()
    require(named["key"].startswith(named["start"]) and named["name"] == "checkout" and named["meta"] == {"team": "payments"}, f"named key: {named}")
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key bad meta", body={"meta": {"bad name": "x"}})
    adm("POST", f"/v1/partners/{p1['partner_id']}/keys", 400, "create key units out of order", body={"expires_in": "30m1h"})
    got = adm("GET", f"/v1/keys/{named['key_id']}", 200, "get key").json()
    require(got["start"] == named["start"] and got["partner_id"] == p1["partner_id"], f"get key: {got}")
    adm("GET", "/v1/keys/key_0000000000000000", 404, "get unknown key")
    found = adm("POST", "/v1/keys/find", 200, "find key", body={"key": named["key"]}).json()
    require(found["key_id"] == named["key_id"] and found["status"] == "active", f"find key: {found}")
    adm("POST", "/v1/keys/find", 400, "find malformed key", body={"key": "pgk_live_nope"})
    adm("POST", "/v1/keys/find", 400, "find key missing field", body={})
    adm("POST", "/v1/keys/find", 404, "find unissued key", body={"key": unissued_key()})
    keys = adm("GET", f"/v1/partners/{p1['partner_id']}/keys", 200, "list keys").json()["items"]
    require({k1["key_id"], k1b["key_id"]} <= {k["key_id"] for k in keys}, "list keys misses new ones")
    require(all("key" not in k for k in keys), "list keys shows a key")
    adm("GET", "/v1/partners/ptr_0000000000000000/keys", 404, "list keys unknown partner")

    # --- whoami
    ip = client_ip()
    pub("GET", "/partner/v1/whoami", 401, "whoami no key", headers=ip)
    pub("GET", "/partner/v1/whoami", 401, "whoami empty key", headers={**ip, "X-API-Key": ""})
    pub("GET", "/partner/v1/whoami", 401, "whoami bad key", headers={**ip, "X-API-Key": "pgk_live_nope"})
    who = pub("GET", "/partner/v1/whoami", 200, "whoami", headers={**ip, "X-API-Key": k1["key"]}).json()
    require(who.get("key_id") == k1["key_id"], f"whoami: {who}")
    pub("GET", "/partner/v1/whoami", 200, "whoami other scope", headers={**ip, "X-API-Key": k2["key"]})
    pub("GET", "/partner/v1/whoami?api_key=" + k1["key"], 401, "whoami key in query", headers=ip)

    # --- SDK tokens
    ip = client_ip()
    pub("POST", "/partner/v1/sdk-token", 401, "sdk no key", headers=ip, body={"phone": "9876543210", "driver_id": "d"})
    pub("POST", "/partner/v1/sdk-token", 401, "sdk bad key", headers={**ip, "X-API-Key": "x" * 70}, body={"phone": "9876543210", "driver_id": "d"})
    pub("POST", "/partner/v1/sdk-token", 403, "sdk key without scope", headers={**ip, "X-API-Key": k2["key"]}, body={"phone": "9876543210", "driver_id": "d"})
    key1 = {**ip, "X-API-Key": k1["key"]}
    pub("POST", "/partner/v1/sdk-token", 400, "sdk bad json", headers=key1, body=b"[1,2")
    pub("POST", "/partner/v1/sdk-token", 400, "sdk missing driver", headers=key1, body={"phone": "9876543210"})
    pub("POST", "/partner/v1/sdk-token", 400, "sdk bad driver", headers=key1, body={"phone": "9876543210", "driver_id": "has space"})
    pub("POST", "/partner/v1/sdk-token", 400, "sdk bad name", headers=key1, body={"phone": "9876543210", "driver_id": "d", "name": "a\u0007b"})
    pub("POST", "/partner/v1/sdk-token", 400, "sdk bad phone", headers=key1, body={"phone": "12345", "driver_id": "d"})
    sdk_phone = fresh_phone()
    pair = pub("POST", "/partner/v1/sdk-token", 200, "sdk mint", headers=key1, body={"phone": sdk_phone, "driver_id": "NY-1", "name": "Ravi"}).json()
    again = pub("POST", "/partner/v1/sdk-token", 200, "sdk mint again", headers=key1, body={"phone": "+91" + sdk_phone, "driver_id": "NY-1"}).json()
    require(pair.get("is_new_user") is True and again.get("is_new_user") is False, "sdk is_new_user")
    require(pair.get("user_id") == again.get("user_id"), "+91 prefix gave another user")
    slow = {**ip, "X-API-Key": k3["key"]}
    pub("POST", "/partner/v1/sdk-token", 200, "sdk slow partner first", headers=slow, body={"phone": fresh_phone(), "driver_id": "d"})
    limited = pub("POST", "/partner/v1/sdk-token", 429, "sdk slow partner limited", headers=slow, body={"phone": fresh_phone(), "driver_id": "d"})
    require(limited.header("RateLimit-Limit") == "1", f"partner 429 RateLimit-Limit {limited.header('RateLimit-Limit')}")

    # --- failed key checks per client IP: 401 until the bucket (capacity 20) is empty, then 429
    ip = client_ip()
    statuses = [request(PUBLIC, "GET", "/partner/v1/whoami", headers={**ip, "X-API-Key": f"pgk_live_guess{i}"}).status for i in range(20)]
    require(set(statuses) == {401}, f"brute force: first 20 failures {statuses}")
    pub("GET", "/partner/v1/whoami", 429, "whoami brute force blocked", headers={**ip, "X-API-Key": "pgk_live_guess"})
    pub("POST", "/partner/v1/sdk-token", 429, "sdk brute force blocked", headers={**ip, "X-API-Key": "pgk_live_guess"}, body={})

    # --- disable / enable
    adm("POST", f"/v1/partners/{p1['partner_id']}/disable", 200, "disable partner")
    forbidden = None
    for _ in range(20):  # revocation reaches the key cache through pub/sub within milliseconds
        forbidden = request(PUBLIC, "GET", "/partner/v1/whoami", headers={**client_ip(), "X-API-Key": k1["key"]})
        if forbidden.status == 403:
            break
        time.sleep(0.05)
    R.check("GET", "/partner/v1/whoami", forbidden, 403, "whoami disabled partner")
    adm("POST", f"/v1/partners/{p1['partner_id']}/enable", 200, "enable partner")
    adm("POST", "/v1/partners/ptr_0000000000000000/disable", 404, "disable unknown partner")
    adm("POST", "/v1/partners/x/enable", 404, "enable malformed partner")

    # --- OTP trigger
    ip = client_ip()
    pub("POST", "/auth/otp/trigger", 400, "trigger no body", headers=ip)
    pub("POST", "/auth/otp/trigger", 400, "trigger bad json", headers=ip, body=b'{"phone": ')
    pub("POST", "/auth/otp/trigger", 400, "trigger phone wrong type", headers=ip, body={"phone": 9876543210})
    pub("POST", "/auth/otp/trigger", 400, "trigger bad phone", headers=ip, body={"phone": "5876543210"})
    pub("POST", "/auth/otp/trigger", 400, "trigger huge body", headers=ip, body={"phone": "9876543210", "pad": "x" * 70000})
    phone = fresh_phone()
    sent = pub("POST", "/auth/otp/trigger", 200, "trigger", headers=ip, body={"phone": phone}).json()
    require(sent.get("status") == "sent", f"trigger: {sent}")

    # --- OTP verify
    pub("POST", "/auth/otp/verify", 400, "verify otp not digits", headers=ip, body={"phone": phone, "otp": "12ab56"})
    pub("POST", "/auth/otp/verify", 400, "verify missing otp", headers=ip, body={"phone": phone})
    pub("POST", "/auth/otp/verify", 400, "verify bad phone", headers=ip, body={"phone": "+1555", "otp": UAT_CODE})
    pub("POST", "/auth/otp/verify", 401, "verify wrong otp", headers=ip, body={"phone": phone, "otp": "000000"})
    pair = pub("POST", "/auth/otp/verify", 200, "verify", headers=ip, body={"phone": phone, "otp": UAT_CODE}).json()
    pub("POST", "/auth/otp/verify", 401, "verify used otp", headers=ip, body={"phone": phone, "otp": UAT_CODE})
    # more triggers for one phone than its bucket holds (capacity 3): the 4th is 429
    pub("POST", "/auth/otp/trigger", 200, "trigger 2", headers=ip, body={"phone": phone})
    pub("POST", "/auth/otp/trigger", 200, "trigger 3", headers=ip, body={"phone": "+91" + phone})
    limited = pub("POST", "/auth/otp/trigger", 429, "trigger per phone limited", headers=ip, body={"phone": "91" + phone})
    require(limited.header("Retry-After") is not None, "trigger 429 without Retry-After")
    # a locked OTP: the 5th wrong attempt locks it
    locked_phone = fresh_phone()
    pub("POST", "/auth/otp/trigger", 200, "trigger for lock", headers=ip, body={"phone": locked_phone})
    for attempt in range(4):
        pub("POST", "/auth/otp/verify", 401, f"verify wrong {attempt + 1}", headers=ip, body={"phone": locked_phone, "otp": "000001"})
    pub("POST", "/auth/otp/verify", {401, 429}, "verify wrong 5", headers=ip, body={"phone": locked_phone, "otp": "000001"})
    pub("POST", "/auth/otp/verify", 429, "verify locked", headers=ip, body={"phone": locked_phone, "otp": UAT_CODE})
    # an expired OTP (otp.ttl is 3s in scripts/api-checks.sh)
    expired_phone = fresh_phone()
    pub("POST", "/auth/otp/trigger", 200, "trigger for expiry", headers=ip, body={"phone": expired_phone})
    time.sleep(3.3)
    pub("POST", "/auth/otp/verify", 401, "verify expired", headers=ip, body={"phone": expired_phone, "otp": UAT_CODE})

    # --- refresh
    pub("POST", "/auth/token/refresh", 400, "refresh bad json", body=b"nope")
    pub("POST", "/auth/token/refresh", 400, "refresh missing field", body={})
    pub("POST", "/auth/token/refresh", 401, "refresh malformed token", body={"refresh_token": "abc"})
    pub("POST", "/auth/token/refresh", 401, "refresh unknown token", body={"refresh_token": "0" * 64})
    rotated = pub("POST", "/auth/token/refresh", 200, "refresh", body={"refresh_token": pair["refresh_token"]}).json()
    # a retry within tokens.refresh_reuse_interval (a lost answer) gets the same refresh token
    retried = pub("POST", "/auth/token/refresh", 200, "refresh retried", body={"refresh_token": pair["refresh_token"]}).json()
    require(retried.get("refresh_token") == rotated["refresh_token"], "refresh retried: another refresh token")
    second = pub("POST", "/auth/token/refresh", 200, "refresh successor", body={"refresh_token": rotated["refresh_token"]}).json()
    pub("POST", "/auth/token/refresh", 401, "refresh reused", body={"refresh_token": pair["refresh_token"]})
    # the reuse revoked the whole login: the current token is dead too
    pub("POST", "/auth/token/refresh", 401, "refresh current of reused", body={"refresh_token": second["refresh_token"]})

    # --- logout
    pub("POST", "/auth/logout", 401, "logout no token")
    pub("POST", "/auth/logout", 401, "logout basic auth", headers={"Authorization": "Basic eDp5"})
    pub("POST", "/auth/logout", 401, "logout garbage token", headers={"Authorization": "Bearer not.a.jwt"})
    pub("POST", "/auth/logout", 401, "logout alg none", headers={"Authorization": "Bearer eyJhbGciOiJub25lIiwia2lkIjoidDEifQ.eyJ1c2VyX2lkIjoidXNyXzEifQ."})
    login = login_pair(ip)
    bearer = {"Authorization": f"Bearer {login['access_token']}"}
    pub("POST", "/auth/logout", 400, "logout bad refresh token", headers=bearer, body={"refresh_token": "xyz"})
    pub("POST", "/auth/logout", 400, "logout bad json", headers=bearer, body=b"{")
    pub("POST", "/auth/logout", 204, "logout", headers=bearer, body={"refresh_token": login["refresh_token"]})
    pub("POST", "/auth/logout", 401, "logout again", headers=bearer)
    login2 = login_pair(ip)
    pub("POST", "/auth/logout", 204, "logout no body", headers={"Authorization": f"Bearer {login2['access_token']}"})

    # --- a web app (web.allowed_origins in scripts/api-checks.sh): the refresh token in a cookie
    app = {"Origin": WEB_ORIGIN}
    web_phone = fresh_phone()
    pub("POST", "/auth/otp/trigger", 200, "trigger for web", headers={**ip, **app}, body={"phone": web_phone})
    web = pub("POST", "/auth/otp/verify", 200, "web verify", headers={**ip, **app}, body={"phone": web_phone, "otp": UAT_CODE})
    cookie = (web.header("Set-Cookie") or "").split(";")[0]
    require(cookie.startswith("__Host-pg_refresh=") and "refresh_token" not in web.json(), f"web verify: {web.headers}")
    require(web.header("Access-Control-Allow-Origin") == WEB_ORIGIN, f"web verify without CORS: {web.headers}")
    pub("POST", "/auth/token/refresh", 403, "web refresh other origin", headers={"Origin": "https://other.example", "Cookie": cookie})
    pub("POST", "/auth/token/refresh", 403, "web refresh cross-site", headers={**app, "Cookie": cookie, "Sec-Fetch-Site": "cross-site"})
    pub("POST", "/auth/token/refresh", 400, "web refresh two credentials", headers={**app, "Cookie": cookie}, body={"refresh_token": "0" * 64})
    pub("POST", "/auth/token/refresh", 400, "web refresh two cookies", headers={**app, "Cookie": f"{cookie}; {cookie[:-1]}0"})
    pub("POST", "/auth/token/refresh", 401, "web refresh no cookie", headers=app)
    web_refreshed = pub("POST", "/auth/token/refresh", 200, "web refresh", headers={**app, "Cookie": cookie})
    cookie = (web_refreshed.header("Set-Cookie") or "").split(";")[0]
    web_bearer = {**app, "Authorization": f"Bearer {web_refreshed.json()['access_token']}"}
    pub("POST", "/auth/logout", 403, "web logout other origin", headers={**web_bearer, "Origin": "https://other.example", "Cookie": cookie})
    cleared = pub("POST", "/auth/logout", 204, "web logout", headers={**web_bearer, "Cookie": cookie})
    require((cleared.header("Set-Cookie") or "").startswith("__Host-pg_refresh=; Max-Age=0;"), f"web logout: {cleared.headers}")
    preflight = request(PUBLIC, "OPTIONS", "/user/profile", headers={**app, "Access-Control-Request-Method": "GET"})
    require(preflight.status == 204 and preflight.header("Access-Control-Allow-Origin") == WEB_ORIGIN, f"preflight: {preflight.status} {preflight.headers}")

    # --- sessions revoke
    login3 = login_pair(ip)
    adm("POST", f"/v1/users/{login3['user_id']}/revoke-sessions", 200, "revoke sessions")
    adm("POST", "/v1/users/usr_000000000000000000000000/revoke-sessions", 404, "revoke sessions unknown user")
    adm("POST", "/v1/users/somebody/revoke-sessions", 404, "revoke sessions malformed user")
    pub("POST", "/auth/token/refresh", 401, "refresh after admin revoke", body={"refresh_token": login3["refresh_token"]})

    # --- support staff: find a user, list and revoke sessions
    support_phone = fresh_phone()
    pub("POST", "/auth/otp/trigger", 200, "trigger for support", headers=ip, body={"phone": support_phone})
    support = pub("POST", "/auth/otp/verify", 200, "verify for support", headers=ip, body={"phone": support_phone, "otp": UAT_CODE}).json()
    found = adm("POST", "/v1/users/find", 200, "find user", body={"phone": support_phone}).json()
    require(found.get("user_id") == support["user_id"], f"find user: {found}")
    adm("POST", "/v1/users/find", 404, "find user unknown", body={"phone": "9000000000"})
    adm("POST", "/v1/users/find", 400, "find user bad phone", body={"phone": "12345"})
    adm("POST", "/v1/users/find", 400, "find user bad json", body=b"{")
    sessions = adm("GET", f"/v1/users/{support['user_id']}/sessions", 200, "list sessions").json()["items"]
    require(len(sessions) == 1, f"list sessions: {sessions}")
    adm("GET", "/v1/users/usr_000000000000000000000000/sessions", 404, "list sessions unknown user")
    adm("GET", "/v1/users/somebody/sessions", 404, "list sessions malformed user")
    adm("POST", f"/v1/users/{support['user_id']}/sessions/{sessions[0]['session_id']}/revoke", 200, "revoke one session")
    adm("POST", f"/v1/users/{support['user_id']}/sessions/0000000000000000/revoke", 404, "revoke unknown session")
    adm("POST", f"/v1/users/{support['user_id']}/sessions/nope/revoke", 404, "revoke malformed session")
    pub("POST", "/auth/token/refresh", 401, "refresh after session revoke", body={"refresh_token": support["refresh_token"]})

    # --- allowlists, quotas, usage
    adm("PATCH", f"/v1/partners/{p1['partner_id']}", 200, "partner quota", body={"quota": {"limit": 1000000, "period": "month"}, "allowed_cidrs": []})
    adm("PATCH", f"/v1/partners/{p1['partner_id']}", 200, "partner quota removed", body={"quota": None})
    adm("PATCH", f"/v1/partners/{p1['partner_id']}", 400, "partner bad cidr", body={"allowed_cidrs": ["10.0.0.0/33"]})
    adm("PATCH", f"/v1/keys/{k1b['key_id']}", 200, "key allowlist and quota", body={"allowed_cidrs": ["0.0.0.0/0", "::/0"], "quota": {"limit": 1000000, "period": "day"}})
    adm("PATCH", f"/v1/keys/{k1b['key_id']}", 400, "key bad quota", body={"quota": {"limit": 0, "period": "week"}})
    adm("PATCH", f"/v1/keys/{k1b['key_id']}", 400, "key empty update", body={})
    adm("PATCH", "/v1/keys/key_0000000000000000", 404, "update unknown key", body={"name": "x"})
    adm("GET", f"/v1/keys/{k1['key_id']}/usage?from=2026-01-01&to=2026-01-31", 200, "key usage")
    adm("GET", f"/v1/keys/{k1['key_id']}/usage?from=2026-02-30&to=2026-03-01", 400, "key usage bad date")
    adm("GET", "/v1/keys/key_0000000000000000/usage?from=2026-01-01&to=2026-01-02", 404, "usage of unknown key")
    adm("GET", f"/v1/partners/{p1['partner_id']}/usage?from=2026-01-01&to=2026-01-31", 200, "partner usage")
    adm("GET", f"/v1/partners/{p1['partner_id']}/usage?from=2026-01-31&to=2026-01-01", 400, "partner usage reversed")
    adm("GET", "/v1/partners/ptr_0000000000000000/usage?from=2026-01-01&to=2026-01-02", 404, "usage of unknown partner")

    # --- rotate and revoke
    adm("POST", f"/v1/keys/{k1b['key_id']}/rotate", 400, "rotate bad grace", body={"grace": "soon"})
    adm("POST", f"/v1/keys/{k1b['key_id']}/rotate", 400, "rotate grace wrong type", body={"grace": 5})
    rotated_key = adm("POST", f"/v1/keys/{k1b['key_id']}/rotate", 200, "rotate", body={"grace": "1h"}).json()
    require(rotated_key.get("previous_key_id") == k1b["key_id"], f"rotate: {rotated_key}")
    adm("POST", f"/v1/keys/{k1b['key_id']}/rotate", 409, "rotate expiring key")
    adm("POST", "/v1/keys/key_0000000000000000/rotate", 404, "rotate unknown key")
    adm("POST", "/v1/keys/nope/rotate", 404, "rotate malformed key")
    fresh = adm("POST", f"/v1/keys/{rotated_key['key_id']}/rotate", 200, "rotate no body").json()
    adm("POST", f"/v1/keys/{fresh['key_id']}/revoke", 200, "revoke key")
    adm("POST", f"/v1/keys/{fresh['key_id']}/revoke", 409, "revoke key again")
    adm("POST", f"/v1/keys/{fresh['key_id']}/rotate", 409, "rotate revoked key")
    adm("POST", "/v1/keys/key_0000000000000000/revoke", 404, "revoke unknown key")
    pub("GET", "/partner/v1/whoami", 401, "whoami revoked key", headers={**client_ip(), "X-API-Key": fresh["key"]})

    # --- ids chosen on creation, revisions and If-Match (what gatewayctl apply sends)
    chosen = adm("POST", "/v1/partners", 201, "create partner with id and controls", body={
        "partner_id": "ptr_00000000000c0f01", "name": "Chosen", "allowed_cidrs": ["10.0.0.0/8"],
        "quota": {"limit": 10, "period": "day"}, "status": "disabled"}).json()
    require(chosen["partner_id"] == "ptr_00000000000c0f01" and chosen["status"] == "disabled" and chosen["revision"] == 1
            and chosen["allowed_cidrs"] == ["10.0.0.0/8"], f"chosen partner: {chosen}")
    cid = chosen["partner_id"]
    adm("POST", "/v1/partners", 409, "create partner under a taken id", body={"partner_id": cid, "name": "Again"})
    adm("POST", "/v1/partners", 400, "create partner under a malformed id", body={"partner_id": "ptr_XYZ", "name": "Bad"})
    adm("POST", "/v1/partners", 400, "create partner bad status", body={"name": "Bad", "status": "paused"})
    adm("PATCH", f"/v1/partners/{cid}", 412, "update partner at a stale revision", headers={"If-Match": '"7"'}, body={"burst": 3})
    adm("PATCH", f"/v1/partners/{cid}", 400, "update partner weak If-Match", headers={"If-Match": 'W/"1"'}, body={"burst": 3})
    moved = adm("PATCH", f"/v1/partners/{cid}", 200, "update partner at its revision", headers={"If-Match": '"1"'}, body={"burst": 3, "status": "active"}).json()
    require(moved["revision"] == 2 and moved["status"] == "active" and moved["rate_limit"]["burst"] == 3, f"update at revision: {moved}")
    adm("POST", f"/v1/partners/{cid}/disable", 412, "disable partner at a stale revision", headers={"If-Match": '"1"'})
    adm("POST", f"/v1/partners/{cid}/enable", 400, "enable partner malformed If-Match", headers={"If-Match": "two"})
    chosen_key = adm("POST", f"/v1/partners/{cid}/keys", 201, "create key with id and controls", body={
        "key_id": "key_00000000000c0f01", "expires_at": "2030-01-01T00:00:00Z", "allowed_cidrs": ["10.1.0.0/16"],
        "quota": {"limit": 5, "period": "day"}, "name": "chosen"}).json()
    require(chosen_key["key_id"] == "key_00000000000c0f01" and chosen_key["expires_at"] == "2030-01-01T00:00:00Z", f"chosen key: {chosen_key}")
    kid = chosen_key["key_id"]
    adm("POST", f"/v1/partners/{cid}/keys", 409, "create key under a taken id", body={"key_id": kid})
    adm("POST", f"/v1/partners/{cid}/keys", 400, "create key expires_in and expires_at", body={"expires_in": "1d", "expires_at": "2030-01-01T00:00:00Z"})
    adm("POST", f"/v1/partners/{cid}/keys", 400, "create key expiring in the past", body={"expires_at": "2001-01-01T00:00:00Z"})
    adm("POST", f"/v1/partners/{cid}/keys", 400, "create key expires_at not a time", body={"expires_at": "next year"})
    shown = adm("GET", f"/v1/keys/{kid}", 200, "get chosen key").json()
    require(shown["revision"] == 1 and shown["allowed_cidrs"] == ["10.1.0.0/16"] and shown["quota"] == {"limit": 5, "period": "day"}, f"chosen key: {shown}")
    adm("PATCH", f"/v1/keys/{kid}", 412, "update key at a stale revision", headers={"If-Match": '"9"'}, body={"name": "x"})
    adm("POST", f"/v1/keys/{kid}/rotate", 412, "rotate key at a stale revision", headers={"If-Match": '"9"'})
    adm("POST", f"/v1/keys/{kid}/revoke", 412, "revoke key at a stale revision", headers={"If-Match": '"9"'})
    adm("POST", f"/v1/keys/{kid}/revoke", 400, "revoke key malformed If-Match", headers={"If-Match": "nine"})
    adm("POST", f"/v1/keys/{kid}/revoke", 200, "revoke key at its revision", headers={"If-Match": '"1"'})
    require(adm("GET", f"/v1/keys/{kid}", 200, "get revoked key").json()["revision"] == 2, "a revocation counts the revision up")

    # --- every admin operation but /healthz and /metrics needs the token
    for template, item in DOC.spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "patch") and "admin" in operation.get("tags", []) and operation.get("security") != []:
                path = template.replace("{partner_id}", p1["partner_id"]).replace("{key_id}", k1["key_id"]).replace("{user_id}", pair["user_id"]).replace("{admin_id}", "adm_0000000000000000").replace("{member_id}", "mbr_0000000000000000")
                adm(method.upper(), path, 401, f"{method} {template} without token", token=False, body={} if method == "post" else None)

    # --- audit
    adm("GET", "/v1/audit?limit=0", 400, "audit limit 0")
    adm("GET", "/v1/audit?limit=abc", 400, "audit limit abc")
    adm("GET", "/v1/audit?limit=1001", 400, "audit limit 1001")
    page = adm("GET", "/v1/audit?limit=3", 200, "audit limit 3").json()
    entries = page["items"]
    require(len(entries) == 3 and entries[0]["action"] == "key.revoke", f"audit newest first: {entries[:1]}")
    require(entries[0]["actor"] == "root" and entries[0]["note"] == "conformance-test", f"audit actor: {entries[0]}")
    older = adm("GET", f"/v1/audit?limit=3&after={page['next_cursor']}", 200, "audit page 2").json()["items"]
    require(older and not {e["id"] for e in older} & {e["id"] for e in entries}, f"audit page 2 repeats page 1: {older[:1]}")
    adm("GET", "/v1/audit?after=not-an-id", 400, "audit bad cursor")
    adm("GET", "/v1/audit?after=99999999999999999999-0", 400, "audit cursor beyond 64 bits")
    require(adm("GET", "/v1/audit?after=0-0", 200, "audit after the first possible id").json() == {"items": [], "next_cursor": None}, "audit after 0-0 is empty")
    adm("GET", "/v1/audit", 200, "audit")
    adm("GET", "/v1/audit?order=oldest&limit=2", 200, "audit oldest first")
    adm("GET", "/v1/audit?order=sideways", 400, "audit bad order")
    adm("GET", "/v1/audit?from=yesterday", 400, "audit bad from")
    adm("GET", "/v1/audit?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z", 200, "audit empty window")

    # --- personal admin credentials and roles
    created = adm("POST", "/v1/admins", 201, "create admin", body={"name": "conformance-support", "role": "support", "expires_in": "1d"}).json()
    adm("POST", "/v1/admins", 400, "create admin bad role", body={"name": "x", "role": "superuser"})
    adm("GET", "/v1/admins", 200, "list admins")
    adm("GET", f"/v1/admins/{created['admin_id']}", 200, "get admin")
    adm("GET", "/v1/admins/adm_0000000000000000", 404, "get unknown admin")
    support_headers = {"Authorization": f"Bearer {created['token']}", "X-Admin-Actor": "conformance-test"}
    R.check("POST", "/v1/partners", request(ADMIN, "POST", "/v1/partners", headers=support_headers, body={"name": "x"}), 403, "support creates a partner")
    adm("POST", f"/v1/admins/{created['admin_id']}/rotate", 200, "rotate admin", body={"expires_in": "2d"})
    adm("POST", f"/v1/admins/{created['admin_id']}/revoke", 200, "revoke admin")
    adm("POST", f"/v1/admins/{created['admin_id']}/revoke", 409, "revoke admin again")
    adm("POST", f"/v1/admins/{created['admin_id']}/rotate", 409, "rotate revoked admin")
    adm("POST", "/v1/admins/adm_0000000000000000/revoke", 404, "revoke unknown admin")
    chosen_admin = adm("POST", "/v1/admins", 201, "create admin with id and expires_at", body={
        "admin_id": "adm_00000000000c0f01", "name": "conformance-chosen", "role": "auditor", "expires_at": "2030-01-01T00:00:00Z"}).json()
    require(chosen_admin["admin_id"] == "adm_00000000000c0f01" and chosen_admin["expires_at"] == "2030-01-01T00:00:00Z", f"chosen admin: {chosen_admin}")
    adm("POST", "/v1/admins", 409, "create admin under a taken id", body={"admin_id": "adm_00000000000c0f01", "name": "again", "role": "auditor"})
    adm("POST", "/v1/admins/adm_00000000000c0f01/rotate", 412, "rotate admin at a stale revision", headers={"If-Match": '"5"'})
    adm("POST", "/v1/admins/adm_00000000000c0f01/revoke", 412, "revoke admin at a stale revision", headers={"If-Match": '"5"'})
    adm("POST", "/v1/admins/adm_00000000000c0f01/revoke", 200, "revoke admin at its revision", headers={"If-Match": '"1"'})

    # --- the authorization listener: forward authorization and the verify API (docs/edges.md)
    authz("GET", "/healthz", 200, "healthz authz")
    edge = {**client_ip(), "X-Original-URI": "/edge-orders/7?x=1", "X-Original-Method": "POST"}
    allowed = authz("GET", "/forward", 200, "forward allowed (nginx)", headers={**edge, "X-API-Key": k1["key"]})
    require(allowed.header("X-Gateway-Key-Id") == k1["key_id"] and allowed.header("X-Gateway-Assertion"), f"forward identity: {allowed.headers}")
    traefik = {**client_ip(), "X-Forwarded-Uri": "/edge-orders/7", "X-Forwarded-Method": "GET", "X-Forwarded-Host": "api.example.com"}
    authz("GET", "/forward", 200, "forward allowed (traefik)", headers={**traefik, "X-API-Key": k1["key"]})
    authz("GET", "/forward", 401, "forward no key", headers=edge)
    authz("GET", "/forward", 403, "forward key without scope", headers={**edge, "X-API-Key": k2["key"]})
    authz("GET", "/forward", 404, "forward no route", headers={**client_ip(), "X-Original-URI": "/nowhere", "X-API-Key": k1["key"]})
    authz("GET", "/forward", 404, "forward gateway path", headers={**client_ip(), "X-Original-URI": "/auth/otp/trigger"})
    authz("GET", "/forward", 400, "forward names no request", headers=client_ip())
    authz("GET", "/forward", 400, "forward path not canonical", headers={**client_ip(), "X-Original-URI": "/edge-orders/a%2Fb"})
    ip = client_ip()
    for i in range(20):
        request(AUTHZ, "GET", "/forward", headers={**ip, "X-Original-URI": "/edge-orders/1", "X-API-Key": f"pgk_live_guess{i}"})
    authz("GET", "/forward", 429, "forward failed-key budget spent", headers={**ip, "X-Original-URI": "/edge-orders/1", "X-API-Key": "pgk_live_guess"})
    verifier = adm("POST", "/v1/admins", 201, "create verifier", body={"name": "conformance-verifier", "role": "verifier"}).json()["token"]
    good = authz("POST", "/v1/verify", 200, "verify key", token=verifier, headers=client_ip(), body={"api_key": k1["key"], "route": "edge-orders"}).json()
    require(good["valid"] is True and good["key_id"] == k1["key_id"] and good["rate_limit"]["limit"] == 1000, f"verify: {good}")
    bad = authz("POST", "/v1/verify", 200, "verify unissued key", token=verifier, headers=client_ip(), body={"api_key": unissued_key()}).json()
    require(bad["valid"] is False and bad["code"] == "INVALID_API_KEY", f"verify unissued: {bad}")
    authz("POST", "/v1/verify", 400, "verify no credential", token=verifier, body={})
    authz("POST", "/v1/verify", 400, "verify unknown route", token=verifier, body={"api_key": k1["key"], "route": "nowhere"})
    authz("POST", "/v1/verify", 401, "verify without credential", body={"api_key": k1["key"]})
    authz("POST", "/v1/verify", 403, "verify as owner", token=ADMIN_TOKEN, body={"api_key": k1["key"]})
    ip = client_ip()
    for i in range(20):
        request(AUTHZ, "POST", "/v1/verify", headers={**ip, "Authorization": f"Bearer {verifier}"}, body={"api_key": f"pgk_live_guess{i}"})
    authz("POST", "/v1/verify", 429, "verify failed-key budget spent", token=verifier, headers=ip, body={"api_key": "pgk_live_guess"})

    # --- erasure
    erased = login_pair(client_ip())
    adm("POST", f"/v1/users/{erased['user_id']}/erase", 200, "erase user")
    adm("POST", f"/v1/users/{erased['user_id']}/erase", 404, "erase erased user")
    pub("POST", "/auth/token/refresh", 401, "refresh after erasure", body={"refresh_token": erased["refresh_token"]})

    # --- 431 on both listeners (max_header_bytes 16384 in scripts/api-checks.sh)
    for method, path in [("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/.well-known/jwks.json"), ("POST", "/auth/otp/trigger"),
                         ("POST", "/auth/otp/verify"), ("POST", "/auth/token/refresh"), ("POST", "/auth/logout"),
                         ("POST", "/partner/v1/sdk-token"), ("GET", "/partner/v1/whoami")]:
        pub(method, path, 431, f"431 {path}", headers={"X-Big": "a" * 20000}, body=b"{}" if method == "POST" else None)
    for template, item in DOC.spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "patch") and "admin" in operation.get("tags", []):
                path = template.replace("{partner_id}", p1["partner_id"]).replace("{key_id}", k1["key_id"]).replace("{user_id}", pair["user_id"]).replace("{admin_id}", "adm_0000000000000000").replace("{member_id}", "mbr_0000000000000000")
                adm(method.upper(), path, 431, f"431 admin {template}", headers={"X-Big": "a" * 20000})

    # --- not in the document but in the error shape: unknown path, wrong method, parser errors
    for base, path, method, status in [(PUBLIC, "/nowhere", "GET", 404), (PUBLIC, "/auth/otp/trigger", "GET", 404),
                                       (ADMIN, "/v1/nowhere", "GET", 404)]:
        reply = request(base, method, path, headers=admin_headers() if base == ADMIN else {})
        require(reply.status == status, f"{method} {path}: expected {status}, got {reply.status}")
        for problem in DOC.error_shape_problems(reply):
            R.problems.append(f"{method} {path} -> {reply.status}: {problem}")
    host, port = PUBLIC.split("//")[1].split(":")
    smuggle = raw_exchange(host, int(port), b"POST /auth/otp/trigger HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    require(smuggle.startswith(b"HTTP/1.1 400"), f"CL+TE: {smuggle[:80]!r}")
    require(b'"INVALID_REQUEST"' in smuggle and b"x-request-id" in smuggle.lower(), f"CL+TE answer not in the error shape: {smuggle[:300]!r}")
    host, port = ADMIN.split("//")[1].split(":")
    bad = raw_exchange(host, int(port), b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad\x01: 1\r\n\r\n")
    require(bad.startswith(b"HTTP/1.1 400") and b'"INVALID_REQUEST"' in bad, f"admin parser error: {bad[:300]!r}")

    portal_scenarios()

    with open(credentials_path, "w", encoding="utf-8") as handle:
        schemathesis_login = login_pair(client_ip())
        handle.write(f"API_ACCESS_TOKEN={schemathesis_login['access_token']}\n")
        handle.write(f"API_KEY={k1['key']}\n")
        target = adm("POST", "/v1/partners", 201, "schemathesis partner", body={"name": "Schemathesis target"}).json()
        target_key = adm("POST", f"/v1/partners/{target['partner_id']}/keys", 201, "schemathesis key", body={}).json()
        handle.write(f"API_ST_PARTNER_ID={target['partner_id']}\n")
        handle.write(f"API_ST_KEY_ID={target_key['key_id']}\n")
        handle.write(f"API_ST_USER_ID={schemathesis_login['user_id']}\n")
        target_admin = adm("POST", "/v1/admins", 201, "schemathesis admin", body={"name": "Schemathesis target", "role": "auditor"}).json()
        handle.write(f"API_ST_ADMIN_ID={target_admin['admin_id']}\n")
        # A partner_admin of the target partner signed in, and another member to act on.
        adm("POST", f"/v1/partners/{target['partner_id']}/members", 201, "schemathesis member",
            body={"email": "schemathesis@target.example", "name": "Schemathesis", "role": "partner_admin"})
        acted_on = adm("POST", f"/v1/partners/{target['partner_id']}/members", 201, "schemathesis other member",
                       body={"email": "other@target.example", "name": "Other", "role": "viewer"}).json()
        handle.write(f"API_ST_MEMBER_ID={acted_on['member_id']}\n")
        session = portal_sign_in("schemathesis@target.example", client_ip())
        handle.write(f"API_PORTAL_SESSION={session.split('=', 1)[1]}\n")
        handle.write(f"API_VERIFIER_TOKEN={verifier}\n")


def login_pair(ip):
    phone = fresh_phone()
    pub("POST", "/auth/otp/trigger", 200, "trigger for login", headers=ip, body={"phone": phone})
    return pub("POST", "/auth/otp/verify", 200, "verify for login", headers=ip, body={"phone": phone, "otp": UAT_CODE}).json()


def redis_outage():
    """Every operation that needs Redis answers 503 SERVICE_UNAVAILABLE while it is frozen."""
    partner = adm("POST", "/v1/partners", 201, "outage partner", body={"name": "Outage"}).json()
    verifier = adm("POST", "/v1/admins", 201, "outage verifier", body={"name": "outage-verifier", "role": "verifier"}).json()["token"]
    pid_ = partner["partner_id"]
    used = adm("POST", f"/v1/partners/{pid_}/keys", 201, "outage key", body={}).json()
    unused = adm("POST", f"/v1/partners/{pid_}/keys", 201, "outage unused key", body={}).json()
    pub("GET", "/partner/v1/whoami", 200, "outage warm key cache", headers={**client_ip(), "X-API-Key": used["key"]})
    login = login_pair(client_ip())
    user_login = login_pair(client_ip())
    bearer = {"Authorization": f"Bearer {login['access_token']}"}
    adm("POST", f"/v1/partners/{pid_}/members", 201, "outage member", body={"email": "outage@outage.example", "name": "Outage", "role": "viewer"})
    portal_cookie = portal_sign_in("outage@outage.example", client_ip())
    redis_pid = int(os.environ["API_REDIS_PID"])
    os.kill(redis_pid, signal.SIGSTOP)
    try:
        # readiness follows the subscription's heartbeat (500 ms), not a PING per probe
        deadline = time.time() + 5
        while time.time() < deadline and request(PUBLIC, "GET", "/readyz").status != 503:
            time.sleep(0.1)
        pub("GET", "/readyz", 503, "readyz redis frozen")
        adm("GET", "/v1/status", 200, "admin status redis frozen")
        pub("GET", "/healthz", 200, "healthz redis frozen")
        adm("GET", "/healthz", 200, "admin healthz redis frozen", token=False)
        adm("GET", "/metrics", 200, "metrics redis frozen", token=False)
        pub("GET", "/.well-known/jwks.json", 200, "jwks redis frozen")
        pub("POST", "/auth/otp/trigger", 503, "trigger redis frozen", headers=client_ip(), body={"phone": fresh_phone()})
        pub("POST", "/auth/otp/verify", 503, "verify redis frozen", body={"phone": fresh_phone(), "otp": UAT_CODE})
        pub("POST", "/auth/token/refresh", 503, "refresh redis frozen", body={"refresh_token": "1" * 64})
        pub("POST", "/auth/logout", 503, "logout redis frozen", headers=bearer)
        pub("POST", "/partner/v1/sdk-token", 503, "sdk redis frozen", headers={**client_ip(), "X-API-Key": used["key"]}, body={"phone": fresh_phone(), "driver_id": "d"})
        # the key cache is dropped when the invalidation subscription is lost, so a cached key
        # may or may not still answer from memory depending on whether that was noticed yet
        pub("GET", "/partner/v1/whoami", {200, 503}, "whoami cached key redis frozen", headers={**client_ip(), "X-API-Key": used["key"]})
        pub("GET", "/partner/v1/whoami", 503, "whoami uncached key redis frozen", headers={**client_ip(), "X-API-Key": unused["key"]})
        adm("GET", "/v1/partners", 503, "partners redis frozen")
        adm("POST", "/v1/partners", 503, "create partner redis frozen", body={"name": "frozen"})
        adm("GET", f"/v1/partners/{pid_}", 503, "get partner redis frozen")
        adm("PATCH", f"/v1/partners/{pid_}", 503, "update partner redis frozen", body={"burst": 3})
        adm("GET", f"/v1/keys/{unused['key_id']}", 503, "get key redis frozen")
        adm("POST", "/v1/keys/find", 503, "find key redis frozen", body={"key": unused["key"]})
        adm("POST", f"/v1/partners/{pid_}/disable", 503, "disable redis frozen")
        adm("POST", f"/v1/partners/{pid_}/enable", 503, "enable redis frozen")
        adm("POST", f"/v1/partners/{pid_}/keys", 503, "create key redis frozen", body={})
        adm("GET", f"/v1/partners/{pid_}/keys", 503, "list keys redis frozen")
        adm("POST", f"/v1/keys/{unused['key_id']}/rotate", 503, "rotate redis frozen")
        adm("POST", f"/v1/keys/{unused['key_id']}/revoke", 503, "revoke redis frozen")
        adm("POST", f"/v1/users/{user_login['user_id']}/revoke-sessions", 503, "revoke sessions redis frozen")
        adm("POST", "/v1/users/find", 503, "find user redis frozen", body={"phone": fresh_phone()})
        adm("GET", f"/v1/users/{user_login['user_id']}/sessions", 503, "list sessions redis frozen")
        adm("POST", f"/v1/users/{user_login['user_id']}/sessions/0123456789abcdef/revoke", 503, "revoke session redis frozen")
        adm("GET", "/v1/audit", 503, "audit redis frozen")
        portal("GET", "/keys", 503, "portal keys redis frozen", cookie=portal_cookie)
        portal("POST", "/session/code", 503, "portal code redis frozen", headers=client_ip(), body={"email": "frozen@outage.example"})
        authz("GET", "/forward", 503, "forward uncached key redis frozen", headers={**client_ip(), "X-Original-URI": "/edge-orders/1", "X-API-Key": unused["key"]})
        # the verifier's credential is read from Redis (or remembered for a second): either
        # way the uncached key needs Redis
        authz("POST", "/v1/verify", 503, "verify uncached key redis frozen", token=verifier, headers=client_ip(), body={"api_key": unused["key"]})
    finally:
        os.kill(redis_pid, signal.SIGCONT)
    deadline = time.time() + 10
    while time.time() < deadline and request(PUBLIC, "GET", "/readyz").status != 200:
        time.sleep(0.1)
    pub("GET", "/readyz", 200, "readyz redis back")
    # a command that timed out while Redis was frozen still runs when it thaws (a timeout
    # cannot tell), so the logout above may have happened after all: 204 or 401
    pub("POST", "/auth/logout", {204, 401}, "logout redis back", headers=bearer)
    pub("GET", "/partner/v1/whoami", 200, "whoami redis back", headers={**client_ip(), "X-API-Key": unused["key"]})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--credentials", help="write API_ACCESS_TOKEN and API_KEY here for schemathesis")
    parser.add_argument("--redis-outage", action="store_true")
    args = parser.parse_args()
    started = time.time()
    try:
        if args.redis_outage:
            redis_outage()
        else:
            scenarios(args.credentials or os.devnull)
    except Exception as error:  # a scenario that crashed is a failure with its cause shown
        R.problems.append(f"scenario aborted: {type(error).__name__}: {error}")
    if True:
        print("operations and statuses:")
        print("\n".join(R.coverage()))
    print(f"{R.count} responses checked against {os.path.relpath(os.environ.get('API_OPENAPI', 'docs/openapi.yaml'))} in {time.time() - started:.1f} s")
    for problem in R.problems:
        print(f"  PROBLEM {problem}")
    print(f"conformance: {R.count - len(R.problems)} passed, {len(R.problems)} failed")
    sys.exit(1 if R.problems else 0)


if __name__ == "__main__":
    main()
