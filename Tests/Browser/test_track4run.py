"""Track4Run's spectator page in Chromium (issue 19): the path drawn by the server, markers that move when
positions arrive, a runner who stops sharing disappears at once, and no name or fiscal code in the page.

A run of our own is set up through the API (the demo company organises it; a person registered here joins,
accepts the run's request and checks in at the start); then the database moves its start a minute into the
past, as the run's day would have come, so the test need not wait for it. Everything else goes through the
API and the page as a spectator sees it, without signing in.
"""

import datetime
import json
import os
import subprocess
import unittest
import urllib.error
import urllib.request

import console as c
from console import find, go, wait_css
from test_console import ConsoleTestCase

START = (45.4700, 9.1700)
PATH = {"type": "LineString", "coordinates": [[9.1700, 45.4700], [9.1800, 45.4700], [9.1800, 45.4750]]}


def api(path, token=None, method="GET", body=None):
    """One JSON request to the API; the parsed body (or None) and the status."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(c.BASE_URL + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        return error.code, (json.loads(text) if text.startswith("{") else text)


def token(email_address, password):
    status, body = api("/v1/sessions", method="POST", body={"email": email_address, "password": password})
    assert status == 201, (status, body)
    return body["token"]


def now(offset=0.0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def upload(runner, latitude, longitude):
    status, body = api("/v1/me/positions", runner, "POST",
                       {"positions": [{"at": now(), "latitude": latitude, "longitude": longitude}]})
    assert status == 200, (status, body)


PSQL = "/usr/lib/postgresql/15/bin/psql" if os.path.exists("/usr/lib/postgresql/15/bin/psql") else "psql"


def sql(statement):
    subprocess.run([PSQL, os.environ["DATABASE_URL"], "-v", "ON_ERROR_STOP=1", "-qc", statement],
                   check=True, capture_output=True, timeout=30)


class Track4RunTests(ConsoleTestCase):
    def organise(self, driver, name, starts_in=600):
        """Creates a run through the console's form as the demo company; returns its id."""
        go(driver, "/company/runs/new")
        form = wait_css(driver, "form#run-form")
        c.fill(form, "name", name)
        c.fill(form, "startsAt", now(starts_in)[:19] + "Z")
        c.fill(form, "durationMinutes", 60)
        c.fill(form, "maxParticipants", 10)
        c.fill(form, "pathFormat", "geojson")
        c.fill(form, "path", json.dumps(PATH))
        c.submit_and_wait(driver, form)
        c.wait_path(driver, lambda p: p.startswith("/runs/"), "the new run's page")
        return c.path_of(driver).split("/")[-1]

    def test_20_spectator_page_moves_and_hides(self):
        person = self.fresh_person("runner")
        runner = token(person.email, person.password)
        organiser = self.signed_in(*c.DEMO_COMPANY)
        run_id = self.organise(organiser, f"Browser run {c.RUN}")
        self.assertTrue(c.exists(organiser, "#run-cancel"), c.describe(organiser))

        # The person joins on the run's page, accepts the run's request, shares a position and checks in there.
        driver = self.signed_in(person.email, person.password)
        go(driver, f"/runs/{run_id}")
        form = wait_css(driver, "form#run-join")
        c.fill(form, "displayName", "Speedy")
        c.submit_and_wait(driver, form)
        wait_css(driver, "#run-place")
        status, place = api(f"/v1/runs/{run_id}/participation", runner)
        self.assertEqual(status, 200, place)
        status, _ = api(f"/v1/single-requests/{place['requestId']}/accept", runner, "POST")
        self.assertEqual(status, 200)
        upload(runner, *START)
        go(driver, f"/runs/{run_id}")
        c.click_and_wait(driver, wait_css(driver, "button#run-check-in"))
        self.assertIn("checked in", find(driver, "#run-place").text)
        # A privacy zone far from the path: saved, and shown back to the runner.
        zone = wait_css(driver, "form#run-zone")
        c.fill(zone, "latitude", "45.4000")
        c.fill(zone, "longitude", "9.1000")
        c.fill(zone, "metres", "300")
        c.submit_and_wait(driver, zone)
        self.assertIn("300 m around 45.4, 9.1", find(driver, "#run-place").text)
        c.logout(driver)
        # The run's day comes: the run started a minute ago (the request's window moves with it).
        sql(f"""UPDATE single_requests q SET window_from = q.window_from - d.shift, window_to = q.window_to - d.shift
                FROM (SELECT starts_at - (now() - interval '60 seconds') AS shift FROM runs WHERE id = '{run_id}') d
                WHERE q.id = '{place['requestId']}'""")
        sql(f"UPDATE runs SET starts_at = now() - interval '60 seconds' WHERE id = '{run_id}'")
        upload(runner, 45.4700, 9.1740)

        go(driver, "/login")
        link = wait_css(driver, f'#runs-live a.run-link[href="/runs/{run_id}"]')
        c.click_and_wait(driver, link)
        wait_css(driver, "svg#run-map polyline.run-path")
        marker = wait_css(driver, 'g.runner[data-bib="1"]')
        # The bib beside every display name (issue 27), the name a bidi isolate (U+2068 … U+2069), whose
        # invisible controls a driver may or may not report.
        self.assertEqual(marker.text.replace("\u2068", "").replace("\u2069", ""), "Speedy · Bib 1")
        before = marker.get_attribute("transform")

        # A new position: the marker moves without reloading the page.
        upload(runner, 45.4700, 9.1790)
        c.wait_until(driver, lambda d: find(d, 'g.runner[data-bib="1"]').get_attribute("transform") != before,
                     "the runner's marker to move")
        driver.execute_script("document.getElementById('run-map').scrollIntoView()")
        c.screenshot(driver, "track4run-live.png")

        html = driver.page_source
        for secret in (person.full_name, person.email, person.fiscal_code):
            self.assertNotIn(secret, html)

        # The runner ends the run's subscription: the marker goes at once (the next event, within seconds).
        status, _ = api(f"/v1/single-requests/{place['requestId']}/subscription", runner, "DELETE")
        self.assertEqual(status, 200)
        c.wait_until(driver, lambda d: not c.exists(d, 'g.runner[data-bib="1"]'), "the revoking runner's marker to go")
        self.assertEqual(find(driver, "#live-count").text, "0")

    def test_22_organiser_cancels(self):
        organiser = self.signed_in(*c.DEMO_COMPANY)
        run_id = self.organise(organiser, f"Cancelled run {c.RUN}")
        c.click_and_wait(organiser, wait_css(organiser, "button#run-cancel"))
        self.assertEqual(find(organiser, "#run-state").text, "cancelled")
        status, run = api(f"/v1/runs/{run_id}")
        self.assertEqual((status, run["state"]), (200, "cancelled"))

    def test_21_demo_runs_on_the_home_page(self):
        # `d4h seed` made a live and an upcoming run; the home page lists both without signing in.
        driver = self.browser()
        go(driver, "/login")
        live = wait_css(driver, "#runs-live a.run-link")
        self.assertTrue(c.exists(driver, "#runs-upcoming a.run-link"))
        c.click_and_wait(driver, live)
        wait_css(driver, "svg#run-map")
        c.wait_until(driver, lambda d: len(d.find_elements("css selector", "g.runner")) > 0, "runners on the demo run")
        driver.execute_script("document.getElementById('run-map').scrollIntoView()")
        c.screenshot(driver, "track4run-demo.png")


if __name__ == "__main__":
    unittest.main()
