//! Registries mode through a real sandbox and a local TLS registry stand-in
//! (`common/registry_standin.py`, named `localhost` by the test's policy): a real `pip
//! install` and `npm install` download through Lens's read-only proxy; `npm publish` and
//! raw PUT/POST are refused with a sentence the program sees and never reach the
//! registry; a registry whose certificate the server does not trust is refused; and the
//! next run in the conversation still works.

use std::time::Duration;

use lens_sandbox::{LocalDriver, LocalOptions, Network, RunEnding, SandboxDriver, read_only::UpstreamTrust};

mod common;

use common::registry::Standin;

fn driver(network: Network) -> (LocalDriver, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &common::agent())).unwrap();
    d.set_network(Some(network));
    (d, dir)
}

async fn bash(d: &dyn SandboxDriver, script: &str) -> (String, String, RunEnding) {
    common::bash(d, "reg", script, Duration::from_secs(180)).await
}

#[tokio::test]
async fn pip_and_npm_download_and_every_upload_is_refused() {
    let registry = Standin::start(0).await;
    let trust = UpstreamTrust::from_pems(&[&registry.ca]).unwrap();
    let (d, _dir) = driver(registry.network(trust));

    let (out, err, ending) = bash(
        &d,
        "python3 -m pip install --quiet --no-cache-dir demo-pkg && python3 -c 'import demo_pkg; print(demo_pkg.VERSION)'",
    )
    .await;
    assert_eq!((out.trim(), ending), ("1.0", RunEnding::Exited { code: 0 }), "pip: {err}");

    let (out, err, ending) = bash(
        &d,
        "mkdir -p /workspace/app && cd /workspace/app && npm install --no-audit --no-fund demo-npm@1.0.0 >/dev/null \
         && node -e \"console.log(require('demo-npm'))\"",
    )
    .await;
    assert_eq!((out.trim(), ending), ("demo-npm 1.0.0", RunEnding::Exited { code: 0 }), "npm: {err}");

    // npm publish, with a token so npm sends it: refused by the proxy, not the registry.
    let npm = format!("localhost:{}/npm/", registry.port);
    let publish = format!(
        "mkdir -p /workspace/mine && cd /workspace/mine && echo '{{\"name\":\"mine\",\"version\":\"1.0.0\"}}' > package.json \
         && echo '//{npm}:_authToken=not-a-real-token' > .npmrc && npm publish 2>&1"
    );
    let (out, err, ending) = bash(&d, &publish).await;
    assert_ne!(ending, RunEnding::Exited { code: 0 }, "npm publish failed: {out} {err}");
    assert!(out.contains("403"), "npm says it was forbidden: {out}");

    // Raw uploads: the program sees Lens's sentence.
    let base = format!("https://localhost:{}", registry.port);
    for method in ["PUT", "POST"] {
        let (out, err, _) = bash(&d, &format!("curl -sS -X {method} --data x {base}/simple/demo-pkg/")).await;
        assert!(out.contains("may only download from package registries") && out.contains(method), "{out} {err}");
    }
    let requests = registry.requests();
    assert!(requests.iter().any(|r| r.starts_with("GET /files/demo_pkg")), "{requests:?}");
    assert!(requests.iter().any(|r| r.starts_with("GET /npm/demo-npm/-/")), "{requests:?}");
    assert!(
        requests.iter().all(|r| r.starts_with("GET ") || r.starts_with("HEAD ")),
        "no upload arrived: {requests:?}"
    );
    let refusals: Vec<String> = d.egress_log().into_iter().filter(|e| !e.allowed).map(|e| e.reason).collect();
    for seen in ["PUT /npm/mine refused", "PUT /simple/demo-pkg/ refused", "POST /simple/demo-pkg/ refused"] {
        assert!(refusals.iter().any(|r| r.contains(seen)), "the egress log has `{seen}`: {refusals:?}");
    }

    // The next run in the conversation works.
    let (out, _, ending) = bash(&d, "python3 -c 'import demo_pkg; print(demo_pkg.VERSION)'").await;
    assert_eq!((out.trim(), ending), ("1.0", RunEnding::Exited { code: 0 }));
}

#[tokio::test]
async fn a_registry_whose_certificate_the_server_does_not_trust_is_refused() {
    let registry = Standin::start(0).await;
    let other = tempfile::tempdir().unwrap();
    lens_openshell::fake::write_certs(other.path(), &["localhost"]).unwrap();
    let wrong = UpstreamTrust::from_pems(&[&std::fs::read(other.path().join("ca.crt")).unwrap()]).unwrap();
    let (d, _dir) = driver(registry.network(wrong));
    let (out, err, ending) = bash(&d, &format!("curl -sS https://localhost:{}/simple/demo-pkg/", registry.port)).await;
    assert!(out.contains("certificate was not accepted"), "{out} {err} {ending:?}");
    assert!(registry.requests().is_empty(), "nothing reached it: {:?}", registry.requests());
    assert!(d.egress_log().iter().any(|e| !e.allowed && e.reason.contains("certificate")), "{:?}", d.egress_log());
}
