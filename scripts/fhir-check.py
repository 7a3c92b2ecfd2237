"""Validates the FHIR R4 resources the API serves with the R4 models of PyPI's fhir.resources (6.4.0, FHIR 4.0.1).

Run by scripts/fhir-check.sh against a fresh server (BASE_URL, MAIL_DIR for activation mails, OUT for the
resources it saves, AUDITOR_EMAIL for an auditor `d4h auditors add` has created). Each kind of resource has
a check of its own, run in turn:

- Consent: a person and a company go through every state a request can be in; each request's Consent is
  fetched by both sides and must parse as an R4 Consent, with the status and provision each state gives.
- AuditEvent: the auditors' NDJSON export of the audit log (`GET /v1/audit/events?format=ndjson`); every
  line must parse as an R4 AuditEvent, one per event of the JSON log, naming no person.
- Observation downloads (`GET /v1/single-requests/{id}/data?format=fhir|ndjson`): the Bundle must parse as an
  R4 Bundle of type collection whose entries are R4 Observations, and every NDJSON line as an R4 Observation:
  for a request covering every sample type (a blood pressure panel and a single systolic reading among
  them), for an empty cursor download, and for a multi-megabyte download of 30,000 samples.

A resource the models refuse fails the check; so does one the models accept although it should not have
passed (each kind's negative controls keep the validator honest). To add a kind: a model in MODELS, its
R4 required bindings in BINDINGS, its controls in CONTROLS, and a check that calls validate() or
validate_ndjson().
"""
import base64
import datetime
import glob
import hashlib
import hmac
import json
import multiprocessing
import os
import random
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter

import fhir.resources
from fhir.resources.auditevent import AuditEvent
from fhir.resources.bundle import Bundle
from fhir.resources.consent import Consent
from fhir.resources.observation import Observation
from pydantic import ValidationError

BASE_URL = os.environ["BASE_URL"]
MAIL_DIR = os.environ["MAIL_DIR"]
OUT = os.environ["OUT"]
AUDITOR_EMAIL = os.environ["AUDITOR_EMAIL"]
# The multi-megabyte download: this many heart rates, uploaded 10,000 at a time (the upload limit).
BULK_SAMPLES = int(os.environ.get("FHIR_CHECK_BULK_SAMPLES", "30000"))
TOOL = "fhir-check"

failures = []
validated = Counter()

# ---- the kinds ------------------------------------------------------------------------------------------------

MODELS = {"Consent": Consent, "AuditEvent": AuditEvent, "Bundle": Bundle, "Observation": Observation}

# The models check structure and types, not value sets: each kind's R4 required bindings (a path into the
# JSON, the codes R4 allows there), checked here when the element is present.
BINDINGS = {
    "Consent": [("status", {"draft", "proposed", "active", "rejected", "inactive", "entered-in-error"}),
                ("provision.type", {"deny", "permit"})],
    "AuditEvent": [("action", {"C", "R", "U", "D", "E"}), ("outcome", {"0", "4", "8", "12"})],
    "Bundle": [("type", {"document", "message", "transaction", "transaction-response", "batch", "batch-response", "history",
                         "searchset", "collection"})],
    "Observation": [("status", {"registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error",
                                "unknown"})],
}


def at_path(resource, path):
    for step in path.split("."):
        resource = resource.get(step) if isinstance(resource, dict) else None
    return resource


def binding_problems(kind, resource):
    return [f"{path} {at_path(resource, path)} is not in R4's value set" for path, allowed in BINDINGS.get(kind, [])
            if at_path(resource, path) is not None and at_path(resource, path) not in allowed]


# Resources already validated, by their canonical JSON: the same resource twice (an Observation both in the
# Bundle and on an NDJSON line) is validated once and counted each time. The models' answer depends on
# the JSON alone, so this skips no check.
seen = {}
VALID = object()  # what `seen` holds for a resource validated in a worker process (no model came back)
# Bundles and NDJSON bodies larger than this are validated in chunks, on every core (the R4 models take about
# a millisecond per Observation; a 30,000-sample download is 60,000 of them).
CHUNK = 2500


