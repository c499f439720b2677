//! The egress proxy through a real sandbox: a local fake package index stands in for a
//! registry, reached by name through the proxy when listed and trusted, and refused in
//! every other way; and a real `pip install` through the registries this host uses.

use std::time::Duration;

use lens_sandbox::{
    ChatNetwork, LocalDriver, LocalOptions, Network, RunEnding, SandboxDriver,
    egress::{Cidr, EgressPolicy},
    registries::Registries,
    run_to_end,
    testing::eventually,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod common;

use common::{agent, reached};

/// The one page the tiny index answers, whole.
fn index_reply() -> String {
    let body = "<html><body><a href=\"tinypkg-1.0.tar.gz\">tinypkg-1.0.tar.gz</a></body></html>";
    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

/// A tiny package index: answers every request with one simple-index page.
async fn fake_index() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let _ = sock.write_all(index_reply().as_bytes()).await;
            });
        }
    });
    port
}

fn driver(network: Option<Network>) -> (LocalDriver, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap();
    d.set_network(network);
    (d, dir)
}

async fn bash(d: &dyn SandboxDriver, chat: &str, script: &str, secs: u64) -> (String, String, RunEnding) {
    common::bash(d, chat, script, Duration::from_secs(secs)).await
}

fn proxy_env() -> Vec<(String, String)> {
    ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
        .iter()
        .map(|k| (k.to_string(), "http://127.0.0.1:3128".to_string()))
        .collect()
}

