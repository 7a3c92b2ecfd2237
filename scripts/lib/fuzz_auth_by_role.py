"""Schemathesis hook for `make fuzz`: each operation is fuzzed as a role allowed to call it.

openapi.yaml lists the roles of every operation in `x-roles`. With one token for the whole run,
the operations of the other roles would only ever answer 403, and their handlers, bodies and
error paths would go untested. `scripts/api-fuzz.sh` signs in one demo account per role and passes
the tokens in D4H_FUZZ_TOKEN_USER, D4H_FUZZ_TOKEN_THIRD_PARTY and D4H_FUZZ_TOKEN_AUDITOR.

An operation open to several roles is fuzzed as each of them in turn (a counter per operation, so
a run is reproducible with the same seed). `anyone` operations get the user's token, which they ignore.
"""

import itertools
import os

import schemathesis

TOKENS = {
    "user": os.environ["D4H_FUZZ_TOKEN_USER"],
    "third_party": os.environ["D4H_FUZZ_TOKEN_THIRD_PARTY"],
    "auditor": os.environ["D4H_FUZZ_TOKEN_AUDITOR"],
}

_role_cycles = {}


def _roles(operation):
    declared = operation.definition.raw.get("x-roles") or ["anyone"]
    roles = [role for role in declared if role in TOKENS]
    return roles or ["user"]


# No caching (`refresh_interval=None`): the token depends on the operation. No re-login on 401
# (`retry_on=[]`): a 401 is an answer under test, not an expired token.
@schemathesis.auth(refresh_interval=None, retry_on=[])
class TokenForRole:
    def get(self, case, context):
        label = context.operation.label
        if label not in _role_cycles:
            _role_cycles[label] = itertools.cycle(_roles(context.operation))
        return TOKENS[next(_role_cycles[label])]

    def set(self, case, token, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {token}"