def say(text):
    print(f"{TOOL}: {text}", flush=True)


def canonical(kind, resource):
    return kind, json.dumps(resource, sort_keys=True, separators=(",", ":"))


def problems(kind, resource):
    """Why `resource` is no valid R4 `kind` (empty when it is one), and its model."""
    if not isinstance(resource, dict) or resource.get("resourceType") != kind:
        return [f"not a {kind}: {str(resource)[:200]}"], None
    try:
        model = MODELS[kind].parse_obj(resource)
    except ValidationError as error:
        return [f"not a valid R4 {kind}:\n{error}"], None
    return binding_problems(kind, resource), model


def chunk_problems(job):
    """A worker's share: (index, problem) for each resource of the chunk that is no valid R4 `kind`."""
    kind, resources = job
    return [(index, problem) for index, resource in resources for problem in problems(kind, resource)[0]]


def validate(kind, resource, name):
    """The resource as an R4 `kind` (its model, or VALID), or None with a failure noted."""
    key = canonical(kind, resource)
    if key in seen:
        validated[kind] += 1
        return seen[key]
    found, model = problems(kind, resource)
    failures.extend(f"{name}: {problem}" for problem in found)
    if found:
        return None
    validated[kind] += 1
    seen[key] = model
    return model


def in_parallel(kind, resources, per_job=CHUNK):
    """(index, problem) for each of `resources` that is no valid R4 `kind`: `per_job` at a time, on every core
    when there is more than one job."""
    todo = list(enumerate(resources))
    jobs = [(kind, todo[i:i + per_job]) for i in range(0, len(todo), per_job)]
    if len(jobs) <= 1:
        return chunk_problems((kind, todo))
    with multiprocessing.get_context("fork").Pool() as pool:
        return [problem for chunk in pool.map(chunk_problems, jobs) for problem in chunk]


def validate_all(kind, resources, name):
    """Each of `resources` as an R4 `kind` (those not validated before); how many passed."""
    keys = [canonical(kind, resource) for resource in resources]
    todo = [index for index, key in enumerate(keys) if key not in seen]
    found = [(todo[index], problem) for index, problem in in_parallel(kind, [resources[index] for index in todo])]
    failed = {index for index, _ in found}
    failures.extend(f"{name} {index + 1}: {problem}" for index, problem in found[:20])
    for index, key in enumerate(keys):
        if index not in failed:
            seen.setdefault(key, VALID)
    validated[kind] += len(resources) - len(failed)
    return len(resources) - len(failed)


def validate_ndjson(kind, text, name):
    """Every line of an NDJSON body as an R4 `kind`: the lines as JSON (None for one that is not), after
    validating them all."""
    if text and not text.endswith("\n"):
        failures.append(f"{name}: the last line does not end with a line feed")
    resources = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            resources.append(json.loads(line))
        except json.JSONDecodeError as error:
            failures.append(f"{name}, line {number}: not JSON ({error})")
            resources.append(None)
    validate_all(kind, resources, f"{name}, line")
    return resources


