"""Validates the API's FHIR R4 Consent resources with the R4 models of PyPI's fhir.resources (6.4.0, FHIR 4.0.1).

Run by scripts/fhir-consent-check.sh against a fresh server (BASE_URL, MAIL_DIR for activation mails, OUT
for the resources it saves). A person and a company go through every state a request can be in; each
request's Consent is fetched by both sides and must parse as an R4 Consent, with the status and
provision each state gives. A resource the models refuse fails the check; so does one the models accept
although it should not have passed (the negative controls below keep the validator honest).
"""
import glob
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid

import fhir.resources
from fhir.resources.consent import Consent
from pydantic import ValidationError

BASE_URL = os.environ["BASE_URL"]
MAIL_DIR = os.environ["MAIL_DIR"]
OUT = os.environ["OUT"]
failures = []
R4_CONSENT_STATES = ("draft", "proposed", "active", "rejected", "inactive", "entered-in-error")


def call(method, path, body=None, token=None):
    request = urllib.request.Request(BASE_URL + path, method=method)
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            return response.status, response.headers.get("Content-Type", ""), json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), json.loads(error.read().decode() or "null")


def expect(status, answer, what):
    if answer[0] != status:
        sys.exit(f"fhir-consent-check: {what} answered {answer[0]}: {answer[2]}")
    return answer[2]


def activate_and_log_in(email, password):
    token = None
    # The mail is written to the outbox with the registration and sent by the delivery loop a moment later.
    deadline = time.monotonic() + 15
    while token is None and time.monotonic() < deadline:
        for path in glob.glob(os.path.join(MAIL_DIR, "*.eml")):
            text = open(path, encoding="utf-8").read()
            if email in text:
                token = next(line.split(" ")[2].strip() for line in text.splitlines() if line.startswith("Activation token:"))
        if token is None:
            time.sleep(0.1)
    if token is None:
        sys.exit(f"fhir-consent-check: no activation mail for {email}")
    expect(200, call("POST", "/v1/activations", {"token": token}), "activation")
    return expect(201, call("POST", "/v1/sessions", {"email": email, "password": password}), "login")["token"]


tag = uuid.uuid4().hex[:8]
person_email, company_email, password = f"laura.{tag}@example.com", f"research.{tag}@example.com", "correct-horse-battery"
expect(202, call("POST", "/v1/users", {"email": person_email, "password": password, "fiscalCode": "BNCLRA90A41F205I",
                                        "fullName": "Laura Bianchi", "birthDate": "1990-01-01", "sex": "F"}), "registration")
expect(202, call("POST", "/v1/third-parties", {"email": company_email, "password": password, "vatNumber": "12345678903",
                                                "companyName": "Cardio Research S.p.A."}), "company registration")
person = activate_and_log_in(person_email, password)
company = activate_and_log_in(company_email, password)


def send(subject, **extra):
    body = {"subject": subject, "types": ["heart_rate", "step_count"], "purpose": "Cardiology study", "purposeCode": "HRESCH",
            "window": {"from": "2026-01-01T00:00:00Z", "to": "2026-06-30T00:00:00Z"}, **extra}
    return expect(201, call("POST", "/v1/single-requests", body, company), "a request")["id"]


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
pending = send({"fiscalCode": "BNCLRA90A41F205I"})

# (request, state, the status each side must see, provision type)
cases = [
    (granted, "granted", {"person": "active", "company": "active"}, "permit"),
    (stopped, "stopped", {"person": "inactive", "company": "inactive"}, "permit"),
    (part, "granted in part, no subscription", {"person": "active", "company": "active"}, "permit"),
    (refused, "refused", {"person": "rejected", "company": "proposed"}, None),
    (pending, "pending", {"person": "proposed", "company": "proposed"}, "permit"),
]
print(f"fhir-consent-check: fhir.resources {fhir.resources.__version__}, FHIR {fhir.resources.__fhir_version__}")
if fhir.resources.__fhir_version__ != "4.0.1":
    sys.exit(f"fhir-consent-check: fhir.resources {fhir.resources.__version__} is FHIR {fhir.resources.__fhir_version__}, not R4 (4.0.1)")

validated = 0
for request_id, state, statuses, provision_type in cases:
    for side, token in (("person", person), ("company", company)):
        code, content_type, resource = call("GET", f"/v1/single-requests/{request_id}/consent", token=token)
        name = f"{state}, as the {side}"
        with open(os.path.join(OUT, f"consent-{state.split(',')[0].replace(' ', '-')}-{side}.json"), "w") as file:
            json.dump(resource, file, indent=2)
        if code != 200 or not content_type.startswith("application/fhir+json"):
            failures.append(f"{name}: answered {code} {content_type}")
            continue
        try:
            consent = Consent.parse_obj(resource)
        except ValidationError as error:
            failures.append(f"{name}: not a valid R4 Consent:\n{error}")
            continue
        validated += 1
        # The models check structure and types, not value sets: R4's required bindings are checked here.
        if consent.status not in R4_CONSENT_STATES:
            failures.append(f"{name}: status {consent.status} is not in R4's ConsentState")
        if consent.provision and consent.provision.type not in ("deny", "permit"):
            failures.append(f"{name}: provision.type {consent.provision.type} is not in R4's ConsentProvisionType")
        if consent.status != statuses[side]:
            failures.append(f"{name}: status {consent.status}, expected {statuses[side]}")
        if provision_type and consent.provision.type != provision_type:
            failures.append(f"{name}: provision.type {consent.provision.type}, expected {provision_type}")
        text = json.dumps(resource)
        for secret in (person_email, "BNCLRA90A41F205I", "Laura"):
            if secret in text:
                failures.append(f"{name}: the resource names the person ({secret})")
        print(f"fhir-consent-check: {name}: a valid R4 Consent, status {consent.status}")

# Negative controls: the models must refuse what R4 does not allow, or the check above proves nothing.
sample = json.load(open(os.path.join(OUT, "consent-granted-company.json")))
controls = [("a member R4 has not", lambda r: r.update(grantedTypes=["heart_rate"])),
            ("no scope", lambda r: r.pop("scope")),
            ("no status", lambda r: r.pop("status")),
            ("a dateTime that is none", lambda r: r.update(dateTime="yesterday")),
            ("a period in month 13", lambda r: r["provision"]["period"].update(start="2026-13-01T00:00:00Z")),
            ("a patient that is no Reference", lambda r: r.update(patient="s_0"))]
for what, change in controls:
    broken = json.loads(json.dumps(sample))
    change(broken)
    try:
        Consent.parse_obj(broken)
        failures.append(f"negative control: a Consent with {what} passed validation")
    except ValidationError:
        pass

if validated != 2 * len(cases):
    failures.append(f"only {validated} of {2 * len(cases)} resources validated")
if failures:
    print("\n".join(f"fhir-consent-check: FAILED {failure}" for failure in failures), file=sys.stderr)
    sys.exit(1)
print(f"fhir-consent-check: {validated} Consent resources validated against the FHIR R4 models; {len(controls)} negative controls refused")
