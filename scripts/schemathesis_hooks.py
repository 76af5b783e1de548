"""Schemathesis hooks for scripts/schemathesis.sh.

Every generated request comes from its own client address (X-Forwarded-For, which the server
under test trusts): the per-address limits on unauthenticated requests stay as they are in
production, and the run tests the API rather than the limiter.
"""

import random

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    address = "10.{}.{}.{}".format(*(random.randint(0, 255) for _ in range(3)))
    if case.headers is None:
        case.headers = {}
    case.headers["X-Forwarded-For"] = address
