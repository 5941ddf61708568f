#!/usr/bin/env python3
"""Creates an image task, waits until it is final and downloads the result: the standard library only.

    GESSO_URL=http://127.0.0.1:8080 GESSO_KEY=sk-... python3 docs/examples/client.py "a red fox" fox.png

Prints the final task as JSON; exits 1 (printing the API's msg) when a request is refused or the task
fails.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid

URL = os.environ.get("GESSO_URL", "http://127.0.0.1:8080")
KEY = os.environ.get("GESSO_KEY") or sys.exit("set GESSO_KEY to an sk- API key")


class Refused(Exception):
    """The API refused a request: its HTTP status and msg."""


def call(method, path, body=None, headers=None, timeout=30):
    request = urllib.request.Request(URL + path, method=method, headers={"Authorization": f"Bearer {KEY}"})
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if body is not None:
        request.add_header("Content-Type", "application/json")
        request.data = json.dumps(body).encode()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.load(answer)["data"]
    except urllib.error.HTTPError as refusal:
        # Every refusal is the same envelope, with a msg that names the problem.
        raise Refused(f"HTTP {refusal.code}: {json.load(refusal)['msg']}") from None


def create(prompt):
    # One Idempotency-Key per task you mean to create: a retry after a lost answer returns the same
    # task instead of charging twice.
    key = str(uuid.uuid4())
    body = {"model_id": "vendor3-image-2", "prompt": prompt, "aspect_ratio": "3:2"}
    for attempt in range(3):
        try:
            return call("POST", "/api/v1/tasks/create", body, {"Idempotency-Key": key})
        except (urllib.error.URLError, TimeoutError):
            time.sleep(attempt + 1)
    return call("POST", "/api/v1/tasks/create", body, {"Idempotency-Key": key})


def wait(task_id):
    # ?wait=60 answers as soon as the task is final, or after 60 s with the task as it is then.
    while True:
        task = call("GET", f"/api/v1/tasks/{task_id}?wait=60", timeout=70)
        if task["task_status"] in (3, 4):
            return task


def main():
    prompt = sys.argv[1] if len(sys.argv) > 1 else "a red fox in snow"
    out = sys.argv[2] if len(sys.argv) > 2 else "result.png"
    try:
        created = create(prompt)
        print(f"created {created['task_id']} for {created['credits']} credits", file=sys.stderr)
        task = wait(created["task_id"])
    except Refused as refusal:
        sys.exit(f"refused: {refusal}")
    print(json.dumps(task))
    if task["task_status"] == 4:
        sys.exit(f"task failed ({task['error']['kind']}): {task['error']['message']}")
    # The result link is signed and expires; it needs no API key.
    with urllib.request.urlopen(task["image_url"], timeout=300) as image, open(out, "wb") as file:
        file.write(image.read())
    print(f"saved {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