def validate_bundle(bundle, name, entry_kind):
    """An R4 Bundle of type collection whose entries are all R4 `entry_kind`; the entries' resources. The
    Bundle's model validates each entry's resource by the model its resourceType names; a large Bundle is
    validated in chunks of its entries (each chunk a Bundle with the same envelope), on every core."""
    if not isinstance(bundle, dict) or bundle.get("resourceType") != "Bundle":
        failures.append(f"{name}: not a Bundle: {str(bundle)[:200]}")
        return []
    entries = bundle.get("entry") or []
    chunks = [{**bundle, "entry": entries[i:i + CHUNK]} for i in range(0, len(entries), CHUNK)] or [bundle]
    found = in_parallel("Bundle", chunks, per_job=1)
    failures.extend(f"{name}, entries from {index * CHUNK + 1}: {problem}" for index, problem in found[:20])
    if found:
        return []
    validated["Bundle"] += 1
    if bundle.get("type") != "collection":
        failures.append(f"{name}: Bundle.type {bundle.get('type')}, expected collection")
    resources = [entry.get("resource") for entry in entries]
    # The Bundle's model read each resource by its own resourceType: here it must be `entry_kind`, and meet
    # that kind's bindings.
    for number, resource in enumerate(resources, start=1):
        resource = resource if isinstance(resource, dict) else {}
        found = [f"a {resource.get('resourceType')}, not an {entry_kind}"] if resource.get("resourceType") != entry_kind else []
        found += binding_problems(entry_kind, resource)
        failures.extend(f"{name}, entry {number}: {problem}" for problem in found)
        if not found:
            validated[entry_kind] += 1
            seen.setdefault(canonical(entry_kind, resource), VALID)
    return resources


def control(kind, sample, what, change):
    """A negative control: `sample` changed by `change` must be refused by the R4 model of `kind`."""
    broken = json.loads(json.dumps(sample))
    change(broken)
    try:
        MODELS[kind].parse_obj(broken)
        failures.append(f"negative control: a {kind} with {what} passed validation")
        return 0
    except (ValidationError, LookupError):
        # fhir.resources refuses an entry whose resourceType names no R4 resource with a LookupError.
        return 1


def no_identity(text, name, secrets):
    for secret in secrets:
        if secret and secret in text:
            failures.append(f"{name}: names the person ({secret})")


# ---- HTTP and accounts ----------------------------------------------------------------------------------------

def call(method, path, body=None, token=None, accept=None, raw=False):
    """(status, content type, JSON body or, with raw, the text, headers)."""
    request = urllib.request.Request(BASE_URL + path, method=method)
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if accept:
        request.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            status, headers = response.status, response.headers
    except urllib.error.HTTPError as error:
        text, status, headers = error.read().decode(), error.code, error.headers
    content_type = headers.get("Content-Type", "")
    if raw and status == 200:
        return status, content_type, text, headers
    try:
        return status, content_type, json.loads(text) if text else None, headers
    except json.JSONDecodeError:
        return status, content_type, text, headers


def expect(status, answer, what):
    if answer[0] != status:
        sys.exit(f"{TOOL}: {what} answered {answer[0]}: {str(answer[2])[:500]}")
    return answer[2]


def mailed_token(email, label):
    # The mail is written to the outbox with the registration and sent by the delivery loop a moment later.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for path in glob.glob(os.path.join(MAIL_DIR, "*.eml")):
            text = open(path, encoding="utf-8").read()
            if email in text:
                for line in text.splitlines():
                    if line.startswith(label):
                        return line.split(" ")[-1].strip()
        time.sleep(0.1)
    sys.exit(f"{TOOL}: no activation mail for {email}")


def activate_and_log_in(email, password, set_password=False):
    token = mailed_token(email, "Activation token:")
    body = {"token": token, "password": password} if set_password else {"token": token}
    expect(200, call("POST", "/v1/activations", body), "activation")
    return expect(201, call("POST", "/v1/sessions", {"email": email, "password": password}), "login")["token"]


