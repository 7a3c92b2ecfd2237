"""Shared helpers of the browser tests: the browser, forms, mails, HTTP with a session cookie, test people.

The tests drive the console as docs/console.md describes it (paths, form field names, element ids); nothing
here knows more about the server than that document, the mail format and the seeded demo accounts.
"""

import base64
import datetime
import email
import email.policy
import hashlib
import hmac
import itertools
import struct
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE_URL = os.environ.get("BASE_URL", "http://127.0.0.1:18230").rstrip("/")
MAIL_DIR = Path(os.environ.get("MAIL_DIR", REPO_ROOT / "var/browser/mail"))
SCREENSHOT_DIR = Path(os.environ.get("SCREENSHOT_DIR", REPO_ROOT / "docs/screenshots"))
FAILURE_DIR = Path(os.environ["FAILURE_DIR"]) if os.environ.get("FAILURE_DIR") else None
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")

#: Seconds an explicit wait gives the page.
WAIT = 20
SESSION_COOKIE = "d4h_session"

_DEMO = json.loads((REPO_ROOT / "Seeds/demo-accounts.json").read_text())
DEMO_USER = (_DEMO["users"][0]["email"], _DEMO["users"][0]["password"])
DEMO_COMPANY = (_DEMO["thirdParties"][0]["email"], _DEMO["thirdParties"][0]["password"])
DEMO_COMPANY_NAME = _DEMO["thirdParties"][0]["companyName"]
DEMO_AUDITOR = (_DEMO["auditors"][0]["email"], _DEMO["auditors"][0]["password"])

#: Distinguishes this run's accounts and request purposes from any earlier run's.
RUN = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S")


# ---- the browser ------------------------------------------------------------------------------

def new_driver(width=1280, height=900):
    """Headless Chromium from the Debian packages; selenium-manager is never consulted (no internet)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--disable-gpu", "--no-first-run",
                     "--disable-extensions", "--lang=en-US"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def path_of(driver):
    return urllib.parse.urlparse(driver.current_url).path


def go(driver, path):
    driver.get(BASE_URL + path)


def describe(driver):
    """What the page shows, for failure messages: URL, title, #error, field errors, the start of the text."""
    parts = [f"at {driver.current_url!r} (title {driver.title!r})"]
    try:
        for element in driver.find_elements(By.CSS_SELECTOR, "#error, #notice, .field-error, [id$='-error']"):
            text = element.text.strip()
            if text:
                parts.append(f"{element.get_attribute('id') or element.get_attribute('class')}: {text!r}")
        body = driver.find_element(By.TAG_NAME, "body").text.strip().replace("\n", " | ")
        parts.append(f"page text: {body[:600]!r}")
    except Exception as error:  # the description must never hide the real failure
        parts.append(f"(could not read the page: {error})")
    return "; ".join(parts)


def wait_until(driver, condition, what, timeout=WAIT):
    try:
        return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(condition)
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}; {describe(driver)}") from None


def wait_css(driver, css, timeout=WAIT):
    """The first element matching `css` once it is in the page."""
    return wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, css), f"{css!r}", timeout)


def wait_text(driver, css, timeout=WAIT):
    """The non-empty text of the first element matching `css`."""
    def text(d):
        value = d.find_element(By.CSS_SELECTOR, css).text.strip()
        return value or False
    return wait_until(driver, text, f"text in {css!r}", timeout)


def wait_path(driver, predicate, what, timeout=WAIT):
    return wait_until(driver, lambda d: predicate(path_of(d)), what, timeout)


def find(driver_or_element, css):
    """`find_element` whose failure says what the page shows."""
    try:
        return driver_or_element.find_element(By.CSS_SELECTOR, css)
    except NoSuchElementException:
        driver = getattr(driver_or_element, "parent", driver_or_element)
        raise AssertionError(f"no element {css!r}; {describe(driver)}") from None


def exists(driver_or_element, css):
    return bool(driver_or_element.find_elements(By.CSS_SELECTOR, css))


