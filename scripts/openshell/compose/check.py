"""What a person does with Lens under compose.yaml's `sandbox` profile, through its
published port (scripts/compose-sandbox): the page answers; setup refuses without the
code Lens printed in its log and takes it with it; a conversation's answer runs bash that
writes report.txt, in a sandbox container the gateway made through podman; the file is
in the workspace's listing and comes back as a shared file with what the code wrote;
deleting the conversation removes the container.
Usage: check.py BASE_URL LENS_CONTAINER SANDBOX_NAMESPACE"""

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar

BASE, LENS, NAMESPACE = sys.argv[1], sys.argv[2], sys.argv[3]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
csrf = None
passed = 0
started = time.time()


def request(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("content-type", "application/json")
    if csrf:
        req.add_header("x-csrf-token", csrf)
        req.add_header("origin", BASE)
    try:
        with opener.open(req, timeout=120) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError):
        return None, b""


def call(method, path, body=None, expect=(200, 201, 202, 204)):
    status, raw = request(method, path, body)
    if status not in expect:
        sys.exit(f"compose check: {method} {path} answered {status}: {raw[:300]!r}")
    return json.loads(raw) if raw else None


def wait_for(what, check, seconds=240, seen=lambda: ""):
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    sys.exit(f"compose check: gave up after {seconds} s waiting for {what} {seen()}".rstrip())


def ok(what):
    global passed
    passed += 1
    print(f"compose check: {what}")


t0 = time.time()
wait_for("Lens's health", lambda: request("GET", "/healthz")[0] == 200)
status, page = request("GET", "/")
if status != 200 or b"<html" not in page.lower():
    sys.exit(f"compose check: the page answered {status}: {page[:200]!r}")
ok(f"Lens answers on its published port ({time.time() - t0:.1f} s after up)")


def setup_code():
    logs = subprocess.run(["podman", "logs", LENS], capture_output=True, text=True).stdout
    logs += subprocess.run(["podman", "logs", LENS], capture_output=True, text=True).stderr
    found = re.search(r"setup code: ([A-Z0-9-]+)", re.sub(r"\x1b\[[0-9;]*m", "", logs))
    return found and found.group(1)


code = wait_for("the setup code in Lens's log", setup_code, seconds=30)
account = {"username": "admin", "password": "compose-password"}
status, raw = request("POST", "/api/v1/setup", account)
if status != 403 or b"setup code" not in raw:
    sys.exit(f"compose check: setup without the code answered {status}: {raw[:200]!r}")
csrf = call("POST", "/api/v1/setup", {**account, "setup_code": code})["csrf_token"]
ok("setup refuses without the code from Lens's log and takes it with it")


def steps(cid):
    return [s for m in call("GET", f"/api/v1/chats/{cid}")["messages"] for s in m.get("steps", [])]


def pending_approval(cid):
    return next((s["approval"]["id"] for s in steps(cid) if s.get("approval") and s["approval"].get("approved") is None), None)


def answer_done(cid, aid):
    msgs = call("GET", f"/api/v1/chats/{cid}")["messages"]
    return next((m for m in msgs if m["id"] == aid and m["status"] != "streaming"), None)


t0 = time.time()
cid = call("POST", "/api/v1/chats", {"title": "Compose"})["id"]
aid = call("POST", f"/api/v1/chats/{cid}/messages", {"text": "Import the report"})["answer_id"]
conversation = lambda: json.dumps(call("GET", f"/api/v1/chats/{cid}"))[:1500]
approval = wait_for("the run and the import's approval", lambda: pending_approval(cid), seen=conversation)
call("POST", f"/api/v1/approvals/{approval}", {"approve": True})
answer = wait_for("the answer's end", lambda: answer_done(cid, aid), seen=conversation)
run = next(s for s in steps(cid) if s["tool"] == "run_bash")
if run["status"] != "succeeded" or answer["status"] == "failed":
    sys.exit(f"compose check: the run ended {run['status']}, the answer {answer['status']}: {json.dumps(run)[:600]}")
ok(f"an answer ran bash in the sandbox and ended ({time.time() - t0:.1f} s, the sandbox's start included)")

def sandbox_containers():
    listed = subprocess.run(
        ["podman", "ps", "-a", "--filter", f"label=openshell.ai/sandbox-namespace={NAMESPACE}", "--format", "{{.Names}} {{.Image}}"],
        capture_output=True, text=True, check=True).stdout.split("\n")
    return [c for c in listed if c]


containers = sandbox_containers()
if len(containers) != 1:
    sys.exit(f"compose check: expected one sandbox container of the gateway's, found {containers}")
ok(f"the run was in the gateway's sandbox container ({containers[0]})")

listing = call("GET", f"/api/v1/chats/{cid}/sandbox/files")
names = [e["name"] for e in listing["entries"]]
if "report.txt" not in names:
    sys.exit(f"compose check: report.txt is not in the workspace's listing: {names}")
shared = call("POST", f"/api/v1/chats/{cid}/files", {"path": "report.txt"}, expect=(201,))["id"]
status, content = request("GET", f"/api/v1/chats/{cid}/files/{shared}")
if status != 200 or content != b"Quarterly revenue grew 12 percent.\n":
    sys.exit(f"compose check: the shared file answered {status}: {content[:200]!r}")
ok("report.txt is in the workspace and comes back as a shared file with what the code wrote")

call("DELETE", f"/api/v1/chats/{cid}", expect=(204,))
wait_for("the sandbox's container to go", lambda: not sandbox_containers(), seconds=120, seen=lambda: str(sandbox_containers()))
ok("deleting the conversation removes its sandbox's container")
print(f"compose check: {passed} passed in {time.time() - started:.1f}s")
