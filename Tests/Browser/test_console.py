"""Browser tests of the web console against docs/console.md.

Run by scripts/browser-tests.sh, which serves a freshly seeded database (demo accounts plus 300 synthetic
people with a week of data, GROUP_MIN_COHORT=100) and sets BASE_URL, MAIL_DIR and SCREENSHOT_DIR.

The methods are numbered because unittest runs them in name order and later ones reuse what earlier ones
made (the registered person, the accepted group request); each reuses it through an `ensure_…` helper that
makes it afresh when the earlier test did not, so one failure does not make the others fail in confusing ways.
"""

import datetime
import json
import os
import re
import signal
import tempfile
import unittest
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

import console as c
from console import exists, find, go, path_of, wait_css, wait_text

#: Upper bound of one test method, seconds (each wait is bounded too; this catches everything else).
TEST_TIMEOUT = 240

#: What the tests make and later ones reuse.
STATE = {}
#: Every person registered by this run: the auditor's pages must never show their email or fiscal code.
PEOPLE = []


def today():
    return datetime.datetime.now(datetime.timezone.utc).date()


class ConsoleTestCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        def overrun(signum, frame):
            raise TimeoutError(f"{self.id()} took more than {TEST_TIMEOUT} s")
        signal.signal(signal.SIGALRM, overrun)
        signal.alarm(TEST_TIMEOUT)
        self.addCleanup(signal.alarm, 0)
        self._drivers = []

    def browser(self, width=1280, height=900):
        driver = c.new_driver(width, height)
        self.addCleanup(driver.quit)
        # Cleanups run last-in first-out: this one, before quitting, keeps what the page showed on a failure.
        self.addCleanup(self._keep_failure_screenshot, driver, len(self._drivers))
        self._drivers.append(driver)
        return driver

    def _keep_failure_screenshot(self, driver, number):
        result = getattr(getattr(self, "_outcome", None), "result", None)
        problems = getattr(result, "failures", []) + getattr(result, "errors", [])
        if not c.FAILURE_DIR or not any(test is self for test, _ in problems):
            return
        try:
            c.FAILURE_DIR.mkdir(parents=True, exist_ok=True)
            name = f"{self._testMethodName}-{number}"
            driver.save_screenshot(str(c.FAILURE_DIR / f"{name}.png"))
            (c.FAILURE_DIR / f"{name}.html").write_text(f"<!-- {driver.current_url} -->\n" + driver.page_source)
        except Exception:
            pass

    def signed_in(self, email_address, password):
        driver = self.browser()
        c.login(driver, email_address, password)
        return driver

    # ---- flows several tests need ---------------------------------------------------------------

    def register_and_activate(self, person, driver=None, screenshots=False):
        """Registers `person` at /register/person and activates the account through the mailed link."""
        driver = driver or self.browser()
        go(driver, "/register")
        c.click_and_wait(driver, find(driver, "a#register-person"))
        c.wait_path(driver, lambda p: p == "/register/person", "/register/person")
        form = wait_css(driver, "form#register-form")
        fill_registration(form, person)
        if screenshots:
            c.screenshot(driver, "register-person.png")
        c.submit_and_wait(driver, form)
        wait_css(driver, "#registered")

        link = c.activation_link(person.email)
        self.assertTrue(link.startswith(c.BASE_URL + "/activate?token="), link)
        driver.get(link)
        form = wait_css(driver, "form#activate-form")
        self.assertTrue(c.csrf_of(form))
        c.submit_and_wait(driver, form)
        wait_css(driver, "#activated")
        PEOPLE.append(person)
        return driver

    def ensure_person(self):
        """The person of test 01, registered now if test 01 did not get that far."""
        if "person" not in STATE:
            person = c.new_person("main")
            self.register_and_activate(person)
            STATE["person"] = person
        return STATE["person"]

    def fresh_person(self, tag):
        person = c.new_person(tag)
        self.register_and_activate(person)
        return person

    def send_single_request(self, company, person, types, purpose, screenshot=None):
        go(company, "/company/requests/new")
        form = wait_css(company, "form#single-request-form")
        c.fill(form, "subjectEmail", person.email)
        c.fill(form, "types", types)
        c.fill(form, "purpose", purpose)
        c.fill(form, "purposeCode", "HRESCH")
        if screenshot:
            c.screenshot(company, screenshot)
        c.submit_and_wait(company, form)
        self.assertFalse(exists(company, "#error"), c.describe(company))
        self.assertNotEqual(path_of(company), "/company/requests/new",
                            f"the request was not sent; {c.describe(company)}")
        wait_css(company, "#notice")

    def cancel_single_request(self, company, purpose):
        """Cancels, from the company's home page, its pending request whose row shows `purpose`."""
        go(company, "/company")
        rows = [r for r in wait_css(company, "main").find_elements(By.CSS_SELECTOR, "tr")
                if "pending" in r.text.lower()
                and any(cell.text.strip() == purpose for cell in r.find_elements(By.CSS_SELECTOR, "td"))]
        self.assertTrue(rows, f"the company lists no pending request {purpose!r}; {c.describe(company)}")
        c.click_and_wait(company, find(rows[0], "button.cancel"))
        wait_css(company, "#notice")

    def pending_request(self, driver, purpose):
        """The `article.request` of the pending request with `purpose` in /inbox."""
        go(driver, "/inbox")
        section = wait_css(driver, "section#pending")
        for article in section.find_elements(By.CSS_SELECTOR, "article.request"):
            if purpose in article.text:
                return article
        raise AssertionError(f"no pending request with purpose {purpose!r} in /inbox; {c.describe(driver)}")

    def answer(self, driver, purpose, button):
        article = self.pending_request(driver, purpose)
        request_id = article.get_attribute("data-request-id")
        self.assertTrue(request_id, "article.request has no data-request-id")
        c.click_and_wait(driver, find(article, f"button.{button}"))
        wait_css(driver, "#notice")
        self.assertFalse(exists(driver, "#error"), c.describe(driver))
        go(driver, "/inbox")
        pending = wait_css(driver, "section#pending")
        self.assertFalse(pending.find_elements(By.CSS_SELECTOR, f"article.request[data-request-id='{request_id}']"),
                         f"the request is still pending after {button}")
        return request_id

    def company_row(self, company, table, request_id):
        go(company, "/company")
        wait_css(company, f"table#{table}")
        return find(company, f"table#{table} tr[data-request-id='{request_id}']")

    def ensure_group_request(self, company=None):
        """The accepted group request of test 04 (id and the company's CSV), made now if it was not."""
        if "group" not in STATE:
            company = company or self.signed_in(*c.DEMO_COMPANY)
            go(company, "/company/group-requests/new")
            form = wait_css(company, "form#group-request-form")
            fill_group_request(form, purpose=f"Browser test cohort {c.RUN}", types=["heart_rate", "step_count"],
                               filters=[("heart_rate", "", "")])
            c.submit_and_wait(company, form)
            status = wait_text(company, "#status")
            self.assertIn("accepted", status.lower(), c.describe(company))
            request_id = group_request_id(company)
            csv = c.http(find(company, "a#results-csv").get_attribute("href"), cookie=c.session_cookie(company))
            self.assertEqual(csv.status, 200, csv.text[:300])
            STATE["group"] = {"id": request_id, "csv": csv.body}
        return STATE["group"]


