#!/usr/bin/env python3
"""Bootstrap sizes and cold starts of the Lambda binaries, measured on this machine.

Each bootstrap built by `cargo lambda build --release` (in target/lambda/<name>/bootstrap) is
started against a stand-in of the Lambda runtime API that hands it one event from infra/events/;
the cold start is the time from process start to its answer to that first event. The AWS
resources it talks to live on the local emulator (run under `. infra/emulator.sh`; uses boto3,
which the emulator's virtualenv has):

    . infra/emulator.sh && target/aws-venv/bin/python infra/cold_start.py
"""

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "infra" / "events"
BUILT = ROOT / "target" / "lambda"

# Which event each function gets first.
FUNCTIONS = {
    "http-health": "http-health.json",
    "http-books": "http-books-unauthorized.json",
    "http-translate": "http-books-unauthorized.json",
    "http-download": "http-books-unauthorized.json",
    "http-keys": "http-books-unauthorized.json",
    "http-webhooks": "http-books-unauthorized.json",
    "http-notifications": "http-books-unauthorized.json",
    "http-glossary": "http-books-unauthorized.json",
    "http-user": "http-books-unauthorized.json",
    "http-usage": "http-books-unauthorized.json",
    "http-community": "http-books-unauthorized.json",
    "http-admin": "http-books-unauthorized.json",
    "worker-jobs": "sqs-jobs.json",
    "worker-render": "sqs-jobs.json",
    "worker-dead-letter": "sqs-jobs.json",
    "worker-webhooks": "sqs-jobs.json",
    "schedule-digest": "schedule-digest.json",
}


def resources():
    """A table, a bucket and the four queues on the emulator, as template.yaml declares them."""
    name = f"coldstart-{uuid.uuid4().hex[:8]}"
    dynamo = boto3.client("dynamodb")
    dynamo.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "gsi1pk", "gsi1sk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi1",
            "KeySchema": [{"AttributeName": "gsi1pk", "KeyType": "HASH"}, {"AttributeName": "gsi1sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    boto3.client("s3").create_bucket(Bucket=name)
    sqs = boto3.client("sqs")
    dlq = sqs.create_queue(QueueName=f"{name}-jobs-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    jobs = sqs.create_queue(QueueName=f"{name}-jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    render = sqs.create_queue(QueueName=f"{name}-render.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    hooks = sqs.create_queue(QueueName=f"{name}-webhooks")["QueueUrl"]
    secrets_key = boto3.client("kms").create_key(Description=name)["KeyMetadata"]["KeyId"]
    return {
        "BOOKTR_TABLE": name,
        "BOOKTR_BUCKET": name,
        "BOOKTR_JOBS_QUEUE_URL": jobs,
        "BOOKTR_JOBS_DLQ_URL": dlq,
        "BOOKTR_RENDER_QUEUE_URL": render,
        "BOOKTR_WEBHOOKS_QUEUE_URL": hooks,
        "BOOKTR_KMS_KEY_ID": secrets_key,
        "BOOKTR_PUBLIC_URL": "https://example.execute-api.us-east-1.amazonaws.com",
    }


class RuntimeApi(ThreadingHTTPServer):
    """Serves one invocation, then records when (and what) the function answered."""

    def __init__(self, event):
        super().__init__(("127.0.0.1", 0), Handler)
        self.event = event
        self.served = False
        self.answered = threading.Event()
        self.answer_at = None
        self.answer = None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if not self.path.endswith("/runtime/invocation/next"):
            self.send_error(404)
            return
        if self.server.served:
            # Long-poll forever: the measurement is over.
            time.sleep(3600)
            return
        self.server.served = True
        body = self.server.event.encode()
        self.send_response(200)
        self.send_header("Lambda-Runtime-Aws-Request-Id", "cold-start-1")
        self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000))
        self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:x")
        self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode(errors="replace")
        self.send_response(202)
        self.end_headers()
        self.server.answer_at = time.perf_counter()
        self.server.answer = (self.path.rsplit("/", 1)[-1], body)
        self.server.answered.set()


def measure(name, event, env):
    bootstrap = BUILT / name / "bootstrap"
    api = RuntimeApi(event)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    process_env = dict(os.environ, **env)
    process_env.update({
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{api.server_address[1]}",
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "cold-start",
        "BOOKTR_LOG": "warn",
    })
    start = time.perf_counter()
    process = subprocess.Popen([str(bootstrap)], env=process_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    answered = api.answered.wait(30)
    process.kill()
    _, stderr = process.communicate()
    api.shutdown()
    if not answered:
        return None, f"no answer; stderr: {stderr.decode(errors='replace')[-500:]}"
    kind, body = api.answer
    summary = body[:80].replace("\n", " ")
    return (api.answer_at - start) * 1000, f"{kind}: {summary}"


def main():
    env = resources()
    print(f"{'function':<20} {'bootstrap':>10} {'cold start':>11}  first answer")
    for name, event_file in FUNCTIONS.items():
        bootstrap = BUILT / name / "bootstrap"
        if not bootstrap.exists():
            print(f"{name:<20} {'missing':>10}")
            continue
        size = bootstrap.stat().st_size / (1024 * 1024)
        millis, what = measure(name, (EVENTS / event_file).read_text(), env)
        cold = f"{millis:8.1f} ms" if millis is not None else "    failed"
        print(f"{name:<20} {size:7.1f} MiB {cold}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