def totp(secret, at):
    """RFC 6238 as the server computes it: HMAC-SHA1, six digits, 30-second steps."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack(">Q", int(at) // 30), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(struct.unpack('>I', mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def enrolled_auditor():
    """The auditor `d4h auditors add` created: activated with a password, with a second factor confirmed."""
    token = activate_and_log_in(AUDITOR_EMAIL, "auditor-password-1", set_password=True)
    secret = expect(201, call("POST", "/v1/me/second-factor", token=token), "second factor enrolment")["secret"]
    expect(200, call("POST", "/v1/me/second-factor/confirmation", {"code": totp(secret, time.time())}, token), "second factor")
    return token


# ---- the people -----------------------------------------------------------------------------------------------

tag = uuid.uuid4().hex[:8]
FISCAL_CODE, FULL_NAME = "BNCLRA90A41F205I", "Laura Bianchi"
person_email, company_email, password = f"laura.{tag}@example.com", f"research.{tag}@example.com", "correct-horse-battery"
expect(202, call("POST", "/v1/users", {"email": person_email, "password": password, "fiscalCode": FISCAL_CODE,
                                        "fullName": FULL_NAME, "birthDate": "1990-01-01", "sex": "F"}), "registration")
expect(202, call("POST", "/v1/third-parties", {"email": company_email, "password": password, "vatNumber": "12345678903",
                                                "companyName": "Cardio Research S.p.A."}), "company registration")
person = activate_and_log_in(person_email, password)
company = activate_and_log_in(company_email, password)
person_id = expect(200, call("GET", "/v1/me", token=person), "profile").get("id")
SECRETS = (person_email, FISCAL_CODE, FULL_NAME, "Laura", "Bianchi", person_id)

say(f"fhir.resources {fhir.resources.__version__}, FHIR {fhir.resources.__fhir_version__}")
if fhir.resources.__fhir_version__ != "4.0.1":
    sys.exit(f"{TOOL}: fhir.resources {fhir.resources.__version__} is FHIR {fhir.resources.__fhir_version__}, not R4 (4.0.1)")


def send(subject, types=("heart_rate", "step_count"), window=("2026-01-01T00:00:00Z", "2026-06-30T00:00:00Z"), **extra):
    body = {"subject": subject, "types": list(types), "purpose": "Cardiology study", "purposeCode": "HRESCH",
            "window": {"from": window[0], "to": window[1]}, **extra}
    return expect(201, call("POST", "/v1/single-requests", body, company), "a request")["id"]


def save(name, content):
    with open(os.path.join(OUT, name), "w") as file:
        file.write(content if isinstance(content, str) else json.dumps(content, indent=2))


# ---- Consent --------------------------------------------------------------------------------------------------

def check_consents():
    # Every state, one at a time (a company has one request it is shown as pending per subject as typed).
    granted = send({"email": person_email}, subscription={"days": 30})
    expect(200, call("POST", f"/v1/single-requests/{granted}/accept", token=person), "accept")
    stopped = send({"email": person_email}, subscription={"days": 30})
    expect(200, call("POST", f"/v1/single-requests/{stopped}/accept", token=person), "accept")
    expect(200, call("DELETE", f"/v1/single-requests/{stopped}/subscription", token=company), "stop")
    part = send({"email": person_email}, subscription={"days": 30})
    expect(200, call("POST", f"/v1/single-requests/{part}/accept", {"types": ["heart_rate"], "subscription": {"days": 0}}, person),
           "accept in part")
    refused = send({"email": person_email})
    expect(200, call("POST", f"/v1/single-requests/{refused}/refuse", token=person), "refuse")
    pending = send({"fiscalCode": FISCAL_CODE})

    # (request, state, the status each side must see, provision type)
    cases = [
        (granted, "granted", {"person": "active", "company": "active"}, "permit"),
        (stopped, "stopped", {"person": "inactive", "company": "inactive"}, "permit"),
        (part, "granted in part, no subscription", {"person": "active", "company": "active"}, "permit"),
        (refused, "refused", {"person": "rejected", "company": "proposed"}, None),
        (pending, "pending", {"person": "proposed", "company": "proposed"}, "permit"),
    ]
    before = validated["Consent"]
    for request_id, state, statuses, provision_type in cases:
        for side, token in (("person", person), ("company", company)):
            code, content_type, resource, _ = call("GET", f"/v1/single-requests/{request_id}/consent", token=token)
            name = f"Consent {state}, as the {side}"
            save(f"consent-{state.split(',')[0].replace(' ', '-')}-{side}.json", resource)
            if code != 200 or not content_type.startswith("application/fhir+json"):
                failures.append(f"{name}: answered {code} {content_type}")
                continue
            consent = validate("Consent", resource, name)
            if consent is None:
                continue
            if consent.status != statuses[side]:
                failures.append(f"{name}: status {consent.status}, expected {statuses[side]}")
            if provision_type and consent.provision.type != provision_type:
                failures.append(f"{name}: provision.type {consent.provision.type}, expected {provision_type}")
            no_identity(json.dumps(resource), name, SECRETS)
            say(f"{name}: a valid R4 Consent, status {consent.status}")
    if validated["Consent"] - before != 2 * len(cases):
        failures.append(f"only {validated['Consent'] - before} of {2 * len(cases)} Consent resources validated")

    # Negative controls: the models must refuse what R4 does not allow, or the check above proves nothing.
    sample = json.load(open(os.path.join(OUT, "consent-granted-company.json")))
    controls = [("a member R4 has not", lambda r: r.update(grantedTypes=["heart_rate"])),
                ("no scope", lambda r: r.pop("scope")),
                ("no status", lambda r: r.pop("status")),
                ("a dateTime that is none", lambda r: r.update(dateTime="yesterday")),
                ("a period in month 13", lambda r: r["provision"]["period"].update(start="2026-13-01T00:00:00Z")),
                ("a patient that is no Reference", lambda r: r.update(patient="s_0"))]
    return sum(control("Consent", sample, what, change) for what, change in controls), len(controls)


# ---- AuditEvent -----------------------------------------------------------------------------------------------

def check_audit_events(auditor):
    name = "AuditEvent NDJSON"
    code, content_type, text, _ = call("GET", "/v1/audit/events?format=ndjson", token=auditor, raw=True)
    if code != 200 or not content_type.startswith("application/fhir+ndjson"):
        failures.append(f"{name}: answered {code} {content_type}: {str(text)[:300]}")
        return 0, 0
    save("audit-events.ndjson", text)
    events = validate_ndjson("AuditEvent", text, name)
    # One line per event of the JSON log, in its order, with its chain values.
    log, cursor = [], None
    while True:
        page = expect(200, call("GET", "/v1/audit/events?limit=1000" + (f"&cursor={cursor}" if cursor else ""), token=auditor),
                      "the JSON audit log")
        log += page["items"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    if len(events) != len(log):
        failures.append(f"{name}: {len(events)} lines for {len(log)} events of the JSON log")
    for number, (event, item) in enumerate(zip(events, log), start=1):
        if not isinstance(event, dict):
            continue
        details = {detail.get("type"): detail.get("valueString") for detail in (event.get("entity") or [{}])[0].get("detail") or []}
        if (details.get("seq"), details.get("hash"), details.get("prev_hash")) != (str(item["seq"]), item["hash"], item["prevHash"]):
            failures.append(f"{name}, line {number}: its chain values are not event {item['seq']}'s")
        action = (event.get("subtype") or [{}])[0].get("code")
        if action != item["action"]:
            failures.append(f"{name}, line {number}: subtype {action}, the log says {item['action']}")
    no_identity(text, name, SECRETS)
    # The Accept header asks for the same.
    code, content_type, _, _ = call("GET", "/v1/audit/events", token=auditor, accept="application/fhir+ndjson", raw=True)
    if code != 200 or not content_type.startswith("application/fhir+ndjson"):
        failures.append(f"{name} by Accept: answered {code} {content_type}")
    say(f"{name}: {len(events)} lines, each a valid R4 AuditEvent matching the JSON log")

    sample = json.loads(text.splitlines()[-1])
    controls = [("no recorded", lambda r: r.pop("recorded")),
                ("a recorded time without its zone", lambda r: r.update(recorded="2026-03-01T08:00:00")),
                ("no agent", lambda r: r.pop("agent")),
                ("an agent without requestor", lambda r: r["agent"][0].pop("requestor")),
                ("a source without observer", lambda r: r["source"].pop("observer")),
                ("an entity detail without a value", lambda r: r["entity"][0]["detail"][0].pop("valueString")),
                ("a type that is a CodeableConcept", lambda r: r.update(type={"coding": [r["type"]]})),
                ("a member R4 has not", lambda r: r.update(chain=[]))]
    return sum(control("AuditEvent", sample, what, change) for what, change in controls), len(controls)


# ---- Observation downloads ------------------------------------------------------------------------------------

def download(request_id, fmt, cursor=None):
    query = {"format": fmt, **({"cursor": cursor} if cursor else {})}
    return call("GET", f"/v1/single-requests/{request_id}/data?{urllib.parse.urlencode(query)}", token=company, raw=True)


def check_observation_download(request_id, name, cursor=None, expect_empty=False, expected_count=None):
    """One request's download in both FHIR formats: the Bundle (R4, collection, entries R4 Observations) and
    the NDJSON (each line an R4 Observation), holding the same Observations. Returns the next cursor."""
    code, content_type, bundle_text, headers = download(request_id, "fhir", cursor)
    if code != 200 or not content_type.startswith("application/fhir+json"):
        failures.append(f"{name}, Bundle: answered {code} {content_type}: {str(bundle_text)[:300]}")
        return cursor
    next_cursor = headers.get("Data4Help-Next-Cursor")
    save(f"observations-{name.replace(' ', '-')}.json", bundle_text)
    started = time.monotonic()
    try:
        bundle = json.loads(bundle_text)
    except json.JSONDecodeError as error:
        failures.append(f"{name}, Bundle: not JSON ({error}), {len(bundle_text)} bytes")
        return next_cursor
    in_bundle = validate_bundle(bundle, f"{name}, Bundle", "Observation")
    code, content_type, ndjson_text, _ = download(request_id, "ndjson", cursor)
    if code != 200 or not content_type.startswith("application/fhir+ndjson"):
        failures.append(f"{name}, NDJSON: answered {code} {content_type}: {str(ndjson_text)[:300]}")
        return next_cursor
    save(f"observations-{name.replace(' ', '-')}.ndjson", ndjson_text)
    lines = validate_ndjson("Observation", ndjson_text, f"{name}, NDJSON")
    if len(lines) != len(in_bundle):
        failures.append(f"{name}: {len(lines)} NDJSON lines, {len(in_bundle)} Bundle entries")
    if expect_empty and in_bundle:
        failures.append(f"{name}: {len(in_bundle)} entries, expected none")
    if expected_count is not None and len(in_bundle) != expected_count:
        failures.append(f"{name}: {len(in_bundle)} Observations, expected {expected_count}")
    no_identity(bundle_text, name, SECRETS)
    say(f"{name}: a valid R4 Bundle of {len(in_bundle)} Observations ({len(bundle_text) / 1e6:.1f} MB) and "
        f"{len(lines)} NDJSON lines, validated in {time.monotonic() - started:.1f} s")
    return next_cursor


# Every sample type at its own instant in January, a blood pressure panel (systolic and diastolic at one
# instant) and a single systolic reading.
EVERY_TYPE = {"heart_rate": 72, "resting_heart_rate": 55, "systolic_pressure": 121, "diastolic_pressure": 79,
              "oxygen_saturation": 98, "step_count": 8500, "distance_walking_running": 6200, "active_energy_burned": 450,
              "standing_hours": 10, "sleeping_hours": 7.5, "weight": 64.2, "height": 168, "body_temperature": 36.6,
              "respiratory_rate": 14, "heart_rate_variability": 48, "blood_glucose": 5.4, "vo2_max": 41}


def check_observations():
    samples = [{"type": kind, "value": value, "at": f"2026-01-{day:02d}T08:00:00Z"}
               for day, (kind, value) in enumerate(EVERY_TYPE.items(), start=1)]
    panel, single = "2026-01-20T09:30:00Z", "2026-01-21T09:30:00Z"
    samples += [{"type": "systolic_pressure", "value": 132, "at": panel}, {"type": "diastolic_pressure", "value": 85, "at": panel},
                {"type": "systolic_pressure", "value": 140, "at": single}]
    expect(200, call("POST", "/v1/me/samples", {"samples": samples}, person), "the every-type upload")
    every = send({"email": person_email}, types=list(EVERY_TYPE), window=("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z"))
    expect(200, call("POST", f"/v1/single-requests/{every}/accept", token=person), "accept")
    cursor = check_observation_download(every, "every type")
    check_round_trip(samples)
    check_own_export()
    # Nothing arrived since: the cursor's download is an empty Bundle (a window without data would be a 409).
    check_observation_download(every, "empty", cursor=cursor, expect_empty=True)

    # Multi-megabyte: heart rates a minute apart from March on, uploaded 10,000 at a time.
    for first in range(0, BULK_SAMPLES, 10_000):
        batch = [{"type": "heart_rate", "value": 60 + i % 40,
                  "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1772323200 + 60 * i))}
                 for i in range(first, min(first + 10_000, BULK_SAMPLES))]
        expect(200, call("POST", "/v1/me/samples", {"samples": batch}, person), "a bulk upload")
    bulk = send({"email": person_email}, types=["heart_rate"], window=("2026-03-01T00:00:00Z", "2026-06-30T00:00:00Z"))
    expect(200, call("POST", f"/v1/single-requests/{bulk}/accept", token=person), "accept")
    check_observation_download(bulk, "multi-megabyte", expected_count=BULK_SAMPLES)

    observation = json.load(open(os.path.join(OUT, "observations-every-type.json")))
    sample = observation["entry"][0]["resource"]
    controls = [("no status", lambda r: r.pop("status")),
                ("no code", lambda r: r.pop("code")),
                ("an effective time that is none", lambda r: r.update(effectiveDateTime="yesterday")),
                ("a quantity that is no number", lambda r: r.update(valueQuantity={"value": "seventy"})),
                ("a member R4 has not", lambda r: r.update(sampleType="heart_rate"))]
    refused = sum(control("Observation", sample, what, change) for what, change in controls)
    bundle_controls = [("no type", lambda r: r.pop("type")),
                       ("an entry of no resource type", lambda r: r["entry"][0]["resource"].update(resourceType="Sample")),
                       ("an entry Observation without code", lambda r: r["entry"][0]["resource"].pop("code"))]
    refused += sum(control("Bundle", observation, what, change) for what, change in bundle_controls)
    return refused, len(controls) + len(bundle_controls)


def post_bundle(text, token):
    """`POST /v1/me/samples` with a FHIR Bundle: (status, JSON answer)."""
    request = urllib.request.Request(BASE_URL + "/v1/me/samples", data=text.encode(), method="POST")
    request.add_header("Content-Type", "application/fhir+json")
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()[:500]


def stored_samples(token):
    """The caller's samples as a set of (type, instant, value)."""
    items = expect(200, call("GET", "/v1/me/samples?limit=1000", token=token), "the samples")["items"]
    return {(item["type"], parse_instant(item["at"]), float(item["value"])) for item in items}


