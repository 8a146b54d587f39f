"""The reference web app (examples/web) in headless Chromium against a running stack.

scripts/browser-test.sh starts the stack (scripts/run.sh on free ports) and runs this with
GATEWAY_URL and WEB_URL (the app's allowed origin, both on localhost) and OTHER_PORT: a free
port where this script serves the same app from an origin not in web.allowed_origins.

Chromium and chromedriver are Debian's (/usr/bin); Selenium drives them; nothing is
downloaded. Every wait is for something on the page, never a fixed sleep.
"""
import functools
import http.server
import json
import os
import sys
import tempfile
import time
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

GATEWAY = os.environ["GATEWAY_URL"]
WEB = os.environ["WEB_URL"]
OTHER = f"http://localhost:{os.environ['OTHER_PORT']}"
APP_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "web")
PHONE = "9876543210"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_other_origin():
    """The same static app, served from an origin the gateway does not allow."""
    handler = functools.partial(QuietHandler, directory=APP_DIR)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["OTHER_PORT"])), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Check:
    def __init__(self, driver):
        self.driver = driver
        self.wait = WebDriverWait(driver, 20)
        self.urls, self.seen = {}, []

    def open(self, origin):
        self.driver.get(f"{origin}/?gateway={GATEWAY}")

    def text(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def status_is(self, status):
        # "checking the session…" until the page's first refresh has been answered.
        self.wait.until(lambda d: self.text("status") == status, f"status never became {status!r} (error: {self.text('error')!r})")

    def nothing_stored(self):
        stored = self.driver.execute_script(
            "return {local: localStorage.length, session: sessionStorage.length, cookie: document.cookie}")
        assert stored == {"local": 0, "session": 0, "cookie": ""}, f"the page stored something: {stored}"

    def log_in(self):
        phone = self.driver.find_element(By.ID, "phone")
        phone.clear()
        phone.send_keys(PHONE)
        self.driver.find_element(By.ID, "send-code").click()
        self.wait.until(lambda d: d.find_element(By.ID, "otp").get_attribute("placeholder") == "code sent", "the code was not sent")
        self.driver.find_element(By.ID, "otp").send_keys("123456")
        self.driver.find_element(By.ID, "verify").click()
        self.status_is("logged in")

    def statuses(self, path):
        """The statuses the browser's network layer saw for requests to `path` (CORS-blocked
        included) since the record started. The log is read as it grows (Chromium may record a
        blocked response after the page has seen its fetch fail), and a status is matched to
        its request's URL only when asked: an `ExtraInfo` event may come before the request's."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message["method"] == "Network.requestWillBeSent":
                self.urls[params["requestId"]] = params["request"]["url"]
            elif message["method"] == "Network.responseReceivedExtraInfo":
                self.seen.append((params["requestId"], params["statusCode"]))
            elif message["method"] == "Network.responseReceived":
                self.urls.setdefault(params["requestId"], params["response"]["url"])
                self.seen.append((params["requestId"], params["response"]["status"]))
        return [status for request, status in self.seen if self.urls.get(request, "").endswith(path)]

    def start_record(self):
        self.driver.get_log("performance")
        self.urls, self.seen = {}, []

    def fetch(self, script):
        """Runs `script` (an expression yielding a promise) in the page: what it resolved to, or the error's name."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"({script}).then(r => r.text().then(t => done({{status: r.status, body: t}})), e => done({{error: e.name}}));")


def main():
    other = serve_other_origin()
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            page = Check(driver)
            page.open(WEB)
            page.status_is("logged out")
            page.log_in()
            page.nothing_stored()
            print("logged in on the reference app; nothing in localStorage, sessionStorage or document.cookie")
            # The access token lives a day: its expiry is shown with its date, not a time alone.
            expires = page.text("expires")
            tomorrow = time.gmtime(time.time() + 86400)
            assert str(tomorrow.tm_year) in expires or str(tomorrow.tm_year % 100) in expires, f"no date in the expiry: {expires!r}"
            print(f"the access token expires {expires}")

            driver.refresh()
            page.status_is("logged in")
            page.nothing_stored()
            user = page.text("user")
            print(f"after a reload still logged in through the cookie, as {user}")

            driver.find_element(By.ID, "call-profile").click()
            page.wait.until(lambda d: '"status": 200' in page.text("identity"), "the bearer call did not answer 200")
            identity = json.loads(page.text("identity"))
            assert identity.get("x-gateway-user-id") == [user], identity
            assert identity.get("x-gateway-auth-channel") == ["otp"], identity
            print(f"GET /user/profile: the upstream received X-Gateway-User-Id {user}")

            # The first logout goes with a token the gateway refuses, as one that expired
            # meanwhile: the app refreshes, logs out again, and only then forgets the session.
            page.start_record()
            driver.execute_script(
                "const real = window.fetch; let first = true;"
                "window.fetch = (url, init) => {"
                "  if (first && String(url).endsWith('/auth/logout')) { first = false; init = {...init, headers: {Authorization: 'Bearer expired'}}; }"
                "  return real(url, init); };")
            driver.find_element(By.ID, "logout").click()
            page.status_is("logged out")
            page.wait.until(lambda d: 204 in page.statuses("/auth/logout"), "the second logout was not answered 204")
            # Each status may be recorded twice (the response and its extra info event).
            assert sorted(set(page.statuses("/auth/logout"))) == [204, 401], page.statuses("/auth/logout")
            assert 200 in page.statuses("/auth/token/refresh"), page.statuses("/auth/token/refresh")
            driver.refresh()
            page.status_is("logged out")
            page.nothing_stored()
            print("logout with a refused token: refreshed, logged out (401, then 204); after a reload still logged out")

            # Another origin on the same site: the browser sends the cookie, the gateway refuses.
            page.log_in()
            page.start_record()
            page.open(OTHER)
            page.wait.until(lambda d: "refresh:" in page.text("error"), "the other origin's refresh did not fail")
            assert page.text("status") == "logged out"
            page.wait.until(lambda d: 403 in page.statuses("/auth/token/refresh"), "no 403 for the other origin's refresh")
            statuses = page.statuses("/auth/token/refresh")
            assert 403 in statuses and 200 not in statuses, f"the other origin's refresh got {statuses}"
            print(f"{OTHER} (not allowed): refresh refused 403, unreadable by the page ({page.text('error')})")
            echoed = page.fetch(f"fetch('{GATEWAY}/echo/cors', {{credentials: 'include'}})")
            assert echoed == {"error": "TypeError"}, f"the other origin read a proxied response: {echoed}"
            bearer = page.fetch(f"fetch('{GATEWAY}/user/profile', {{headers: {{Authorization: 'Bearer x'}}}})")
            assert bearer == {"error": "TypeError"}, f"the other origin passed a preflight: {bearer}"
            print(f"{OTHER}: proxied responses unreadable (CORS)")

            # The allowed origin reads the same response, and its session survived the attempt.
            page.open(WEB)
            page.status_is("logged in")
            readable = page.fetch(f"fetch('{GATEWAY}/echo/cors', {{credentials: 'include'}})")
            # The cookie (Path=/) came with the request; the echo shows the gateway cut it out.
            assert readable.get("status") == 200 and "pg_refresh" not in readable.get("body", ""), readable
            print(f"{WEB}: the session survived the refused attempt; proxied responses readable")
        finally:
            driver.quit()
            other.shutdown()
    print("browser test: passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"browser test failed: {failure}", file=sys.stderr)
        sys.exit(1)
