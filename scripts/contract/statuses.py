"""Prints, from schemathesis's HAR report, what each operation answered and how often.

The table shows that the routes given real ids reached their handlers (a 200 or 204
beside the 4xx of fuzzed input), not only 404 for ids that do not exist.
Usage: statuses.py HAR_FILE OPENAPI_JSON
"""

import collections
import json
import re
import sys
import urllib.parse

har = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
routes = []
for path, item in doc["paths"].items():
    pattern = re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$")
    routes.extend((method.upper(), path, pattern) for method in item)
counts = collections.defaultdict(collections.Counter)
for entry in har["log"]["entries"]:
    method = entry["request"]["method"]
    path = urllib.parse.urlsplit(entry["request"]["url"]).path
    name = next((f"{m} {p}" for m, p, rx in routes if m == method and rx.match(path)), f"{method} (other)")
    counts[name][entry["response"]["status"]] += 1
for name in sorted(counts):
    shown = ", ".join(f"{status}×{n}" for status, n in sorted(counts[name].items()))
    print(f"  {name}: {shown}")