def fiscal_code(birth_and_place):
    """A fresh valid codice fiscale (random name letters) for the birth date, sex and place given."""
    odd = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                   [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16,
                    10, 22, 25, 24, 23]))
    even = {c: (int(c) if c.isdigit() else ord(c) - 65) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
    first15 = "".join(random.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(6)) + birth_and_place
    total = sum((odd if index % 2 == 0 else even)[c] for index, c in enumerate(first15))
    return first15 + chr(65 + total % 26)


def parse_instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def check_round_trip(samples):
    """Each Observation of the every-type download imports, as another person's Bundle, to its sample."""
    email = f"giulia.{tag}@example.com"
    expect(202, call("POST", "/v1/users", {"email": email, "password": password, "fiscalCode": fiscal_code("90A41F205"),
                                            "fullName": "Giulia Rossi", "birthDate": "1990-01-01", "sex": "F"}), "registration")
    other = activate_and_log_in(email, password)
    bundle_text = open(os.path.join(OUT, "observations-every-type.json")).read()
    status, answer = post_bundle(bundle_text, other)
    if status != 200:
        failures.append(f"round trip: the import answered {status}: {answer}")
        return
    wanted = {(sample["type"], parse_instant(sample["at"]), float(sample["value"])) for sample in samples}
    got = stored_samples(other)
    if got != wanted:
        failures.append(f"round trip: imported {sorted(got - wanted)[:5]} …, missing {sorted(wanted - got)[:5]}")
    say(f"round trip: the {len(samples)} samples' Observations imported to the same {len(got)} samples")


def check_own_export():
    """The person's own export in FHIR: a Bundle and NDJSON of their Observations."""
    code, content_type, text, _ = call("GET", "/v1/me/export?format=fhir", token=person, raw=True)
    if code != 200 or not content_type.startswith("application/fhir+json"):
        failures.append(f"own export, Bundle: answered {code} {content_type}")
        return
    save("own-export.json", text)
    in_bundle = validate_bundle(json.loads(text), "own export, Bundle", "Observation")
    code, content_type, text, _ = call("GET", "/v1/me/export?format=ndjson", token=person, raw=True)
    lines = validate_ndjson("Observation", text if code == 200 else "", "own export, NDJSON")
    if len(lines) != len(in_bundle) or not in_bundle:
        failures.append(f"own export: {len(lines)} NDJSON lines, {len(in_bundle)} Bundle entries")
    say(f"own export: a valid R4 Bundle and NDJSON of {len(in_bundle)} Observations")


def check_bulk_export():
    """The company's Bulk Data export: kick-off, polling (the served planner runs every second), the
    manifest, and every file's lines as R4 Observations."""
    answer = call("GET", "/v1/fhir/$export?_type=Observation", token=company, accept="application/fhir+json")
    if answer[0] != 202:
        failures.append(f"bulk export: the kick-off answered {answer[0]}: {answer[2]}")
        return
    status_url = answer[3].get("Content-Location", "")
    path = urllib.parse.urlparse(status_url).path
    deadline = time.monotonic() + 60
    while True:
        code, _, manifest, headers = call("GET", path, token=company)
        if code == 200 or time.monotonic() > deadline:
            break
        if code != 202 or not headers.get("X-Progress"):
            failures.append(f"bulk export: the status answered {code} without X-Progress")
            return
        time.sleep(0.5)
    if code != 200 or not isinstance(manifest, dict):
        failures.append(f"bulk export: no manifest within 60 s ({code})")
        return
    lines = 0
    for number, output in enumerate(manifest.get("output", []), start=1):
        file_code, content_type, text, _ = call("GET", urllib.parse.urlparse(output["url"]).path, token=company, raw=True)
        if file_code != 200 or not content_type.startswith("application/fhir+ndjson"):
            failures.append(f"bulk export, file {number}: answered {file_code} {content_type}")
            continue
        lines += len(validate_ndjson("Observation", text, f"bulk export, file {number}"))
        no_identity(text, f"bulk export, file {number}", SECRETS)
    if not manifest.get("output") or not lines:
        failures.append(f"bulk export: an empty manifest ({manifest})")
    say(f"bulk export: {len(manifest.get('output', []))} files, {lines} Observations, each a valid R4 Observation")


# ---- the run --------------------------------------------------------------------------------------------------

auditor = enrolled_auditor()
refused = total = 0
# Observations first: the Consent check leaves a request pending, and a company has one pending per person.
for check in (check_observations, lambda: (check_bulk_export(), (0, 0))[1], check_consents, lambda: check_audit_events(auditor)):
    r, t = check()
    refused, total = refused + r, total + t

if failures:
    print("\n".join(f"{TOOL}: FAILED {failure}" for failure in failures), file=sys.stderr)
    sys.exit(1)
say(f"{refused} of {total} negative controls refused")
say(f"validated {sum(validated.values())} resources (Consent {validated['Consent']}, AuditEvent {validated['AuditEvent']}, "
    f"Bundle {validated['Bundle']}, Observation {validated['Observation']})")