def screenshot(driver, name):
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOT_DIR / name))


# ---- forms ------------------------------------------------------------------------------------

def fill(form, name, value):
    """Sets the field `name` of `form` whatever control it is: text, date, select, radio or checkboxes.

    For checkboxes `value` is the collection of values to tick (every other one is unticked), or a bool.
    Date inputs are set through the DOM: typing into them depends on the browser's locale.
    """
    elements = form.find_elements(By.NAME, name)
    if not elements:
        raise AssertionError(f"form#{form.get_attribute('id')} has no field named {name!r}; {describe(form.parent)}")
    first = elements[0]
    tag = first.tag_name.lower()
    kind = (first.get_attribute("type") or "").lower()
    if tag == "select":
        Select(first).select_by_value(str(value))
    elif kind == "radio":
        matching = [e for e in elements if e.get_attribute("value") == str(value)]
        if not matching:
            raise AssertionError(f"field {name!r} has no radio button with value {value!r}")
        matching[0].click()
    elif kind == "checkbox":
        wanted = {str(v) for v in value} if not isinstance(value, bool) else None
        for element in elements:
            tick = value if wanted is None else element.get_attribute("value") in wanted
            if element.is_selected() != tick:
                element.click()
        if wanted is not None:
            present = {e.get_attribute("value") for e in elements}
            missing = wanted - present
            if missing:
                raise AssertionError(f"field {name!r} has no checkbox for {sorted(missing)} (has {sorted(present)})")
    elif kind in ("date", "datetime-local", "month", "week", "time", "hidden"):
        form.parent.execute_script(
            "arguments[0].value = arguments[1];"
            "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));"
            "arguments[0].dispatchEvent(new Event('change', {bubbles: true}));",
            first, str(value))
    else:
        first.clear()
        if value != "":
            first.send_keys(str(value))


def submit(form):
    """Clicks the form's submit button (pressing it as a person would, not `form.submit()`)."""
    buttons = form.find_elements(By.CSS_SELECTOR, "button[type=submit], input[type=submit]") or \
        form.find_elements(By.CSS_SELECTOR, "button:not([type]), button[type='']")
    if not buttons:
        raise AssertionError(f"form#{form.get_attribute('id')} has no submit button")
    buttons[0].click()


def submit_and_wait(driver, form):
    """Submits and waits until the browser shows the page that answered."""
    what = f"the answer to form#{form.get_attribute('id')}"
    mark_page(driver)
    submit(form)
    wait_new_page(driver, what)


def mark_page(driver):
    """Tags the current document, so that `wait_new_page` can tell when another one replaced it."""
    driver.execute_script("window.__d4hOldPage = true;")


def wait_new_page(driver, what):
    def loaded(d):
        try:
            return not d.execute_script("return window.__d4hOldPage === true;") and \
                d.execute_script("return document.readyState;") == "complete"
        except WebDriverException as error:  # between two documents
            if "ERR_" in str(error):
                raise
            return False
    wait_until(driver, loaded, what)


def click_and_wait(driver, element):
    """Clicks a button or link that loads another page, and waits for it."""
    mark_page(driver)
    element.click()
    wait_new_page(driver, "the page after the click")


def csrf_of(form):
    return find(form, "input[name=_csrf]").get_attribute("value")


# ---- accounts ---------------------------------------------------------------------------------

# ---- the second factor (docs/accounts.md) ---------------------------------------------------------

#: The base32 key of each account that enrolled a second factor in this run, as its authenticator app keeps it.
SECOND_FACTOR_KEYS = {}
#: The last 30-second step whose code each account sent: the server accepts a step once.
_LAST_STEP = {}


