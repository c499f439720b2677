"""NVIDIA's own SDK drives Lens's fake gateway through every call Lens's driver makes: the
fake speaks the gateway's protocol as NVIDIA's client expects it, not only as Lens's does."""

from __future__ import annotations

import os
import threading
import uuid

import grpc
import pytest
from openshell._proto import datamodel_pb2, openshell_pb2, sandbox_pb2
from openshell import DeletionOutcome

WORKSPACE = "default"


@pytest.fixture
def sandbox(client):
    name = f"lens-conf-{uuid.uuid4().hex[:8]}"
    created = client.create(workspace=WORKSPACE, name=name, labels={"app": "lens", "lens-chat": "conformance"})
    assert created.name == name and created.id
    client.wait_ready(name, workspace=WORKSPACE, timeout_seconds=120)
    yield name
    client.delete(name, workspace=WORKSPACE, allow_missing=True)


def test_health_says_healthy_with_a_version(client):
    health = client.health()
    assert health.status == openshell_pb2.SERVICE_STATUS_HEALTHY
    assert health.version


def test_exec_gives_output_exit_code_and_takes_stdin_and_environment(client, sandbox):
    result = client.exec(sandbox, ["sh", "-c", "echo out; echo err >&2; exit 3"], workspace=WORKSPACE)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    result = client.exec(sandbox, ["cat"], workspace=WORKSPACE, stdin=b"from stdin")
    assert result.stdout == "from stdin"
    value = "a b $HOME 'q' \"d\" `id` next"
    result = client.exec(sandbox, ["sh", "-c", 'printf %s "$LENS_VALUE"'], workspace=WORKSPACE, env={"LENS_VALUE": value})
    assert result.stdout == value
    # An environment value is one line: the gateway refuses a newline in it.
    with pytest.raises(Exception) as refused:
        client.exec(sandbox, ["true"], workspace=WORKSPACE, env={"LENS_VALUE": "a\nb"})
    assert "newline" in str(refused.value)


def test_interactive_exec_carries_stdin_and_ends_with_the_exit(client, sandbox):
    start = openshell_pb2.ExecSandboxRequest(
        sandbox=sandbox,
        command=["sh", "-c", "head -c 5; echo; exit 7"],
        workspace_scope=datamodel_pb2.WorkspaceSelector(workspace=WORKSPACE),
        request_id=str(uuid.uuid4()),
    )
    # The input stays open until the command has exited: the gateway ends a command whose
    # interactive input ends (it closes the channel after the EOF).
    exited = threading.Event()

    def inputs():
        yield openshell_pb2.ExecSandboxInput(start=start)
        yield openshell_pb2.ExecSandboxInput(stdin=b"hello world")
        exited.wait(60)

    out, exits = b"", []
    for event in client._stub.ExecSandboxInteractive(inputs(), timeout=60):
        kind = event.WhichOneof("payload")
        if kind == "stdout":
            out += event.stdout.data
        elif kind == "exit":
            exits.append(event.exit.exit_code)
            exited.set()
    assert out == b"hello\n"
    assert exits == [7], "exactly one exit event"


def test_interactive_exec_ends_its_command_when_its_input_ends(client, sandbox):
    start = openshell_pb2.ExecSandboxRequest(
        sandbox=sandbox,
        command=["sh", "-c", "cat; sleep 2; echo done"],
        workspace_scope=datamodel_pb2.WorkspaceSelector(workspace=WORKSPACE),
        request_id=str(uuid.uuid4()),
    )
    inputs = iter([openshell_pb2.ExecSandboxInput(start=start), openshell_pb2.ExecSandboxInput(stdin=b"in")])
    out = b""
    with pytest.raises(grpc.RpcError) as ended:
        for event in client._stub.ExecSandboxInteractive(inputs, timeout=60):
            assert event.WhichOneof("payload") != "exit", "the command was ended, not exited"
            out += event.stdout.data
    assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
    assert b"done" not in out


def test_list_finds_it_by_label_and_get_reads_it(client, sandbox):
    listed = client.list_all(workspace=WORKSPACE, label_selector="app=lens")
    assert sandbox in [s.name for s in listed]
    got = client.get(sandbox, workspace=WORKSPACE)
    assert got.status.phase == openshell_pb2.SANDBOX_PHASE_READY
    assert got.labels["lens-chat"] == "conformance"


def test_update_config_takes_a_policy(client, sandbox):
    # What was applied at the sandbox's start (its filesystem, Landlock and process) stays
    # as it is: a live sandbox refuses changes to it. A sandbox made with no policy has
    # the one its supervisor found.
    scope = datamodel_pb2.WorkspaceSelector(workspace=WORKSPACE)
    live = client._stub.GetSandbox(openshell_pb2.GetSandboxRequest(name=sandbox, workspace_scope=scope), timeout=60)
    policy = sandbox_pb2.SandboxPolicy(version=1)
    policy.CopyFrom(live.sandbox.spec.policy)
    policy.network_policies.clear()
    rule = policy.network_policies["lens"]
    rule.name = "lens"
    rule.endpoints.add(host="files.example.org", ports=[443])
    rule.binaries.add(path="/**")
    reply = client._stub.UpdateConfig(
        openshell_pb2.UpdateConfigRequest(
            sandbox=sandbox, policy=policy, workspace_scope=datamodel_pb2.WorkspaceSelector(workspace=WORKSPACE)
        ),
        timeout=60,
    )
    assert reply.version >= 1


CONNECT_THROUGH_PROXY = r"""
import os, socket, sys
proxy = os.environ["HTTPS_PROXY"].removeprefix("http://")
host, port = proxy.rsplit(":", 1)
for target in sys.argv[1:]:
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    print(target, head.decode(), rest.decode())
"""


