"""The local AWS emulator: moto's server on 127.0.0.1 at the port given, one request at a time.

One at a time because moto's threaded server does not make DynamoDB's atomic counters atomic
under concurrent updates (a real table does), and the port conformance suite checks that. The
emulator is then what the suite on the AWS adapters waits on, so two of moto's per-request
lookups, fixed for the life of the process, are made once (moto is pinned in infra/emulator.sh):
the listing of moto's own package directory that tells a service name from a host (a tenth of
its time), and the inspection of the handler class's methods on every call (another tenth).
"""

import functools
import sys

from moto import backends
from moto.core import responses, utils
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple

modules = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: modules
responses.method_names_from_class = functools.cache(
    lambda cls: frozenset(utils.method_names_from_class(cls))
)

run_simple(
    "127.0.0.1",
    int(sys.argv[1]),
    DomainDispatcherApplication(create_backend_app),
    threaded=False,
    request_handler=MotoRequestHandler,
)
