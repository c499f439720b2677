//! Prints what the read-only registry proxy costs: a `pip download` of a 5 MB wheel from
//! a local TLS registry stand-in through it (the program's TLS ends in the server, which
//! opens its own to the registry) against the same download through the plain tunnel
//! (`hosts` mode), in the same run, alternating, p50 of each.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-sandbox --bench registries`
//! (`make bench` does both).

use std::time::{Duration, Instant};

use lens_sandbox::{LocalDriver, LocalOptions, Network, RunEnding, read_only::UpstreamTrust};

#[path = "../tests/common/mod.rs"]
mod common;

use common::registry::Standin;

const ROUNDS: usize = 7;
const WHEEL_BYTES: usize = 5_000_000;

fn driver(network: Network) -> (LocalDriver, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &common::agent())).unwrap();
    d.set_network(Some(network));
    (d, dir)
}

/// One `pip download` into a fresh folder (`env` before it); its wall time.
async fn download(d: &LocalDriver, round: usize, env: &str) -> Duration {
    let script = format!(
        "{env}python3 -m pip download --quiet --no-cache-dir --no-deps -d /tmp/dl-{round} demo-pkg \
         && rm -rf /tmp/dl-{round}"
    );
    let t = Instant::now();
    let (_, err, ending) = common::bash(d, "bench", &script, Duration::from_secs(120)).await;
    assert_eq!(ending, RunEnding::Exited { code: 0 }, "{env}: {err}");
    t.elapsed()
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let registry = Standin::start(WHEEL_BYTES).await;
    let read_only = UpstreamTrust::from_pems(&[&registry.ca]).unwrap();
    let (proxied, _a) = driver(registry.network(read_only));
    let mut tunnel_network = registry.network(UpstreamTrust::from_pems(&[&registry.ca]).unwrap());
    tunnel_network.read_only = None;
    let (tunnel, _b) = driver(tunnel_network);
    // Through the tunnel the program meets the registry's own certificate: it trusts its
    // authority from a file in its workspace.
    let ca = String::from_utf8(registry.ca.clone()).unwrap();
    let (_, err, _) = common::bash(
        &tunnel,
        "bench",
        &format!("cat > /workspace/registry.pem <<'EOF'\n{ca}EOF"),
        Duration::from_secs(60),
    )
    .await;
    assert!(err.is_empty(), "{err}");
    // pip's requests takes REQUESTS_CA_BUNDLE over `--cert` and PIP_CERT.
    let tunnel_cert = "REQUESTS_CA_BUNDLE=/workspace/registry.pem ";
    // Warm both: the sandboxes started and pip's modules in the page cache.
    download(&proxied, 0, "").await;
    download(&tunnel, 0, tunnel_cert).await;
    let (mut through, mut plain) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        through.push(download(&proxied, round, "").await.as_secs_f64() * 1000.0);
        plain.push(download(&tunnel, round, tunnel_cert).await.as_secs_f64() * 1000.0);
    }
    let (through, plain) = (p50(through), p50(plain));
    println!("registries: pip download of a {} MB wheel (p50 of {ROUNDS}; 2-core machine)", WHEEL_BYTES / 1_000_000);
    println!(
        "  read-only TLS proxy {through:7.1} ms; plain tunnel {plain:7.1} ms (baseline): {:.2}x (target <= 1.3x: {})",
        through / plain,
        if through / plain <= 1.3 { "met" } else { "NOT met" }
    );
}