def totp(secret, step):
    """RFC 6238's code of `step` (HMAC-SHA1, six digits), as an authenticator app computes it."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def next_code(email_address):
    """A code of the account's key for a step not used before: the current one, the next (accepted as a
    clock a little fast), or, when both are used, the current one after waiting for it."""
    secret = SECOND_FACTOR_KEYS[email_address]
    step = int(time.time()) // 30
    last = _LAST_STEP.get(email_address, -1)
    if last >= step + 1:
        time.sleep((step + 1) * 30 - time.time() + 0.5)
        step = int(time.time()) // 30
    chosen = max(step, last + 1)
    _LAST_STEP[email_address] = chosen
    return totp(secret, chosen)


def login(driver, email_address, password, expect_success=True):
    go(driver, "/login")
    form = wait_css(driver, "form#login-form")
    fill(form, "email", email_address)
    fill(form, "password", password)
    submit_and_wait(driver, form)
    if path_of(driver) == "/login/second-factor" and email_address in SECOND_FACTOR_KEYS:
        form = wait_css(driver, "form#second-factor-form")
        fill(form, "code", next_code(email_address))
        submit_and_wait(driver, form)
    if expect_success:
        if path_of(driver) == "/login":
            raise AssertionError(f"logging in as {email_address} failed; {describe(driver)}")
        find(driver, "button#logout")


def logout(driver):
    click_and_wait(driver, find(driver, "button#logout"))
    wait_path(driver, lambda p: p == "/login", "/login after logging out")


def session_cookie(driver):
    cookie = driver.get_cookie(SESSION_COOKIE)
    if not cookie:
        raise AssertionError(f"no {SESSION_COOKIE} cookie; cookies: {[c['name'] for c in driver.get_cookies()]}")
    return cookie["value"]


# ---- people ---------------------------------------------------------------------------------

_MONTH_LETTERS = "ABCDEHLMPRST"
#: Values of A–Z (and of 0–9, which count as A–J) in odd positions, counting from 1.
_ODD_VALUES = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]
_VOWELS = set("AEIOU")


def _letters(text):
    return [c for c in text.upper() if "A" <= c <= "Z"]


def _surname_part(surname):
    letters = _letters(surname)
    consonants = [c for c in letters if c not in _VOWELS]
    vowels = [c for c in letters if c in _VOWELS]
    return "".join((consonants + vowels + ["X"] * 3)[:3])


def _name_part(name):
    letters = _letters(name)
    consonants = [c for c in letters if c not in _VOWELS]
    if len(consonants) >= 4:
        return consonants[0] + consonants[2] + consonants[3]
    vowels = [c for c in letters if c in _VOWELS]
    return "".join((consonants + vowels + ["X"] * 3)[:3])


def check_character(first15):
    """The check character of a codice fiscale: odd positions (1st, 3rd, …) through the odd table, even
    positions by their rank (A/0 = 0 … Z = 25), the sum mod 26 as a letter."""
    total = 0
    for offset, char in enumerate(first15.upper()):
        rank = ord(char) - ord("0") if char.isdigit() else ord(char) - ord("A")
        total += _ODD_VALUES[rank] if offset % 2 == 0 else rank
    return chr(ord("A") + total % 26)


def fiscal_code(surname, name, birth_date, sex, place="H501"):
    """A valid Italian fiscal code agreeing with the birth date and sex (`F` / `M`)."""
    day = birth_date.day + (40 if sex == "F" else 0)
    first15 = (_surname_part(surname) + _name_part(name) + f"{birth_date.year % 100:02d}"
               + _MONTH_LETTERS[birth_date.month - 1] + f"{day:02d}" + place)
    return first15 + check_character(first15)


assert fiscal_code("Rossi", "Mario", datetime.date(1985, 12, 10), "M", "A562") == "RSSMRA85T10A562S"
assert fiscal_code("Bianchi", "Giulia", datetime.date(1990, 3, 5), "F")[:15] == "BNCGLI90C45H501"

_SURNAMES = ["Ferraro", "Colombo", "Ricci", "Marino", "Greco", "Bruno", "Gallo", "Conti", "Mancini", "Costa"]
_NAMES = {"F": ["Giulia", "Chiara", "Francesca", "Sara", "Elena"],
          "M": ["Luca", "Marco", "Andrea", "Matteo", "Davide"]}
_PLACES = ["H501", "F205", "F839", "L219", "G273", "D969", "A944", "D612"]
_serial = itertools.count(1)


@dataclass
class Person:
    full_name: str
    email: str
    password: str
    fiscal_code: str
    birth_date: datetime.date
    sex: str  # F or M, the form's values


def new_person(tag="person"):
    """A person nobody registered yet: unique email (run stamp and serial) and a matching fiscal code."""
    n = next(_serial)
    stamp = int(RUN[-6:])  # hhmmss: a fresh birth date per run and serial keeps fiscal codes apart
    sex = "F" if n % 2 else "M"
    surname = _SURNAMES[(stamp + n) % len(_SURNAMES)]
    name = _NAMES[sex][(stamp // 7 + n) % len(_NAMES[sex])]
    birth = datetime.date(1950 + (stamp + 3 * n) % 50, 1 + (stamp + n) % 12, 1 + (stamp // 3 + 5 * n) % 28)
    return Person(
        full_name=f"{name} {surname}",
        email=f"browser.{tag}.{RUN}.{n}@data4help.example",
        password=f"browser-pass-{RUN}-{n}",
        fiscal_code=fiscal_code(surname, name, birth, sex, _PLACES[(stamp + n) % len(_PLACES)]),
        birth_date=birth,
        sex=sex,
    )


# ---- mail -------------------------------------------------------------------------------------

def mail_to(address, timeout=WAIT):
    """The text of the newest mail in MAIL_DIR addressed to `address` (RFC 5322 `.eml` files)."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for path in MAIL_DIR.glob("*.eml"):
            try:
                message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            except OSError:
                continue  # being written
            if address.lower() in str(message.get("To", "")).lower():
                found.append((path.stat().st_mtime, path.name, message))
        if found:
            message = max(found, key=lambda item: item[:2])[2]
            part = message.get_body(preferencelist=("plain",)) or message
            # get_content() undoes any Content-Transfer-Encoding (8bit today; quoted-printable or base64 too).
            return part.get_content()
        if time.monotonic() > deadline:
            raise AssertionError(f"no mail to {address} in {MAIL_DIR} after {timeout} s")
        time.sleep(0.25)


