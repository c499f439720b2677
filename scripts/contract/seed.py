"""Seeds a fresh Lens for the API contract run and writes schemathesis.toml.

Makes the admin, an API token, a second person, and real things for the routes that
take ids: a conversation whose answer ran code and imported a file (approved here), a
shared file, the library namespace and document the import made, a conversation whose
import waits for its approval, and disposable ones that the deletes may take.
Usage: seed.py BASE_URL WORK_DIR
"""

import json
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar

BASE, WORK = sys.argv[1], sys.argv[2]
cookies = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
token = None


def call(method, path, body=None, expect=(200, 201, 202, 204), csrf=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", "Bearer " + token)
    if csrf:
        req.add_header("x-csrf-token", csrf)
        req.add_header("origin", BASE)
    try:
        with cookies.open(req, timeout=60) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    if status not in expect:
        sys.exit(f"seed: {method} {path} answered {status}: {raw[:300]!r}")
    return json.loads(raw) if raw else None


def wait_for(what, check, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.25)
    sys.exit(f"seed: gave up waiting for {what}")


def steps(cid):
    return [s for m in call("GET", f"/api/v1/chats/{cid}")["messages"] for s in m.get("steps", [])]


def pending_approval(cid):
    return next((s["approval"]["id"] for s in steps(cid) if s.get("approval") and s["approval"].get("approved") is None), None)


def answer_done(cid, aid):
    msgs = call("GET", f"/api/v1/chats/{cid}")["messages"]
    return any(m["id"] == aid and m["status"] != "streaming" for m in msgs)


def import_report(title, approve):
    """A conversation whose answer writes report.txt and imports it into "Reports"."""
    cid = call("POST", "/api/v1/chats", {"title": title})["id"]
    aid = call("POST", f"/api/v1/chats/{cid}/messages", {"text": "Import the report"})["answer_id"]
    approval = wait_for("the import's approval", lambda: pending_approval(cid))
    if approve:
        call("POST", f"/api/v1/approvals/{approval}", {"approve": True})
        wait_for("the answer's end", lambda: answer_done(cid, aid))
    return cid, aid, approval


def table_in(cid):
    """table.csv made by a run in `cid` and shared: its file id."""
    aid = call("POST", f"/api/v1/chats/{cid}/messages", {"text": "Make the table"})["answer_id"]
    wait_for("the table's run", lambda: answer_done(cid, aid))
    return call("POST", f"/api/v1/chats/{cid}/files", {"path": "table.csv"}, expect=(201,))["id"]


session = call("POST", "/api/v1/setup", {"username": "admin", "password": "contract-password"})
csrf = session["csrf_token"]
# Tokens made before the one in use, so a fuzzed small id never revokes it.
spare = [call("POST", "/api/v1/tokens", {"name": f"spare {n}"}, csrf=csrf)["token"]["id"] for n in range(3)]
token = call("POST", "/api/v1/tokens", {"name": "contract", "scopes": ["chat", "approve", "admin"]}, csrf=csrf)["secret"]
bob = call("POST", "/api/v1/users", {"username": "bob", "password": "bob-password"})["id"]
# A second person who must never see the admin's things (object_level_authorization
# replays the admin's reads as her): her own session and token, through a jar of her own.
call("POST", "/api/v1/users", {"username": "carol", "password": "carol-password"})
admin_token, admin_cookies = token, cookies
token, cookies = None, urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
carol_csrf = call("POST", "/api/v1/auth/login", {"username": "carol", "password": "carol-password"})["csrf_token"]
carol_token = call("POST", "/api/v1/tokens", {"name": "peer", "scopes": ["chat", "approve"]}, csrf=carol_csrf)["secret"]
token, cookies = admin_token, admin_cookies

cid, aid, decided = import_report("Contract", approve=True)
shared = call("POST", f"/api/v1/chats/{cid}/files", {"path": "report.txt"}, expect=(201,))["id"]
table = table_in(cid)
namespace = next(n for n in call("GET", "/api/v1/library/namespaces") if n["name"] == "Reports")["id"]
document = call("GET", f"/api/v1/library/namespaces/{namespace}/documents")[0]["id"]
spare_cid, _, _ = import_report("Disposable", approve=True)
documents = call("GET", f"/api/v1/library/namespaces/{namespace}/documents")
spare_document = next(d["id"] for d in documents if d["id"] != document)
waiting_cid, _, waiting = import_report("Waiting", approve=False)
spare_namespace = call("POST", "/api/v1/library/namespaces", {"name": "Disposable"})["id"]
open_rules = {"sandbox": True, "network": "hosts", "allow_hosts": True, "max_running": 0, "models": []}
call("PUT", "/api/v1/admin/groups/spare", {"rules": open_rules, "members": []})


def toml_value(v):
    return json.dumps(str(v))


def operation(method, path, without=None, **params):
    """An operation's section: real values for its parameters, and a check that cannot
    apply to it turned off (`without`)."""
    inner = ", ".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in params.items())
    # One filter: include-method and include-path together would match either.
    section = f'[[operations]]\ninclude-name = "{method} {path}"\n'
    if params:
        section += f"parameters = {{ {inner} }}\n"
    if without:
        section += f"checks.{without}.enabled = false\n"
    return section


