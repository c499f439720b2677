"""Fixtures of the OpenShell conformance tests: NVIDIA's `openshell` wheel (its SDK, its
descriptors, its own fixture checks) held against Lens's fake gateway, `.proto` files
and gateway configuration. Run by scripts/openshell-conformance, once per wheel."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest
from openshell.sandbox import SandboxClient, TlsConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fake_gateway():
    """`lens-fake-gateway` on loopback with mutual TLS: its address and certificate folder;
    under scripts/openshell/real-gateway, NVIDIA's real gateway behind Lens's test bridge."""
    if os.environ.get("LENS_TEST_OPENSHELL_GATEWAY"):
        yield {"address": os.environ["LENS_TEST_OPENSHELL_GATEWAY"], "cert_dir": os.environ["LENS_TEST_OPENSHELL_CERTS"]}
        return
    binary = os.environ.get("LENS_FAKE_GATEWAY", str(ROOT / "target/release/lens-fake-gateway"))
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        yield info
    finally:
        # Its standard input closing ends it, and it removes its folders.
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.fixture
def client(fake_gateway):
    """NVIDIA's SDK client, over mutual TLS with the gateway's client certificate."""
    certs = pathlib.Path(fake_gateway["cert_dir"])
    tls = TlsConfig(
        ca_path=certs / "ca.crt",
        cert_path=certs / "client/tls.crt",
        key_path=certs / "client/tls.key",
    )
    c = SandboxClient(fake_gateway["address"], tls=tls, timeout=60)
    yield c
    c.close()