def fill_registration(form, person):
    c.fill(form, "fullName", person.full_name)
    c.fill(form, "email", person.email)
    c.fill(form, "password", person.password)
    c.fill(form, "fiscalCode", person.fiscal_code)
    c.fill(form, "birthDate", person.birth_date.isoformat())
    c.fill(form, "sex", person.sex)


def fill_group_request(form, purpose, types, filters=(), window=None, bucket="day"):
    """`filters`: up to three (type, min, max); `window`: (from, to) dates, default the last seven days."""
    window_from, window_to = window or (today() - datetime.timedelta(days=7), today() - datetime.timedelta(days=1))
    c.fill(form, "purpose", purpose)
    c.fill(form, "purposeCode", "HRESCH")
    c.fill(form, "types", types)
    for number, (kind, low, high) in enumerate(filters, start=1):
        c.fill(form, f"filterType{number}", kind)
        c.fill(form, f"filterMin{number}", low)
        c.fill(form, f"filterMax{number}", high)
    c.fill(form, "windowFrom", window_from.isoformat())
    c.fill(form, "windowTo", window_to.isoformat())
    c.fill(form, "bucket", bucket)


def group_request_id(driver):
    match = re.fullmatch(r"/company/group-requests/([^/]+)", path_of(driver))
    if not match:
        raise AssertionError(f"not on a group request's page; {c.describe(driver)}")
    return match.group(1)