@pytest.mark.skipif(
    bool(os.environ.get("LENS_TEST_OPENSHELL_GATEWAY")),
    reason="the fake's proxy on loopback: the real gateway's proxy refuses loopback, and Lens's"
    " real-gateway tests read its lines",
)
def test_the_proxy_decides_by_policy_and_its_lines_come_back_from_get_sandbox_logs(client, sandbox):
    import socket
    import threading
    import time

    from google.protobuf import timestamp_pb2

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def answer():
        conn, _ = listener.accept()
        conn.sendall(b"hello")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    policy = sandbox_pb2.SandboxPolicy(version=1)
    rule = policy.network_policies["lens"]
    rule.name = "lens"
    rule.endpoints.add(host="localhost", ports=[port])
    rule.binaries.add(path="/**")
    scope = datamodel_pb2.WorkspaceSelector(workspace=WORKSPACE)
    given = client._stub.UpdateConfig(
        openshell_pb2.UpdateConfigRequest(sandbox=sandbox, policy=policy, workspace_scope=scope), timeout=60
    ).version
    # The gateway takes a policy at once; the sandbox's supervisor loads it at its next
    # poll, and then reports its version.
    deadline = time.monotonic() + 60
    while True:
        get = openshell_pb2.GetSandboxRequest(name=sandbox, workspace_scope=scope)
        loaded = client._stub.GetSandbox(get, timeout=60).sandbox.status.current_policy_version
        if loaded >= given:
            break
        assert time.monotonic() < deadline, f"policy {given} never loaded ({loaded})"
        time.sleep(0.1)
    since = timestamp_pb2.Timestamp()
    since.GetCurrentTime()
    targets = [f"localhost:{port}", "refused.example:443"]
    result = client.exec(sandbox, ["python3", "-c", CONNECT_THROUGH_PROXY, *targets], workspace=WORKSPACE)
    assert result.exit_code == 0, result.stderr
    assert f"localhost:{port} HTTP/1.1 200 Connection Established hello" in result.stdout
    assert "refused.example:443 HTTP/1.1 403 Forbidden" in result.stdout
    # The supervisor pushes its lines in batches: they come back a little later.
    ask = openshell_pb2.GetSandboxLogsRequest(sandbox=sandbox, since_time=since, sources=["sandbox"], workspace_scope=scope)
    deadline = time.monotonic() + 60
    while True:
        logs = client._stub.GetSandboxLogs(ask, timeout=60).logs
        if len(logs) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    lines = [(line.level, line.source, line.message) for line in logs]
    assert lines == [
        ("OCSF", "sandbox", f"NET:OPEN [INFO] ALLOWED -(-) -> localhost:{port} [policy:lens engine:opa]"),
        (
            "OCSF",
            "sandbox",
            "NET:OPEN [MED] DENIED -(-) -> refused.example:443 [policy:- engine:opa]"
            " [reason:endpoint refused.example:443 is not allowed by any policy]",
        ),
    ]
    assert all(line.event_time.ToDatetime() >= since.ToDatetime() for line in logs)
    later = timestamp_pb2.Timestamp()
    later.GetCurrentTime()
    ask.since_time.CopyFrom(later)
    assert not client._stub.GetSandboxLogs(ask, timeout=60).logs, "nothing since"
    with pytest.raises(grpc.RpcError) as missing:
        client._stub.GetSandboxLogs(
            openshell_pb2.GetSandboxLogsRequest(sandbox="no-such-sandbox", workspace_scope=scope), timeout=60
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_stop_start_and_delete(client, sandbox):
    client.stop(sandbox, workspace=WORKSPACE)
    client.wait_stopped(sandbox, workspace=WORKSPACE, timeout_seconds=120)
    client.start(sandbox, workspace=WORKSPACE)
    client.wait_ready(sandbox, workspace=WORKSPACE, timeout_seconds=120)
    assert client.exec(sandbox, ["true"], workspace=WORKSPACE).exit_code == 0
    deleted = client.delete(sandbox, workspace=WORKSPACE)
    assert deleted.outcome in (DeletionOutcome.COMPLETED, DeletionOutcome.ACCEPTED)
    client.wait_deleted(sandbox, workspace=WORKSPACE, timeout_seconds=120)
    with pytest.raises(grpc.RpcError) as missing:
        client.get(sandbox, workspace=WORKSPACE)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    again = client.delete(sandbox, workspace=WORKSPACE, allow_missing=True)
    assert again.outcome == DeletionOutcome.ALREADY_ABSENT


def test_a_second_create_of_the_same_name_is_already_exists(client, sandbox):
    with pytest.raises(grpc.RpcError) as twice:
        client.create(workspace=WORKSPACE, name=sandbox)
    assert twice.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_a_nameless_create_is_named_and_lists_come_in_pages(client):
    labels = {"app": "lens-conf-pages"}
    made = [client.create(workspace=WORKSPACE, labels=labels) for _ in range(3)]
    try:
        assert all(m.name for m in made), "each create without a name got one"
        listed = client.list_all(workspace=WORKSPACE, page_size=1, label_selector="app=lens-conf-pages")
        assert sorted(s.name for s in listed) == sorted(m.name for m in made), "every page followed, each once"
        first = next(iter(client.list(workspace=WORKSPACE, page_size=1, label_selector="app=lens-conf-pages")))
        assert len(first.items) == 1 and first.next_page_token, "one to a page, and a token for the next"
    finally:
        for m in made:
            client.delete(m.name, workspace=WORKSPACE, allow_missing=True)