ops = [
    operation("GET", "/api/v1/chats/{cid}", cid=cid),
    operation("PATCH", "/api/v1/chats/{cid}", cid=cid),
    operation("DELETE", "/api/v1/chats/{cid}", cid=spare_cid),
    # Attachments are ids of the person's own uploads in this conversation: any other
    # string is the server's 400 (tests/it/uploads.rs), which the schema cannot foresee.
    operation("POST", "/api/v1/chats/{cid}/messages", without="positive_data_acceptance", cid=cid),
    operation("POST", "/api/v1/chats/{cid}/files", cid=cid),
    operation("GET", "/api/v1/chats/{cid}/files/{fid}", cid=cid, fid=shared),
    operation("GET", "/api/v1/chats/{cid}/answers/{aid}/events", cid=cid, aid=aid),
    operation("GET", "/api/v1/chats/{cid}/sandbox", cid=cid),
    operation("GET", "/api/v1/chats/{cid}/sandbox/files", cid=cid),
    operation("GET", "/api/v1/chats/{cid}/sandbox/zip", cid=cid),
    operation("POST", "/api/v1/chats/{cid}/sandbox/restart-python", cid=cid),
    operation("GET", "/api/v1/chats/{cid}/files/{fid}/preview", cid=cid, fid=shared),
    # A table's rows (a file that is no table is a 400 the schema cannot foresee: its
    # kind is the file's, not the request's; tests/it/previews.rs holds that).
    operation("GET", "/api/v1/chats/{cid}/files/{fid}/rows", cid=cid, fid=table),
    operation("GET", "/api/v1/chats/{cid}/notebook", cid=cid),
    operation("POST", "/api/v1/chats/{cid}/fork", cid=cid),
    # Its answer waits on an approval (409) until the approval's operation decides it;
    # after that the delete goes (204). The seeded conversation keeps its sandbox.
    operation("DELETE", "/api/v1/chats/{cid}/sandbox", cid=waiting_cid),
    operation("POST", "/api/v1/chats/{cid}/answers/{aid}/stop", cid=cid, aid=aid),
    operation("POST", "/api/v1/approvals/{id}", id=waiting),
    operation("GET", "/api/v1/library/namespaces/{id}", id=namespace),
    operation("PATCH", "/api/v1/library/namespaces/{id}", id=namespace),
    operation("DELETE", "/api/v1/library/namespaces/{id}", id=spare_namespace),
    operation("GET", "/api/v1/library/namespaces/{id}/documents", id=namespace),
    operation("GET", "/api/v1/library/documents/{id}", id=document),
    operation("GET", "/api/v1/library/documents/{id}/content", id=document),
    operation("DELETE", "/api/v1/library/documents/{id}", id=spare_document),
    operation("DELETE", "/api/v1/tokens/{id}", id=spare[0]),
    # Its one id is the seeded one: a negative case of it (past int64's range) is still
    # reported as sent although the request carried the seeded id.
    operation("DELETE", "/api/v1/users/{id}", without="negative_data_rejection", id=bob),
    # A file's bytes are any bytes: a "wrong type" for it (an object, a number) reaches
    # the server as the bytes of its text, a file as good as any.
    operation("POST", "/api/v1/uploads", without="negative_data_rejection"),
    # The sign-in settings' fields are strings to the schema; what makes one valid (an
    # http(s) issuer, a scope of one word, a line of text) is the server's 400, held by
    # tests/it/sign_in_settings.rs.
    operation("PUT", "/api/v1/settings/sign-in", without="positive_data_acceptance"),
    # A group's members are account names: any other string is the server's 400 (held by
    # tests/it/groups.rs), which the schema cannot foresee.
    operation("PUT", "/api/v1/admin/groups/{name}", without="positive_data_acceptance", name="contract"),
    operation("DELETE", "/api/v1/admin/groups/{name}", name="spare"),
]
# No cache of earlier failures and no example database: a run is its seed and nothing
# else, and leaves nothing in the work tree.
# A request may take its time: the sandbox check starts a scratch sandbox and imports the
# data stack in it, over ten seconds (schemathesis's default) on two busy cores.
config = f"""# Written by scripts/contract/seed.py for one run; not kept.
request-timeout = 60.0

[cache]
enabled = false

[generation]
database = "none"

# Who asks: the admin's token; carol is the peer whose reads must all be 404s.
[auth.wfc]
path = "{WORK}/auth.json"
user = "admin"
peers = ["admin", "carol"]

{chr(10).join(ops)}"""
people = [("admin", token), ("carol", carol_token)]
auth = {"auth": [{"name": n, "fixedHeaders": [{"name": "Authorization", "value": f"Bearer {t}"}]} for n, t in people]}
with open(f"{WORK}/auth.json", "w") as f:
    json.dump(auth, f)
with open(f"{WORK}/schemathesis.toml", "w") as f:
    f.write(config)
print(f"seed: conversation {cid} (answer {aid}, file {shared}), namespace {namespace}, document {document}, "
      f"waiting approval {waiting} in {waiting_cid}; decided {decided}")
