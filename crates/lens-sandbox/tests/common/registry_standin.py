"""A TLS package registry stand-in for Lens's tests: a PEP 503 index (under /simple/) with
one wheel, and an npm registry (under /npm/) with one package. Every request's method and
path is appended to the log file; uploads are answered 201, so a refusal a program sees is
Lens's proxy's, never this stand-in's.

    python3 registry_standin.py CERT KEY LOG PORT_FILE [PAD_BYTES [ADDRESS]]

PAD_BYTES makes the wheel that much larger (random bytes, stored), for download figures.
ADDRESS is where it listens (127.0.0.1; a gateway's sandboxes reach the host elsewhere).
"""
import base64
import hashlib
import io
import json
import os
import ssl
import sys
import tarfile
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, LOG, PORT_FILE = sys.argv[1:5]
PAD = int(sys.argv[5]) if len(sys.argv) > 5 else 0
ADDRESS = sys.argv[6] if len(sys.argv) > 6 else "127.0.0.1"


def wheel():
    files = {
        "demo_pkg/__init__.py": 'VERSION = "1.0"\n',
        "demo_pkg/blob.bin": os.urandom(PAD),
        "demo_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n",
        "demo_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: lens-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    buf, record = io.BytesIO(), []
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            data = text if isinstance(text, bytes) else text.encode()
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append("demo_pkg-1.0.dist-info/RECORD,,")
        z.writestr("demo_pkg-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return buf.getvalue()


def tarball():
    files = {
        "package/package.json": json.dumps({"name": "demo-npm", "version": "1.0.0", "main": "index.js"}),
        "package/index.js": "module.exports = 'demo-npm 1.0.0';\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


WHEEL, TARBALL = wheel(), tarball()
WHEEL_NAME = "demo_pkg-1.0-py3-none-any.whl"


class Registry(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with open(LOG, "a") as f:
            f.write(f"{self.command} {self.path}\n")

    def reply(self, status, body, kind="application/octet-stream"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self.record()
        host = self.headers.get("Host", "localhost")
        path = self.path.split("?")[0]
        if path in ("/simple/demo-pkg/", "/simple/demo-pkg"):
            digest = hashlib.sha256(WHEEL).hexdigest()
            page = f'<html><body><a href="/files/{WHEEL_NAME}#sha256={digest}">{WHEEL_NAME}</a></body></html>'
            self.reply(200, page.encode(), "text/html")
        elif path == f"/files/{WHEEL_NAME}":
            self.reply(200, WHEEL)
        elif path == "/npm/demo-npm":
            dist = {
                "tarball": f"https://{host}/npm/demo-npm/-/demo-npm-1.0.0.tgz",
                "shasum": hashlib.sha1(TARBALL).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(TARBALL).digest()).decode(),
            }
            doc = {
                "name": "demo-npm",
                "dist-tags": {"latest": "1.0.0"},
                "versions": {"1.0.0": {"name": "demo-npm", "version": "1.0.0", "main": "index.js", "dist": dist}},
            }
            self.reply(200, json.dumps(doc).encode(), "application/json")
        elif path == "/npm/demo-npm/-/demo-npm-1.0.0.tgz":
            self.reply(200, TARBALL)
        else:
            self.reply(404, b"not found\n", "text/plain")

    do_HEAD = do_GET

    def upload(self):
        self.record()
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.reply(201, b'{"ok": true}', "application/json")

    do_PUT = do_POST = do_DELETE = do_PATCH = upload


server = ThreadingHTTPServer((ADDRESS, 0), Registry)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(PORT_FILE + ".part", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".part", PORT_FILE)
server.serve_forever()