def activation_link(address):
    body = mail_to(address)
    match = re.search(r"https?://\S+/activate\?token=[^\s<>\"]+", body)
    if not match:
        raise AssertionError(f"the mail to {address} has no activation link:\n{body}")
    return match.group(0)



def password_reset_link(address, timeout=WAIT):
    """The link of the newest password reset mail to `address`, waiting for it (the outbox sends it a moment
    after the answer, so the newest mail may still be an earlier one)."""
    deadline = time.monotonic() + timeout
    while True:
        body = mail_to(address, timeout=max(1, deadline - time.monotonic()))
        match = re.search(r"https?://\S+/password-reset\?token=[^\s<>\"]+", body)
        if match:
            return match.group(0)
        if time.monotonic() > deadline:
            raise AssertionError(f"no password reset mail to {address}; the newest is:\n{body}")
        time.sleep(0.25)

# ---- HTTP with a session cookie (downloads, CSRF, headers) ---------------------------------

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirect)


@dataclass
class Response:
    status: int
    headers: object
    body: bytes

    @property
    def text(self):
        return self.body.decode("utf-8", errors="replace")

    def location_path(self):
        return urllib.parse.urlparse(self.headers.get("Location", "")).path


def http(url_or_path, cookie=None, method="GET", form=None, headers=None):
    """One request, redirects not followed; `cookie` is the d4h_session value."""
    url = url_or_path if url_or_path.startswith("http") else BASE_URL + url_or_path
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    if cookie:
        request.add_header("Cookie", f"{SESSION_COOKIE}={cookie}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with _opener.open(request, timeout=30) as response:
            return Response(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, error.headers, error.read())


def csv_lines(body):
    return [line for line in body.decode("utf-8").replace("\r\n", "\n").split("\n") if line]