def heart_rate_csv(rows):
    """A `type,value,at` upload of `rows` heart rates, one every 3 hours ending an hour ago."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    lines = ["type,value,at"]
    for n in range(rows):
        at = now - datetime.timedelta(hours=1 + 3 * n)
        lines.append(f"heart_rate,{62 + n},{at.strftime('%Y-%m-%dT%H:%M:%SZ')}")
    return "\n".join(lines) + "\n"


class ConsoleTests(ConsoleTestCase):

    def test_01_person_registers_activates_and_logs_in(self):
        driver = self.browser()
        go(driver, "/")
        c.wait_path(driver, lambda p: p == "/login", "/ to redirect a visitor to /login")
        wait_css(driver, "form#login-form")
        c.screenshot(driver, "login.png")

        person = c.new_person("main")
        self.register_and_activate(person, driver, screenshots=True)
        STATE["person"] = person

        c.login(driver, person.email, person.password)
        self.assertNotEqual(path_of(driver), "/login")
        go(driver, "/account")
        self.assertIn(person.email, find(driver, "main, body").text)

    def test_01b_registration_rejects_a_fiscal_code_that_disagrees(self):
        driver = self.browser()
        person = c.new_person("mismatch")
        # A valid code, but for the other sex: the server must say so next to the field.
        other = "M" if person.sex == "F" else "F"
        person.fiscal_code = c.fiscal_code("Verdi", "Anna", person.birth_date, other)
        go(driver, "/register/person")
        form = wait_css(driver, "form#register-form")
        fill_registration(form, person)
        c.submit_and_wait(driver, form)
        self.assertFalse(exists(driver, "#registered"), c.describe(driver))
        self.assertTrue(wait_text(driver, "#fiscalCode-error"))
        form = find(driver, "form#register-form")
        self.assertEqual(find(form, "[name=email]").get_attribute("value"), person.email,
                         "the re-rendered form should keep what was typed")

    def test_02_single_request_accepted_and_downloaded(self):
        person = self.ensure_person()
        rows = 5

        # The person uploads a few heart rates, so the released data has rows.
        browser = self.signed_in(person.email, person.password)
        go(browser, "/data")
        upload = wait_css(browser, "form#upload-form")
        Select(find(upload, "select#upload-kind")).select_by_value("csv")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as file:
            file.write(heart_rate_csv(rows))
        self.addCleanup(os.unlink, file.name)
        find(upload, "input#upload-file").send_keys(file.name)
        c.submit(upload)
        # #upload-result first says the upload is under way; wait for how it ended (the count, or an error).
        finished = re.compile(rf"\b{rows}\b|error|fail|invalid|problem|must|try again", re.IGNORECASE)
        result = c.wait_until(
            browser, lambda d: (lambda t: t if finished.search(t) else False)(find(d, "#upload-result").text),
            "#upload-result to tell how the upload ended", timeout=30)
        self.assertNotRegex(result.lower(), r"error|fail|invalid|problem|must|try again", f"upload result: {result!r}")
        self.assertIn(str(rows), result, f"upload result: {result!r}")
        go(browser, "/data")
        chart = wait_css(browser, "figure.chart[data-type='heart_rate']")
        self.assertTrue(chart.find_elements(By.TAG_NAME, "svg"), "the heart rate chart has no svg")

        # The company asks for heart rates.
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: resting heart rate study"
        self.send_single_request(company, person, ["heart_rate"], purpose, screenshot="single-request-new.png")

        # The person sees who asks and why, and accepts.
        article = self.pending_request(browser, purpose)
        self.assertIn(c.DEMO_COMPANY_NAME, article.text)
        self.assertIn("beats/min", article.text, "the data asked for should be in plain words with units")
        self.assertIn("For health research", article.text, "the purpose's code (HRESCH) should be in plain words")
        for button in ("accept", "refuse", "block"):
            self.assertTrue(exists(article, f"button.{button}"), f"no button.{button} in {article.text!r}")
        c.screenshot(browser, "inbox.png")
        browser.set_window_size(390, 844)
        self.pending_request(browser, purpose)
        c.screenshot(browser, "inbox-phone.png")
        browser.set_window_size(1280, 900)
        request_id = self.answer(browser, purpose, "accept")

        # The company sees it accepted and downloads the data.
        row = self.company_row(company, "single-requests", request_id)
        self.assertIn("accepted", find(row, "td.status").text.lower())
        c.screenshot(company, "company-home.png")
        download = c.http(find(row, "a.download-csv").get_attribute("href"), cookie=c.session_cookie(company))
        self.assertEqual(download.status, 200, download.text[:500])
        self.assertIn("text/csv", download.headers.get("Content-Type", ""))
        lines = c.csv_lines(download.body)
        self.assertEqual(lines[0], "type,at,value,unit")
        self.assertEqual(len(lines) - 1, rows, download.text)
        self.assertTrue(all(line.startswith("heart_rate,") for line in lines[1:]), download.text)

        # The person sees the access in the access log.
        go(browser, "/access-log")
        table = wait_css(browser, "table#access-log")
        self.assertTrue(table.find_elements(By.CSS_SELECTOR, "tbody tr"), c.describe(browser))
        self.assertIn(c.DEMO_COMPANY_NAME, table.text)
        c.screenshot(browser, "access-log.png")

    def test_02b_partial_grant(self):
        """The person grants part of a request: one of two types, no subscription; the company sees both."""
        person = self.fresh_person("granter")
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: heart and steps"
        go(company, "/company/requests/new")
        form = wait_css(company, "form#single-request-form")
        c.fill(form, "subjectEmail", person.email)
        c.fill(form, "types", ["heart_rate", "step_count"])
        c.fill(form, "purpose", purpose)
        c.fill(form, "purposeCode", "HRESCH")
        c.fill(form, "subscriptionDays", "30")
        c.submit_and_wait(company, form)
        self.assertFalse(exists(company, "#error"), c.describe(company))

        browser = self.signed_in(person.email, person.password)
        article = self.pending_request(browser, purpose)
        grant = find(article, "form.grant")
        boxes = grant.find_elements(By.CSS_SELECTOR, "input[name=types]")
        self.assertEqual(sorted(b.get_attribute("value") for b in boxes), ["heart_rate", "step_count"])
        self.assertTrue(all(b.is_selected() for b in boxes), "every requested type starts checked")
        c.fill(grant, "types", ["heart_rate"])
        c.fill(grant, "days", "0")
        c.screenshot(browser, "inbox-partial-grant.png")
        request_id = article.get_attribute("data-request-id")
        c.click_and_wait(browser, find(grant, "button.accept-selected"))
        self.assertIn("part", wait_text(browser, "#notice"), c.describe(browser))

        row = self.company_row(company, "single-requests", request_id)
        self.assertIn("accepted", find(row, "td.status").text.lower())
        granted = find(row, ".granted").text
        self.assertIn("Heart rate", granted, row.text)
        self.assertNotIn("Step", granted, row.text)
        self.assertIn("once", granted, row.text)
        self.assertIn("Step", row.text, "what was asked stays visible beside what was granted")
        go(browser, "/inbox")
        self.assertTrue(exists(wait_css(browser, "section#history"), ".narrowed"), c.describe(browser))

    def test_02c_sharing_preferences(self):
        """A type the person never shares: unticked on /sharing, then unchecked and disabled in their inbox."""
        person = self.fresh_person("withholder")
        browser = self.signed_in(person.email, person.password)
        go(browser, "/sharing")
        form = wait_css(browser, "form#sharing")
        weight = find(form, "input#shared-weight")
        self.assertTrue(weight.is_selected(), "every type starts shared")
        weight.click()
        c.screenshot(browser, "sharing.png")
        c.click_and_wait(browser, find(form, "button#save-sharing"))
        wait_css(browser, "#notice")
        go(browser, "/sharing")
        self.assertFalse(find(wait_css(browser, "form#sharing"), "input#shared-weight").is_selected(), c.describe(browser))

        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: heart and weight"
        self.send_single_request(company, person, ["heart_rate", "weight"], purpose)
        article = self.pending_request(browser, purpose)
        box = find(article, "form.grant input[name=types][value=weight]")
        self.assertFalse(box.is_selected(), "an unshared type starts unchecked")
        self.assertFalse(box.is_enabled(), "an unshared type cannot be granted")
        request_id = self.answer(browser, purpose, "accept")
        granted = find(self.company_row(company, "single-requests", request_id), ".granted").text
        self.assertIn("Heart rate", granted)
        self.assertNotIn("Weight", granted)

    def test_02d_correction(self):
        """The person deletes every heart rate they uploaded, after a review that says how many."""
        person = self.fresh_person("corrector")
        browser = self.signed_in(person.email, person.password)
        go(browser, "/data")
        upload = wait_css(browser, "form#upload-form")
        Select(find(upload, "select#upload-kind")).select_by_value("csv")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as file:
            file.write(heart_rate_csv(3))
        self.addCleanup(os.unlink, file.name)
        find(upload, "input#upload-file").send_keys(file.name)
        c.submit(upload)
        c.wait_until(browser, lambda d: "3" in find(d, "#upload-result").text, "#upload-result to count 3", timeout=30)

        go(browser, "/data/corrections")
        form = wait_css(browser, "form#correction-form")
        c.fill(form, "type", "heart_rate")
        c.submit_and_wait(browser, form)
        warning = wait_text(browser, "#correction-warning")
        self.assertIn("3 samples", warning, c.describe(browser))
        c.screenshot(browser, "correction-confirm.png")
        c.click_and_wait(browser, find(browser, "button#correction-delete"))
        wait_css(browser, "#notice")
        self.assertFalse(exists(browser, "#error"), c.describe(browser))
        go(browser, "/access-log")
        self.assertIn("corrected", wait_css(browser, "table#access-log").text.lower(), c.describe(browser))

    def test_03_single_request_refused(self):
        person = self.fresh_person("refuser")
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: step count survey"
        self.send_single_request(company, person, ["step_count"], purpose)

        browser = self.signed_in(person.email, person.password)
        request_id = self.answer(browser, purpose, "refuse")

        # The person sees their refusal; the company is never told of one (issue 17): the request reads
        # pending to it, as one to nobody does, until it expires.
        go(browser, "/inbox")
        self.assertIn("refused", wait_css(browser, "section#history").text.lower(), c.describe(browser))
        row = self.company_row(company, "single-requests", request_id)
        self.assertIn("pending", find(row, "td.status").text.lower())
        self.assertNotIn("refused", row.text.lower())
        self.assertFalse(exists(row, "a.download-csv"), "a refused request must not offer a download")

    def test_04_group_requests(self):
        company = self.signed_in(*c.DEMO_COMPANY)

        # Inline validation: a window that ends before it starts.
        go(company, "/company/group-requests/new")
        form = wait_css(company, "form#group-request-form")
        c.screenshot(company, "group-request-new.png")
        fill_group_request(form, purpose=f"Browser test {c.RUN}: backwards window", types=["heart_rate"],
                           filters=[("heart_rate", "", "")],
                           window=(today() - datetime.timedelta(days=1), today() - datetime.timedelta(days=7)))
        c.submit_and_wait(company, form)
        self.assertFalse(exists(company, "#status"), c.describe(company))
        find(company, "form#group-request-form")
        errors = [e.text.strip() for e in company.find_elements(By.CSS_SELECTOR, ".field-error, [id$='-error']")
                  if e.text.strip() and e.get_attribute("id") != "error"]
        self.assertTrue(errors, f"no field error shown; {c.describe(company)}")
        self.assertTrue(exists(company, "#windowFrom-error, #windowTo-error"),
                        f"the error should be next to windowFrom or windowTo; errors: {errors}")

        # A cohort below the threshold: refused, without telling how many matched.
        go(company, "/company/group-requests/new")
        form = wait_css(company, "form#group-request-form")
        fill_group_request(form, purpose=f"Browser test {c.RUN}: extreme heart rates", types=["heart_rate"],
                           filters=[("heart_rate", "250", "300")])
        c.submit_and_wait(company, form)
        self.assertIn("refused", wait_text(company, "#status").lower())
        reason = wait_text(company, "#refusal-reason")
        self.assertRegex(reason.lower(), r"threshold|fewer than|at least|minimum|too few|too small", reason)
        self.assertTrue(set(re.findall(r"\d+", reason)) <= {"100"},
                        f"the refusal must not reveal a count: {reason!r}")
        self.assertFalse(exists(company, "table#results tbody tr"), "a refused request has no results")
        refused_id = group_request_id(company)

        # A cohort above it: accepted, with results and their CSV.
        purpose = f"Browser test {c.RUN}: weekly heart rate and steps"
        go(company, "/company/group-requests/new")
        form = wait_css(company, "form#group-request-form")
        fill_group_request(form, purpose=purpose, types=["heart_rate", "step_count"],
                           filters=[("heart_rate", "", "")])
        c.submit_and_wait(company, form)
        self.assertIn("accepted", wait_text(company, "#status").lower(), c.describe(company))
        request_id = group_request_id(company)
        results = find(company, "table#results")
        self.assertTrue(results.find_elements(By.CSS_SELECTOR, "tbody tr"), c.describe(company))
        self.assertTrue(find(company, "table#results td.margin").text.strip(), "a released mean shows its 95 % margin")
        c.screenshot(company, "group-request-results.png")
        csv = c.http(find(company, "a#results-csv").get_attribute("href"), cookie=c.session_cookie(company))
        self.assertEqual(csv.status, 200, csv.text[:500])
        self.assertIn("text/csv", csv.headers.get("Content-Type", ""))
        lines = c.csv_lines(csv.body)
        self.assertEqual(lines[0], "bucket_start,type,unit,people,mean,p10,p50,p90,suppressed,"
                                   "people_sd,sum_sd,bin_sd,bin_width,mean_margin95,rho,"
                                   "percentile_rho,percentile_step,p10_margin95,p50_margin95,p90_margin95")
        self.assertGreater(len(lines), 1, csv.text)
        self.assertEqual({line.split(",")[1] for line in lines[1:]}, {"heart_rate", "step_count"})
        STATE["group"] = {"id": request_id, "csv": csv.body}

        # Both are listed on the company's home page.
        for listed, status in ((request_id, "accepted"), (refused_id, "refused")):
            row = self.company_row(company, "group-requests", listed)
            self.assertIn(status, find(row, "td.status").text.lower())
        self.assertTrue(exists(self.company_row(company, "group-requests", request_id), "a.results"))
        self.assertIn("privacy budget", wait_text(company, "#privacy-budget").lower())

    def ensure_auditor_enrolled(self, screenshots=False):
        """The demo auditor enrols a second factor, as auditors must before anything else (docs/accounts.md)."""
        email_address, password = c.DEMO_AUDITOR
        if email_address in c.SECOND_FACTOR_KEYS:
            return
        auditor = self.browser()
        c.login(auditor, email_address, password)
        # Whatever page they open, an auditor without a second factor is led to enrolling one.
        go(auditor, "/audit")
        c.wait_path(auditor, lambda p: p == "/account/second-factor", "the second-factor page instead of /audit")
        self.assertIn("second factor", wait_text(auditor, "p.notice, [role=status], #second-factor-required").lower(),
                      c.describe(auditor))
        wait_css(auditor, "#second-factor-required")
        if screenshots:
            c.screenshot(auditor, "second-factor-required.png")
        c.click_and_wait(auditor, find(auditor, "button#second-factor-enrol"))
        c.wait_path(auditor, lambda p: p == "/account/second-factor/confirm", "the enrolment page")
        wait_css(auditor, "#second-factor-qr svg")
        secret = wait_text(auditor, "#second-factor-secret")
        self.assertIn(f"secret={secret}", find(auditor, "a#second-factor-uri").get_attribute("href"))
        if screenshots:
            c.screenshot(auditor, "second-factor-enrol.png")
        c.SECOND_FACTOR_KEYS[email_address] = secret
        form = find(auditor, "form#second-factor-confirm-form")
        c.fill(form, "code", c.next_code(email_address))
        c.submit_and_wait(auditor, form)
        codes = wait_css(auditor, "ol#recovery-codes").find_elements(By.CSS_SELECTOR, "li")
        self.assertEqual(len(codes), 10, c.describe(auditor))
        # Enrolled, the auditor's pages open (no group request may exist yet: then the page says so).
        go(auditor, "/audit")
        wait_css(auditor, "main")
        self.assertEqual(path_of(auditor), "/audit", c.describe(auditor))

    def test_04z_auditor_must_enrol(self):
        # An auditor with a password but no second factor can do nothing but enrol; the console leads them to it.
        self.ensure_auditor_enrolled(screenshots=True)
        # Signing in again takes the password, then a code the test computes as an authenticator app would.
        auditor = self.browser()
        go(auditor, "/login")
        form = wait_css(auditor, "form#login-form")
        c.fill(form, "email", c.DEMO_AUDITOR[0])
        c.fill(form, "password", c.DEMO_AUDITOR[1])
        c.submit_and_wait(auditor, form)
        c.wait_path(auditor, lambda p: p == "/login/second-factor", "the second step of signing in")
        self.assertIsNone(auditor.get_cookie(c.SESSION_COOKIE), "a session before the code")
        form = wait_css(auditor, "form#second-factor-form")
        step = int(datetime.datetime.now(datetime.timezone.utc).timestamp()) // 30
        window = {c.totp(c.SECOND_FACTOR_KEYS[c.DEMO_AUDITOR[0]], s) for s in range(step - 1, step + 3)}
        c.fill(form, "code", next(code for code in ("000000", "111111", "222222", "333333", "444444") if code not in window))
        c.submit_and_wait(auditor, form)
        wait_css(auditor, "form#second-factor-form")
        self.assertIsNone(auditor.get_cookie(c.SESSION_COOKIE), "a session for a wrong code")
        form = wait_css(auditor, "form#second-factor-form")
        c.screenshot(auditor, "second-factor-login.png")
        c.fill(form, "code", c.next_code(c.DEMO_AUDITOR[0]))
        c.submit_and_wait(auditor, form)
        c.wait_path(auditor, lambda p: p == "/audit", "/audit after the code")
        find(auditor, "button#logout")

    def test_05_auditor(self):
        self.ensure_auditor_enrolled()
        group = self.ensure_group_request()
        auditor = self.signed_in(*c.DEMO_AUDITOR)
        private = [text for person in PEOPLE for text in (person.email, person.fiscal_code)]

        def assert_private(where, text):
            for secret in private:
                self.assertNotIn(secret, text, f"{where} shows a person's email or fiscal code")

        go(auditor, "/audit")
        table = wait_css(auditor, "table#group-requests")
        links = [a for a in table.find_elements(By.CSS_SELECTOR, "a.results")
                 if group["id"] in (a.get_attribute("href") or "")]
        self.assertTrue(links, f"/audit does not list group request {group['id']}; {c.describe(auditor)}")
        assert_private("/audit", auditor.page_source)
        c.screenshot(auditor, "audit-group-requests.png")
        c.click_and_wait(auditor, links[0])
        c.wait_path(auditor, lambda p: p == f"/audit/group-requests/{group['id']}", "the audit results page")
        results = wait_css(auditor, "table#results")
        self.assertTrue(results.find_elements(By.CSS_SELECTOR, "tbody tr"), c.describe(auditor))
        assert_private("the audit results page", auditor.page_source)
        csv = c.http(find(auditor, "a#results-csv").get_attribute("href"), cookie=c.session_cookie(auditor))
        self.assertEqual(csv.status, 200, csv.text[:500])
        self.assertEqual(csv.body, group["csv"], "the auditor's CSV differs from the company's")

        go(auditor, "/audit/privacy-ledger")
        ledger = wait_css(auditor, "table#privacy-ledger")
        self.assertTrue(ledger.find_elements(By.CSS_SELECTOR, "tbody tr"), c.describe(auditor))
        assert_private("/audit/privacy-ledger", auditor.page_source)

        go(auditor, "/audit/events")
        wait_css(auditor, "table#events")
        assert_private("/audit/events", auditor.page_source)
        c.screenshot(auditor, "audit-events.png")
        everything = c.http("/audit/events.csv", cookie=c.session_cookie(auditor))
        self.assertEqual(everything.status, 200, everything.text[:500])
        assert_private("/audit/events.csv", everything.text)
        action = "group_request.accepted"
        form = find(auditor, "form#events-filter")
        c.fill(form, "action", action)
        c.submit_and_wait(auditor, form)
        self.assertIn(f"action={urllib.parse.quote(action)}", auditor.current_url.replace("%2E", "."))
        rows = wait_css(auditor, "table#events").find_elements(By.CSS_SELECTOR, "tbody tr")
        self.assertTrue(rows, f"no {action} events listed; {c.describe(auditor)}")
        for row in rows:
            self.assertIn(action, row.text)
        filtered = c.http(find(auditor, "a#events-csv").get_attribute("href"), cookie=c.session_cookie(auditor))
        self.assertEqual(filtered.status, 200, filtered.text[:500])
        self.assertIn("text/csv", filtered.headers.get("Content-Type", ""))
        lines = c.csv_lines(filtered.body)
        self.assertTrue(lines[0].startswith("seq,at,"), lines[0])
        self.assertEqual(len(lines) - 1, len(rows), filtered.text[:1000])
        for line in lines[1:]:
            self.assertIn(action, line)

        go(auditor, "/audit/verification")
        verification = wait_css(auditor, "#verification")
        self.assertIn("valid", verification.get_attribute("class").split(), c.describe(auditor))
        c.screenshot(auditor, "audit-verification.png")

    def test_06_csrf_and_session(self):
        person = self.fresh_person("csrf")
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: blood pressure follow-up"
        self.send_single_request(company, person, ["systolic_pressure"], purpose)

        browser = self.signed_in(person.email, person.password)
        cookie = browser.get_cookie(c.SESSION_COOKIE)
        self.assertTrue(cookie and cookie["value"], "no session cookie")
        self.assertTrue(cookie.get("httpOnly"), cookie)
        self.assertEqual(cookie.get("sameSite"), "Strict", cookie)
        self.assertEqual(cookie.get("path"), "/", cookie)
        token = cookie["value"]

        # The accept form, posted without the browser: no _csrf, a wrong one → 403 and nothing changes.
        article = self.pending_request(browser, purpose)
        accept = find(article, "button.accept")
        form = accept.find_element(By.XPATH, "./ancestor::form[1]")
        action = accept.get_attribute("formaction") or form.get_attribute("action")
        csrf = c.csrf_of(form)
        fields = {e.get_attribute("name"): e.get_attribute("value")
                  for e in form.find_elements(By.CSS_SELECTOR, "input[type=hidden]") if e.get_attribute("name")}
        if accept.get_attribute("name"):
            fields[accept.get_attribute("name")] = accept.get_attribute("value") or ""
        origin = {"Origin": c.BASE_URL}
        without = {k: v for k, v in fields.items() if k != "_csrf"}
        response = c.http(action, cookie=token, method="POST", form=without, headers=origin)
        self.assertEqual(response.status, 403, f"POST {action} without _csrf: {response.text[:300]}")
        wrong = dict(fields, _csrf=("A" if csrf[:1] != "A" else "B") + csrf[1:])
        response = c.http(action, cookie=token, method="POST", form=wrong, headers=origin)
        self.assertEqual(response.status, 403, f"POST {action} with a wrong _csrf: {response.text[:300]}")
        response = c.http(action, cookie=token, method="POST", form=dict(fields, _csrf="x"), headers=origin)
        self.assertEqual(response.status, 403, f"POST {action} with _csrf=x: {response.text[:300]}")
        self.pending_request(browser, purpose)  # still pending

        # The same POST with the page's token works (so the 403s were about the token alone).
        response = c.http(action, cookie=token, method="POST", form=fields, headers=origin)
        self.assertEqual(response.status, 303, f"POST {action} with the page's _csrf: {response.text[:300]}")
        go(browser, "/inbox")
        pending = wait_css(browser, "section#pending")
        self.assertNotIn(purpose, pending.text)

        # Forms before logging in are protected too (by the d4h_csrf cookie): a bare POST /login is refused.
        response = c.http("/login", method="POST", form={"email": person.email, "password": person.password},
                          headers=origin)
        self.assertEqual(response.status, 403, f"POST /login without _csrf: {response.text[:300]}")
        self.assertNotIn(c.SESSION_COOKIE, response.headers.get("Set-Cookie", ""))

        # Security headers.
        for page, cookie_value in (("/login", None), ("/inbox", token)):
            response = c.http(page, cookie=cookie_value)
            self.assertEqual(response.status, 200, f"GET {page}")
            policy = response.headers.get("Content-Security-Policy", "")
            self.assertIn("default-src 'none'", policy, f"GET {page}")
            self.assertIn("form-action 'self'", policy, f"GET {page}")
            self.assertIn("frame-ancestors 'none'", policy, f"GET {page}")
            self.assertIn("no-store", response.headers.get("Cache-Control", ""), f"GET {page}")

        # Roles and redirects.
        for page in ("/company", "/audit"):
            response = c.http(page, cookie=token)
            self.assertEqual(response.status, 403, f"a person's GET {page}")
        response = c.http("/inbox")
        self.assertIn(response.status, (302, 303, 307), "GET /inbox without a session")
        self.assertEqual(response.location_path(), "/login")

        # Logging out ends the session for good.
        go(browser, "/inbox")
        wait_css(browser, "section#pending")
        c.logout(browser)
        go(browser, "/inbox")
        c.wait_path(browser, lambda p: p == "/login", "/inbox to redirect to /login after logging out")
        response = c.http("/inbox", cookie=token)
        self.assertIn(response.status, (302, 303, 307), "GET /inbox with the old cookie")
        self.assertEqual(response.location_path(), "/login")

    def test_07_person_pages(self):
        driver = self.signed_in(*c.DEMO_USER)
        go(driver, "/data")
        wait_css(driver, "form#upload-form")
        c.screenshot(driver, "my-data.png")
        charts = driver.find_elements(By.CSS_SELECTOR, "figure.chart[data-type]")
        self.assertTrue(charts, f"no figure.chart on the demo user's /data; {c.describe(driver)}")
        for chart in charts:
            self.assertTrue(chart.find_elements(By.TAG_NAME, "svg"), f"{chart.get_attribute('data-type')} has no svg")
        find(driver, "form#upload-form")
        for css in ("select#upload-kind", "input#upload-file", "progress#upload-progress", "#upload-result"):
            find(driver, css)
        kinds = {o.get_attribute("value") for o in find(driver, "select#upload-kind").find_elements(By.TAG_NAME, "option")}
        self.assertLessEqual({"csv", "apple-health-xml", "apple-health-zip"}, kinds)

        go(driver, "/access-log")
        wait_css(driver, "main")  # table#access-log only once someone received data: see test_02
        go(driver, "/blocks")
        wait_css(driver, "main")  # table#blocks only once a company is blocked: see test_07b
        go(driver, "/account")
        for link in ("a#change-password", "a#export", "a#delete-account"):
            wait_css(driver, link)
        export = c.http(find(driver, "a#export").get_attribute("href"), cookie=c.session_cookie(driver))
        self.assertEqual(export.status, 200, export.text[:300])
        self.assertIsInstance(json.loads(export.body), dict)
        c.click_and_wait(driver, find(driver, "a#change-password"))
        wait_css(driver, "form#password-form")

        go(driver, "/inbox")
        for section in ("section#pending", "section#subscriptions", "section#history"):
            wait_css(driver, section)

    def test_07b_block_and_unblock(self):
        person = self.fresh_person("blocker")
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: sleep study"
        self.send_single_request(company, person, ["sleeping_hours"], purpose)

        browser = self.signed_in(person.email, person.password)
        self.answer(browser, purpose, "block")
        go(browser, "/blocks")
        table = wait_css(browser, "table#blocks")
        rows = [r for r in table.find_elements(By.CSS_SELECTOR, "tbody tr") if c.DEMO_COMPANY_NAME in r.text]
        self.assertTrue(rows, f"/blocks does not list {c.DEMO_COMPANY_NAME}; {c.describe(browser)}")
        c.screenshot(browser, "blocks.png")

        # The company is told of neither the block nor the refusal it made (that would tell it the person
        # exists): its request still reads pending, and once cancelled, a new one is answered as any other
        # but never reaches the person.
        self.cancel_single_request(company, purpose)
        self.send_single_request(company, person, ["sleeping_hours"], purpose + " (again)")
        go(browser, "/inbox")
        self.assertNotIn(purpose + " (again)", wait_css(browser, "section#pending").text, c.describe(browser))

        # Unblocked, it can ask again, once it has cancelled the request that is still pending on its side.
        go(browser, "/blocks")
        rows = [r for r in wait_css(browser, "table#blocks").find_elements(By.CSS_SELECTOR, "tbody tr")
                if c.DEMO_COMPANY_NAME in r.text]
        c.click_and_wait(browser, find(rows[0], "button.unblock"))
        wait_css(browser, "#notice")
        self.assertFalse([r for r in browser.find_elements(By.CSS_SELECTOR, "table#blocks tbody tr")
                          if c.DEMO_COMPANY_NAME in r.text], "the company is still blocked")
        self.cancel_single_request(company, purpose + " (again)")
        self.send_single_request(company, person, ["sleeping_hours"], purpose + " (after unblocking)")
        self.pending_request(browser, purpose + " (after unblocking)")

    def test_08_delete_account(self):
        person = self.fresh_person("leaver")
        driver = self.signed_in(person.email, person.password)
        go(driver, "/account")
        c.click_and_wait(driver, find(driver, "a#delete-account"))
        form = wait_css(driver, "form#delete-form")
        c.fill(form, "password", person.password)
        c.fill(form, "confirm", True)
        c.submit_and_wait(driver, form)
        wait_css(driver, "#deleted")
        self.assertFalse(exists(driver, "button#logout"), "still signed in after deleting the account")

        c.login(driver, person.email, person.password, expect_success=False)
        self.assertEqual(path_of(driver), "/login", c.describe(driver))
        self.assertTrue(wait_text(driver, "#error"))

    def test_09_company_settings(self):
        company = self.signed_in(*c.DEMO_COMPANY)
        go(company, "/company/settings")
        for css in ("form#webhook-form", "form#api-key-form"):  # table#api-keys once there is a key
            wait_css(company, css)
        name = f"browser-{c.RUN}"
        form = find(company, "form#api-key-form")
        c.fill(form, "name", name)
        c.submit_and_wait(company, form)
        secret = wait_text(company, "#api-key-secret")
        self.assertGreaterEqual(len(secret), 16, secret)
        rows = [r for r in find(company, "table#api-keys").find_elements(By.CSS_SELECTOR, "tr") if name in r.text]
        self.assertTrue(rows, f"the new key is not listed; {c.describe(company)}")
        self.assertNotIn(secret, find(company, "table#api-keys").text, "the key table must not show the secret")
        c.screenshot(company, "company-settings.png")

        c.click_and_wait(company, find(rows[0], "button.revoke"))
        wait_css(company, "#notice")
        go(company, "/company/settings")
        still = [r for r in company.find_elements(By.CSS_SELECTOR, "table#api-keys tr") if name in r.text]
        if still:
            self.assertTrue("revoked" in still[0].text.lower() or not exists(still[0], "button.revoke"),
                            f"the key is still active after revoking: {still[0].text!r}")
        self.assertFalse(exists(company, "#api-key-secret"), "the secret is shown only once")

        # A webhook must be https (registering a real one would need a public address the server resolves:
        # the test machine has no internet), so only the inline validation is exercised.
        form = find(company, "form#webhook-form")
        c.fill(form, "url", "http://hooks.example.com/data4help")
        c.fill(form, "secret", f"browser-webhook-secret-{c.RUN}")
        c.submit_and_wait(company, form)
        self.assertTrue(wait_text(company, "#url-error"), c.describe(company))
        self.assertFalse(exists(company, "#webhook-current, form#webhook-delete"), "an invalid webhook was saved")

    def test_10_pages_fit_a_phone(self):
        # docs/console.md: every page works at phone width, so none is wider than the screen.
        self.ensure_group_request()  # so that the company's and the auditor's tables have rows
        self.ensure_auditor_enrolled()
        overflowing = []
        for account, pages in ((c.DEMO_USER, ["/inbox", "/data", "/access-log", "/blocks", "/account"]),
                               (c.DEMO_COMPANY, ["/company", "/company/requests/new", "/company/group-requests/new",
                                                 "/company/settings"]),
                               (c.DEMO_AUDITOR, ["/audit", "/audit/events", "/audit/verification"])):
            driver = self.signed_in(*account)
            driver.set_window_size(390, 844)
            for page in pages:
                go(driver, page)
                wait_css(driver, "main")
                width, viewport = driver.execute_script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
                if width > viewport + 1:
                    overflowing.append(f"{page} ({width} px in {viewport} px)")
        self.assertEqual(overflowing, [], "pages wider than a 390 px phone screen")

    def test_11_keyboard_alone(self):
        # Logging in with Tab, typing and Enter only.
        driver = self.browser()
        go(driver, "/login")
        wait_css(driver, "form#login-form")
        for _ in range(15):
            if driver.switch_to.active_element.get_attribute("name") == "email":
                break
            driver.switch_to.active_element.send_keys(Keys.TAB)
        self.assertEqual(driver.switch_to.active_element.get_attribute("name"), "email",
                         "Tab never reaches the email field")
        driver.switch_to.active_element.send_keys(c.DEMO_USER[0], Keys.TAB)
        self.assertEqual(driver.switch_to.active_element.get_attribute("name"), "password")
        c.mark_page(driver)
        driver.switch_to.active_element.send_keys(c.DEMO_USER[1], Keys.ENTER)
        c.wait_new_page(driver, "the page after logging in with the keyboard")
        self.assertNotEqual(path_of(driver), "/login", c.describe(driver))
        find(driver, "button#logout")

    def set_language(self, driver, code):
        """Chooses the account's language on the account page (issue 30: a profile setting)."""
        go(driver, "/account")
        form = wait_css(driver, "form#language-form")
        Select(find(form, "select#language")).select_by_value(code)
        c.submit_and_wait(driver, form)
        wait_css(driver, "#notice")
        self.assertEqual(find(driver, "html").get_attribute("lang"), code, c.describe(driver))

    def test_12_italian(self):
        # A visitor chooses Italian with ?lang=it; the choice is remembered, and ?lang=en takes it back.
        visitor = self.browser()
        go(visitor, "/login?lang=it")
        self.assertEqual(wait_text(visitor, "h1"), "Accedi", c.describe(visitor))
        self.assertEqual(find(visitor, "html").get_attribute("lang"), "it")
        self.assertEqual(find(visitor, "button#login-submit").text, "Accedi")
        go(visitor, "/register")
        self.assertEqual(wait_text(visitor, "h1"), "Crea un account", "the visitor's choice should be remembered")
        go(visitor, "/login?lang=en")
        self.assertEqual(wait_text(visitor, "h1"), "Sign in")

        # A person whose account is Italian reads the inbox in Italian, whatever the browser says.
        person = self.ensure_person()
        company = self.signed_in(*c.DEMO_COMPANY)
        purpose = f"Browser test {c.RUN}: studio sulla frequenza cardiaca"
        self.send_single_request(company, person, ["heart_rate", "step_count"], purpose)
        browser = self.signed_in(person.email, person.password)
        self.set_language(browser, "it")
        try:
            article = self.pending_request(browser, purpose)
            self.assertEqual(find(browser, "h1").text, "Richieste dei tuoi dati")
            self.assertIn("Frequenza cardiaca", article.text)
            self.assertIn("Per la ricerca sanitaria", article.text, "the purpose's code in Italian words")
            self.assertEqual(find(article, "button.accept").text, "Accetta tutto")
            self.assertRegex(article.text, r"\d{1,2} [a-z]{3} \d{4}, \d{2}:\d{2} UTC", "dates written the Italian way")
            c.screenshot(browser, "inbox-it.png")
        finally:
            self.set_language(browser, "en")

        # The demo person's data, in Italian: headings, the charts' tables, decimal commas.
        driver = self.signed_in(*c.DEMO_USER)
        self.set_language(driver, "it")
        try:
            go(driver, "/data")
            wait_css(driver, "form#upload-form")
            self.assertEqual(find(driver, "h1").text, "I miei dati")
            self.assertEqual(find(driver, "#upload-submit").text, "Carica")
            self.assertIn("Aggiungi dati", find(driver, "main").text)
            c.screenshot(driver, "my-data-it.png")
            cells = [cell.get_attribute("textContent") for cell in driver.find_elements(By.CSS_SELECTOR, "figure.chart td")]
            self.assertFalse([cell for cell in cells if re.fullmatch(r"\d+\.\d", cell.strip())],
                             "an Italian page should write decimals with a comma")
        finally:
            self.set_language(driver, "en")


    def test_12_password_reset(self):
        """Forgot your password? → the mail file → its link → a new password → signed in with it; the
        session opened with the old password is over."""
        person = self.fresh_person("forgetful")
        old = self.signed_in(person.email, person.password)
        driver = self.browser()
        go(driver, "/login")
        c.click_and_wait(driver, find(driver, "a#forgot-password-link"))
        c.wait_path(driver, lambda p: p == "/password-reset", "/password-reset")
        form = wait_css(driver, "form#password-reset-request-form")
        c.fill(form, "email", person.email)
        c.submit_and_wait(driver, form)
        wait_css(driver, "#password-reset-sent")

        link = c.password_reset_link(person.email)
        self.assertTrue(link.startswith(c.BASE_URL + "/password-reset?token="), link)
        driver.get(link)
        form = wait_css(driver, "form#password-reset-form")
        self.assertTrue(c.csrf_of(form))
        new_password = person.password + "-new"
        c.fill(form, "password", new_password)
        c.submit_and_wait(driver, form)
        c.wait_path(driver, lambda p: p == "/login", "/login after the reset")
        self.assertIn("Sign in with the new password", wait_text(driver, "#notice"))

        c.login(driver, person.email, person.password, expect_success=False)
        self.assertEqual(path_of(driver), "/login", c.describe(driver))
        self.assertTrue(wait_text(driver, "#error"))
        c.login(driver, person.email, new_password)
        go(driver, "/account")
        self.assertIn(person.email, find(driver, "main, body").text)

        # The session opened before the reset is over: its next page is the sign-in page.
        go(old, "/account")
        c.wait_path(old, lambda p: p == "/login", "/login for the session opened before the reset")

        # The link worked once.
        driver.get(link)
        form = wait_css(driver, "form#password-reset-form")
        c.fill(form, "password", new_password + "-again")
        c.submit_and_wait(driver, form)
        self.assertIn("does not exist", wait_text(driver, "#error"))

if __name__ == "__main__":
    unittest.main()
