"""The partner portal (docs/portal.md) in headless Chromium against a running stack.

scripts/portal-browser-test.sh starts the stack (scripts/run.sh on free ports, the portal's
codes going to PG_PORTAL_CODE_WEBHOOK) and runs this with GATEWAY_URL (the portal's origin),
GATEWAY_ADMIN_URL, GATEWAY_ADMIN_TOKEN, GATECTL (the gatewayctl binary), WEBHOOK_PORT,
GATEWAY_PORTAL_WEBHOOK_SECRET and SCREENSHOTS (where each page's picture goes).

An admin invites a member with gatewayctl; the member signs in with the code from the
webhook, creates a key (shown once, gone on reload), calls an api_key route with it, sees the
call on the usage chart (its data read from the page), downloads the CSV, rotates the key (the
old one keeps working during its grace), narrows its allowlist and sees a call from another
address refused, revokes it, is still shown a key made while the audit trail could not be
written (its refusal carries the key), and signs out. Chromium and chromedriver are Debian's; every wait
is for something on the page or the wire, never a fixed sleep.
"""
import base64
import glob
import hashlib
import hmac
import http.client
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

GATEWAY = os.environ["GATEWAY_URL"]
SCREENSHOTS = os.environ["SCREENSHOTS"]
SECRET = os.environ["GATEWAY_PORTAL_WEBHOOK_SECRET"].encode()
EMAIL = "asha@acme.example"
started = time.time()


class Webhook(http.server.BaseHTTPRequestHandler):
    """The portal's email sender: keeps each code whose signature checks out."""
    codes = {}

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        stamp, signature = dict(part.split("=", 1) for part in self.headers["X-Gateway-Signature"].split(",")).values()
        expected = hmac.new(SECRET, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected), "the code webhook's signature does not check out"
        message = json.loads(body)
        assert set(message) == {"email", "message"}, message
        Webhook.codes[message["email"]] = next(word for word in message["message"].split() if word.isdigit() and len(word) == 6)
        self.send_response(204)
        self.end_headers()