#[tokio::test]
async fn the_proxy_allows_listed_trusted_names_and_refuses_the_rest() {
    let port = fake_index().await;
    let policy = EgressPolicy { hosts: vec!["localhost".into()], trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    // Allowed: a listed name, resolved by the proxy to a trusted address (CONNECT, as pip does).
    let (out, err, _) = bash(
        &d,
        "egress",
        &format!("curl -sS -p -x http://127.0.0.1:3128 http://localhost:{port}/simple/tinypkg/"),
        20,
    )
    .await;
    assert!(out.contains("tinypkg-1.0.tar.gz"), "allowed: {out} {err}");
    // A name not on the list.
    let (out, err, _) = bash(
        &d,
        "egress",
        "curl -sS -p -x http://127.0.0.1:3128 http://example.invalid:443/ -o /dev/null -w '%{http_code}'",
        20,
    )
    .await;
    assert!(err.contains("403") || out.contains("403"), "unlisted name: {out} {err}");
    // An address written as a literal.
    let (out, err, _) =
        bash(&d, "egress", &format!("curl -sS -p -x http://127.0.0.1:3128 http://127.0.0.1:{port}/"), 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "IP literal: {out} {err}");
    // Plain HTTP, not tunnelled.
    let (out, _, _) = bash(
        &d,
        "egress",
        &format!(
            "curl -sS -x http://127.0.0.1:3128 http://localhost:{port}/simple/ -o /dev/stdout -w '\\n%{{http_code}}'"
        ),
        20,
    )
    .await;
    assert!(out.contains("plain HTTP is not allowed") && out.trim_end().ends_with("403"), "plain HTTP: {out:?}");
    // Direct connections still go nowhere: the sandbox has only loopback.
    let (out, _, _) =
        bash(&d, "egress", &format!("curl -sS -m 3 --noproxy '*' http://10.0.0.1:{port}/ || echo unreachable"), 20)
            .await;
    assert!(out.contains("unreachable"), "{out}");
    let log = d.egress_log();
    assert_eq!(log.iter().filter(|e| e.allowed).count(), 1, "{log:?}");
    assert!(log.iter().any(|e| !e.allowed && e.reason.contains("not on the sandbox's list")), "{log:?}");
    assert!(log.iter().any(|e| !e.allowed && e.reason.contains("is an address")), "{log:?}");
}

#[tokio::test]
async fn each_run_carries_the_hosts_it_reached_and_was_refused_with_the_bytes() {
    let port = fake_index().await;
    let policy = EgressPolicy { hosts: vec!["localhost".into()], trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let curl = "curl -sS -p -x http://127.0.0.1:3128 -o /dev/null";
    let script = format!(
        "{curl} http://localhost:{port}/simple/tinypkg/; {curl} http://localhost:{port}/simple/; \
         {curl} http://example.invalid:443/; true"
    );
    let record = reached(&d, "reach", &script).await.expect("a record");
    assert_eq!(record.len(), 2, "{record:?}");
    let local = &record[0];
    assert_eq!((local.host.as_str(), local.port, local.allowed, local.connections), ("localhost", port, true, 2));
    assert!(local.reason.starts_with("connected to 127.0.0.1:"), "{local:?}");
    // Two pages came in, byte for byte; two requests went out.
    assert_eq!(local.bytes_received, Some(2 * index_reply().len() as u64), "{local:?}");
    assert!(local.bytes_sent >= Some(100), "{local:?}");
    let refused = &record[1];
    assert_eq!((refused.host.as_str(), refused.port, refused.allowed), ("example.invalid", 443, false));
    assert!(refused.reason.contains("not on the sandbox's list"), "{refused:?}");
    // The next run made no connection: it carries none of the last run's.
    assert_eq!(reached(&d, "reach", "echo quiet").await, None);
    // A flood of refused hosts keeps a bounded record, and the run after it works.
    let flood = "for i in $(seq 1 150); do curl -s -p -x http://127.0.0.1:3128 -o /dev/null http://h$i.invalid:443/; done; true";
    let record = reached(&d, "reach", flood).await.expect("a record");
    assert_eq!(record.len(), 100, "at most a hundred hosts");
    let (out, _, _) = bash(&d, "reach", "echo next", 20).await;
    assert_eq!(out, "next\n");
}

#[tokio::test]
async fn a_host_an_owner_allowed_is_reached_from_that_conversation_only() {
    let port = fake_index().await;
    let policy =
        EgressPolicy { hosts: vec!["other.invalid".into()], trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let get = format!("curl -sS -p -x http://127.0.0.1:3128 http://localhost:{port}/simple/ || true");
    let (out, err, _) = bash(&d, "theirs", &get, 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "not yet allowed: {out} {err}");
    d.set_chat_network("theirs", ChatNetwork { hosts: vec!["localhost".into()], within: None });
    let record = reached(&d, "theirs", &get).await.expect("a record");
    assert!(record[0].allowed && record[0].reason.ends_with("(allowed in this conversation)"), "{record:?}");
    let (out, _, _) = bash(&d, "theirs", &get, 20).await;
    assert!(out.contains("tinypkg-1.0.tar.gz"), "allowed: {out}");
    // Another conversation's sandbox is refused the same host.
    let (out, err, _) = bash(&d, "another", &get, 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "{out} {err}");
    // Taken back: refused again.
    d.set_chat_network("theirs", ChatNetwork::default());
    let (out, err, _) = bash(&d, "theirs", &get, 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "{out} {err}");
    d.note_egress("theirs", "localhost", "allowed in this conversation by its owner");
    assert!(d.egress_log().iter().any(|e| e.chat_id == "theirs" && e.reason.contains("by its owner")));
}

#[tokio::test]
async fn a_conversation_whose_owner_may_reach_less_is_narrowed_and_told_why() {
    let port = fake_index().await;
    let policy = EgressPolicy {
        hosts: vec!["localhost".into(), "other.invalid".into()],
        trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()],
    };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let get = format!("curl -sS -p -x http://127.0.0.1:3128 http://localhost:{port}/simple/ || true");
    // Their groups give them no network: refused with the reason, their own hosts too.
    let why = "your group (everyone) may not use the network";
    let none = ChatNetwork { hosts: vec!["localhost".into()], within: Some((vec![], why.into())) };
    d.set_chat_network("narrow", none);
    let record = reached(&d, "narrow", &get).await.expect("a record");
    assert!(!record[0].allowed && record[0].reason == why, "{record:?}");
    // Narrowed to part of the site's list: that part is reached, the rest is not.
    let part = ChatNetwork { hosts: vec![], within: Some((vec!["localhost".into()], why.into())) };
    d.set_chat_network("narrow", part);
    let (out, _, _) = bash(&d, "narrow", &get, 20).await;
    assert!(out.contains("tinypkg-1.0.tar.gz"), "{out}");
    let other = "curl -sS -p -x http://127.0.0.1:3128 http://other.invalid:443/ || true";
    let record = reached(&d, "narrow", other).await.expect("a record");
    assert!(!record[0].allowed && record[0].reason.contains("not on the sandbox's list"), "{record:?}");
    // Another conversation keeps the site's whole list.
    let (out, _, _) = bash(&d, "wide", &get, 20).await;
    assert!(out.contains("tinypkg-1.0.tar.gz"), "{out}");
}

#[tokio::test]
async fn names_that_resolve_to_private_addresses_are_refused() {
    let port = fake_index().await;
    let policy = EgressPolicy { hosts: vec!["localhost".into()], trusted: vec![] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let (out, err, _) =
        bash(&d, "private", &format!("curl -sS -p -x http://127.0.0.1:3128 http://localhost:{port}/"), 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "{out} {err}");
    assert!(d.egress_log().iter().any(|e| e.reason.contains("not public")), "{:?}", d.egress_log());
}

#[tokio::test]
async fn with_the_network_off_the_proxy_refuses_everything() {
    let port = fake_index().await;
    let (d, _dir) = driver(None);
    let (out, err, _) =
        bash(&d, "offline", &format!("curl -sS -p -x http://127.0.0.1:3128 http://localhost:{port}/"), 20).await;
    assert!(!out.contains("tinypkg") && err.contains("403"), "{out} {err}");
}

/// `pip install` of a small package in `registries` mode (the read-only proxy), through
/// the registries this host's pip reports. This network's egress gateway answers on a documentation-range
/// address, so the test trusts exactly the addresses the registries resolve to here.
#[tokio::test]
async fn pip_installs_a_small_package_through_the_registries() {
    let registries = Registries::discover();
    assert!(!registries.hosts.is_empty(), "the host's pip reports an index");
    let mut trusted = Vec::new();
    for host in &registries.hosts {
        for addr in tokio::net::lookup_host((host.as_str(), 443)).await.unwrap() {
            trusted.push(Cidr::parse(&format!("{}/{}", addr.ip(), if addr.is_ipv4() { 32 } else { 128 })).unwrap());
        }
    }
    let policy = EgressPolicy { hosts: registries.hosts.clone(), trusted };
    let mut env = proxy_env();
    env.extend(lens_sandbox::registries::sandbox_env(&registries));
    // As Lens runs registries mode: through the read-only proxy, checked against the host's bundle.
    let read_only = Some(lens_sandbox::read_only::UpstreamTrust::system(&[]).unwrap());
    let (d, _dir) = driver(Some(Network { policy, env, read_only }));
    let (out, err, ending) = bash(
        &d,
        "pip",
        "python3 -m pip install --quiet --no-cache-dir six==1.16.0 && python3 -c 'import six; print(six.__version__)'",
        120,
    )
    .await;
    assert_eq!((out.trim(), ending), ("1.16.0", RunEnding::Exited { code: 0 }), "{err}");
    assert!(d.egress_log().iter().all(|e| e.allowed), "{:?}", d.egress_log());
}

/// The rule for the persistent kernel: the network is open only while a run is. A thread
/// an earlier cell left running is refused once that cell has ended.
#[tokio::test]
async fn a_thread_left_by_a_cell_has_no_network_after_the_cell_ended() {
    let port = fake_index().await;
    let policy = EgressPolicy { hosts: vec!["localhost".into()], trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let cell = format!(
        "import socket, threading, time\n\
         def probe():\n    \
             while True:\n        \
                 try:\n            \
                     s = socket.create_connection(('127.0.0.1', 3128), timeout=3)\n            \
                     s.sendall(b'CONNECT localhost:{port} HTTP/1.1\\r\\nHost: localhost:{port}\\r\\n\\r\\n')\n            \
                     line = s.recv(100).split(b'\\r\\n')[0].decode()\n            \
                     s.close()\n        \
                 except OSError as e:\n            \
                     line = type(e).__name__\n        \
                 with open('/workspace/attempts.txt', 'a') as f:\n            \
                     f.write(line + '\\n')\n        \
                 time.sleep(0.2)\n\
         threading.Thread(target=probe, daemon=True).start()\n\
         time.sleep(1.5)\n\
         print('probing')"
    );
    let run = run_to_end(d.run_python("leftover", &cell, Duration::from_secs(20)).await.unwrap()).await.unwrap();
    assert_eq!(run.stdout_text(), "probing\n", "{}", run.stderr_text());
    let during = String::from_utf8(d.get_file("leftover", "attempts.txt", 1 << 20).await.unwrap()).unwrap();
    assert!(during.lines().any(|l| l.contains(" 200")), "allowed while the cell ran: {during}");
    // Between runs (reading and writing files is no run), the thread keeps trying.
    d.put_file("leftover", "attempts.txt", Vec::new()).await.unwrap();
    let after = eventually("three attempts after the cell", Duration::from_secs(30), || async {
        let after = String::from_utf8(d.get_file("leftover", "attempts.txt", 1 << 20).await.unwrap()).unwrap();
        (after.lines().count() >= 3).then_some(after)
    })
    .await;
    assert!(after.lines().all(|l| !l.contains(" 200")), "refused once the cell ended: {after}");
    assert!(d.egress_log().iter().any(|e| !e.allowed && e.reason.contains("no run is in progress")));
}

/// A host that accepts and then says nothing, holding each connection open.
async fn silent_host() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    port
}

#[tokio::test]
async fn a_connection_open_when_the_last_run_ends_is_closed() {
    let port = silent_host().await;
    let policy = EgressPolicy { hosts: vec!["localhost".into()], trusted: vec![Cidr::parse("127.0.0.0/8").unwrap()] };
    let (d, _dir) = driver(Some(Network { policy, env: proxy_env(), read_only: None }));
    let cell = format!(
        "import socket, threading\n\
         s = socket.create_connection(('127.0.0.1', 3128), timeout=30)\n\
         s.sendall(b'CONNECT localhost:{port} HTTP/1.1\\r\\nHost: localhost:{port}\\r\\n\\r\\n')\n\
         print(s.recv(100).split(b'\\r\\n')[0].decode())\n\
         def wait():\n    \
             try:\n        \
                 got = s.recv(100)\n        \
                 line = 'closed' if got == b'' else 'data'\n    \
             except OSError as e:\n        \
                 line = type(e).__name__\n    \
             open('/workspace/held.txt', 'w').write(line)\n\
         threading.Thread(target=wait, daemon=True).start()"
    );
    let run = run_to_end(d.run_python("held", &cell, Duration::from_secs(20)).await.unwrap()).await.unwrap();
    assert!(run.stdout_text().contains(" 200"), "open while the cell ran: {} {}", run.stdout_text(), run.stderr_text());
    let mut held = String::new();
    for _ in 0..100 {
        if let Ok(bytes) = d.get_file("held", "held.txt", 100).await {
            held = String::from_utf8(bytes).unwrap();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(held, "closed", "the connection the cell left open was closed when it ended");
}