def gatewayctl(*arguments):
    result = subprocess.run([os.environ["GATECTL"], *arguments, "-o", "json"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"gatewayctl {' '.join(arguments)}: {result.stderr}"
    return json.loads(result.stdout)


def redis(*arguments):
    """A command to the stack's own Redis (scripts/run.sh's, on DEV_REDIS_PORT)."""
    subprocess.run(["redis-cli", "-p", os.environ["DEV_REDIS_PORT"], *arguments], capture_output=True, check=True)


def call_route(key, source="127.0.0.1"):
    """GET /rides/hello with the key, from `source` (loopback addresses all reach the gateway)."""
    host, port = GATEWAY.split("//")[1].split(":")
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10, source_address=(source, 0))
    try:
        connection.request("GET", "/rides/hello", headers={"X-API-Key": key, "Host": f"{host}:{port}"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def browser(profile, downloads):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--user-data-dir={profile}",
                 "--window-size=1280,960", "--lang=en-GB"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Portal:
    def __init__(self, driver):
        self.driver = driver
        # Generous: the test runs beside every other one, on a machine that may be busy.
        self.wait = WebDriverWait(driver, 60, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))

    def el(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def visible(self, element_id):
        self.wait.until(lambda d: self.el(element_id).is_displayed(), f"#{element_id} never showed (error: {self.el('error').text!r})")

    def status_has(self, text):
        self.wait.until(lambda d: text in self.el("status").text, f"status never said {text!r} (error: {self.el('error').text!r}, status: {self.el('status').text!r})")

    def shot(self, name):
        """The whole page, beyond the window's height, at the window's width."""
        metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        width, height = metrics["cssLayoutViewport"]["clientWidth"], metrics["cssContentSize"]["height"]
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        picture = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
        with open(os.path.join(SCREENSHOTS, name + ".png"), "wb") as file:
            file.write(base64.b64decode(picture["data"]))

    def go(self, page, ready):
        """Opens a page and waits until `ready`; a page the gateway could not answer in time
        (its Redis deadline passed on a busy machine: the page shows the 503) is opened again."""
        self.driver.get(f"{GATEWAY}/portal/#{page}")

        def loaded(driver):
            try:
                if self.el(f"page-{page}").is_displayed() and ready(driver):
                    return True
            except (NoSuchElementException, StaleElementReferenceException):
                pass  # not there yet, or redrawn while being looked at
            if self.el("error").text:
                driver.refresh()
            return False

        self.wait.until(loaded, f"the {page} page never showed what was awaited (error: {self.el('error').text!r})")

    def key_row(self, key_id):
        return self.driver.find_element(By.CSS_SELECTOR, f'#keys-table tr[data-key="{key_id}"]')

    def click_key_button(self, key_id, label):
        """Clicks a button of a key's row; the table can be redrawn between finding the button
        and clicking it (a stale element: the wait then looks again)."""
        def clicked(d):
            self.key_row(key_id).find_element(By.XPATH, f".//button[text()='{label}']").click()
            return True

        self.wait.until(clicked, f"no {label} button could be clicked on key {key_id}")

    def answer_prompt(self, text=None):
        self.wait.until(lambda d: self.alert() is not None, "no dialog opened")
        alert = self.driver.switch_to.alert
        if text is not None:
            alert.send_keys(text)
        alert.accept()

    def alert(self):
        try:
            return self.driver.switch_to.alert
        except Exception:  # noqa: BLE001 - no dialog yet
            return None

    def stored(self):
        return self.driver.execute_script("return {local: localStorage.length, session: sessionStorage.length, cookie: document.cookie}")

    def chart(self):
        return self.driver.execute_script(
            "const chart = Chart.getChart('usage-chart');"
            "return chart ? {labels: chart.data.labels, sets: Object.fromEntries(chart.data.datasets.map(s => [s.label, s.data]))} : null;")


def main():
    os.makedirs(SCREENSHOTS, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["WEBHOOK_PORT"])), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    partner = gatewayctl("partners", "create", "--name", "Acme Mobility")["partner_id"]
    member = gatewayctl("members", "create", "--partner", partner, "--email", EMAIL, "--name", "Asha", "--role", "partner_admin")
    gatewayctl("members", "create", "--partner", partner, "--email", "ravi@acme.example", "--name", "Ravi", "--role", "developer")
    print(f"gatewayctl invited {member['member_id']} ({EMAIL}) to {partner}")

    with tempfile.TemporaryDirectory() as profile, tempfile.TemporaryDirectory() as downloads:
        driver = browser(profile, downloads)
        try:
            run(Portal(driver), downloads, partner)
        except Exception:
            driver.save_screenshot(os.path.join(tempfile.gettempdir(), "portal-test-failure.png"))
            for entry in driver.get_log("browser"):
                print("browser:", entry["message"], file=sys.stderr)
            raise
        finally:
            driver.quit()
    server.shutdown()
    print(f"portal browser test passed in {time.time() - started:.1f} s")


def run(page, downloads, partner):
    driver = page.driver
    # --- sign in with the code from the webhook, from the keyboard alone
    driver.get(f"{GATEWAY}/portal/")
    page.visible("email")
    page.shot("signin")
    page.el("email").send_keys(EMAIL + Keys.ENTER)
    page.visible("code")
    page.wait.until(lambda d: EMAIL in Webhook.codes, "no code reached the webhook")
    page.el("code").send_keys(Webhook.codes[EMAIL] + Keys.ENTER)
    page.visible("page-keys")
    assert "Asha (partner_admin)" in page.el("who").text, page.el("who").text
    print(f"signed in with the code from the webhook ({time.time() - started:.1f} s)")

    # --- a key, shown once
    page.el("key-name").send_keys("checkout-backend")
    page.el("create-key-button").click()
    page.visible("new-key")
    key = page.el("new-key-text").get_attribute("value")
    assert key.startswith("pgk_live_"), key
    page.shot("new-key")
    key_id = page.el("status").text.split()[1]
    driver.refresh()
    page.visible("page-keys")
    page.wait.until(lambda d: page.key_row(key_id).is_displayed())
    assert not page.el("new-key").is_displayed() and key not in driver.page_source, "the key is still there after a reload"
    assert page.stored() == {"local": 0, "session": 0, "cookie": ""}, page.stored()
    print("created a key; after a reload it is gone from the page, and nothing is stored")

    # --- the key calls the api_key route; the call is on the chart and in the CSV
    status, echoed = call_route(key)
    assert status == 200 and echoed["headers"]["x-gateway-partner-id"] == [partner], (status, echoed)
    page.go("usage", lambda d: any(o.get_attribute("value") == key_id for o in d.find_elements(By.CSS_SELECTOR, "#usage-key option")))
    driver.find_element(By.CSS_SELECTOR, f'#usage-key option[value="{key_id}"]').click()

    def shows(dataset, at_least):
        chart = page.chart()
        if chart is None or sum(chart["sets"].get(dataset, [])) < at_least:
            page.el("show-usage").click()  # counts reach Redis within a second: ask again
            return False
        return True

    page.wait.until(lambda d: shows("Allowed", 1), "the call never showed on the chart")
    chart = page.chart()
    assert sum(chart["sets"]["Allowed"]) == 1 and sum(chart["sets"]["Upstream 2xx"]) == 1, chart
    page.shot("usage")
    print(f"the chart shows the call: {dict((label, sum(values)) for label, values in chart['sets'].items())}")
    page.el("download-csv").click()
    page.wait.until(lambda d: glob.glob(os.path.join(downloads, "usage-*.csv")), "no CSV downloaded")
    [csv_path] = glob.glob(os.path.join(downloads, "usage-*.csv"))
    page.wait.until(lambda d: open(csv_path, encoding="utf-8").read().count("\n") > 1)
    lines = open(csv_path, encoding="utf-8").read().splitlines()
    assert lines[0] == "date,allowed,refused_auth,refused_limit,refused_quota,upstream_2xx,upstream_4xx,upstream_5xx", lines[0]
    assert sum(int(line.split(",")[1]) for line in lines[1:]) == 1, lines
    print(f"downloaded {os.path.basename(csv_path)}: {len(lines) - 1} days")

    # --- rotate: the old key keeps working for its grace
    page.go("keys", lambda d: page.key_row(key_id).is_displayed())
    page.click_key_button(key_id, "Rotate")
    page.answer_prompt("1h")
    page.status_has("Rotated")
    new_key = page.el("new-key-text").get_attribute("value")
    assert new_key.startswith("pgk_live_") and new_key != key
    page.el("done-key").click()
    assert call_route(key)[0] == 200 and call_route(new_key)[0] == 200, "after a rotation both keys work during the grace"
    rows = driver.find_elements(By.CSS_SELECTOR, "#keys-table tbody tr")
    new_id = next(row.get_attribute("data-key") for row in rows if row.get_attribute("data-key") != key_id)
    assert "expiring" in page.key_row(key_id).text, page.key_row(key_id).text
    print("rotated: the old key works during its grace, beside the new one")

    # --- narrow the new key's allowlist: a call from another address is refused
    page.click_key_button(new_id, "Edit")
    page.visible("edit-key")
    page.el("edit-cidrs").send_keys("127.0.0.1/32")
    page.el("save-key").click()
    page.status_has("saved")
    page.wait.until(lambda d: "127.0.0.1/32" in page.key_row(new_id).text)
    refused, body = call_route(new_key, source="127.0.0.2")
    assert refused == 403 and body["error"]["code"] == "FORBIDDEN", (refused, body)
    assert call_route(new_key)[0] == 200
    page.shot("keys")
    page.go("usage", lambda d: any(o.get_attribute("value") == new_id for o in d.find_elements(By.CSS_SELECTOR, "#usage-key option")))
    driver.find_element(By.CSS_SELECTOR, f'#usage-key option[value="{new_id}"]').click()
    page.wait.until(lambda d: shows("Refused", 1), "the refused call never showed on the chart")
    print("narrowed the allowlist to 127.0.0.1/32: a call from 127.0.0.2 is refused (403), and on the chart")

    # --- revoke, members, audit, a phone's screen, sign out
    page.go("keys", lambda d: page.key_row(new_id).is_displayed())
    page.click_key_button(new_id, "Revoke")
    page.answer_prompt()
    page.status_has("revoked")
    assert call_route(new_key)[0] == 401, "a revoked key is refused"
    page.go("members", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#members-table tbody tr")) == 2)
    page.shot("members")
    page.go("audit", lambda d: "key.revoke" in page.el("audit-table").text)
    audit = page.el("audit-table").text
    for action in ("member.sign_in", "key.create", "key.rotate", "key.update", "key.revoke"):
        assert action in audit, f"{action} not in the audit page"
    page.shot("audit")
    driver.set_window_size(390, 960)
    page.go("keys", lambda d: page.key_row(key_id).is_displayed())
    page.shot("phone")
    driver.set_window_size(1280, 960)

    # --- a key made while the audit trail cannot be written: refused, and shown all the same
    redis("RENAME", "pg:audit", "pg:audit:kept")
    redis("SET", "pg:audit", "not a stream")
    page.el("key-name").send_keys("unaudited")
    page.el("create-key-button").click()
    page.wait.until(lambda d: "audit entry could not be written" in page.el("error").text, "no refusal shown")
    unaudited = page.el("new-key-text").get_attribute("value")
    assert page.el("new-key").is_displayed() and unaudited.startswith("pgk_live_"), unaudited
    assert call_route(unaudited)[0] == 200, "the key the refusal carried works"
    redis("DEL", "pg:audit")
    redis("RENAME", "pg:audit:kept", "pg:audit")
    page.el("done-key").click()
    print("with the audit trail unwritable, a new key is refused (503 AUDIT_UNAVAILABLE) and still shown once")

    page.el("sign-out").click()
    page.visible("page-signin")
    driver.refresh()
    page.visible("email")
    assert not page.el("page-keys").is_displayed()
    me = driver.execute_async_script("const done = arguments[0]; fetch('/portal/v1/me').then(r => done(r.status));")
    assert me == 401, me
    print(f"revoked the key, signed out; the session is gone ({time.time() - started:.1f} s)")


if __name__ == "__main__":
    main()
