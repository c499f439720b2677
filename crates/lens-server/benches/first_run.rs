//! Prints the first run in a new conversation next to a warm run in the same
//! conversation, both through the real `lens` binary's API (the message posted, to the
//! step saved), with the pool of pre-started sandboxes (default 1) and without it:
//!
//! - target: the first run in a new conversation ≤ 2× a warm run. Each round pauses
//!   2 s before each run, as a person would, so the pool refills and both runs follow
//!   the same idle gap; the server may run 32 sandboxes (memory caps it at 18 here), so
//!   every round's conversation fits beside the pool.
//! - a crowd: ten new conversations asking at once, then their warm runs at once; the
//!   first burst teaches the pool, the second is measured (target: first-run p90 ≤ 2×
//!   warm p90); and the sandboxes kept ready at rest before the crowd and once it passed.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench first_run`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::{Duration, Instant};

use common::p50;
use serde_json::{Value, json};

const ROUNDS: usize = 15;

async fn post(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    let resp = common::page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    resp.json().await.unwrap_or(Value::Null)
}

/// Posts one Python run and follows it to its saved step; milliseconds.
async fn one_run(http: &reqwest::Client, base: &str, csrf: &str, cid: &str) -> f64 {
    let start = Instant::now();
    let text = "```python\nprint(1)\n```";
    let asked = post(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": text})).await;
    let aid = asked["answer_id"].as_str().expect("the message is taken").to_owned();
    let message = common::saved_message(http, base, cid, &aid).await;
    assert_eq!(message["steps"][0]["output"]["stdout"], "1\n", "the run ran: {message}");
    start.elapsed().as_secs_f64() * 1000.0
}

/// The real server on a fresh data directory, set up, with one person's session.
struct Bench {
    server: common::Server,
    http: reqwest::Client,
    csrf: String,
    dir: tempfile::TempDir,
}

impl Bench {
    /// Starts it with `env` added; one person asks everything here, so their share of
    /// the sandboxes is all of them.
    async fn start(env: &[(&str, &str)]) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let dist = dir.path().join("dist");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
        let mut env = env.to_vec();
        env.push(("LENS_SANDBOX_MAX_RUNNING_PER_PERSON", "32"));
        let server = common::start_lens(dir.path(), &dist, &env).await;
        let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
        let setup = json!({"username": "bench", "password": "bench-password"});
        let session = post(&http, format!("{}/api/v1/setup", server.base), "", setup).await;
        let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
        Bench { server, http, csrf, dir }
    }
}

/// (first runs, warm runs) p50 in ms, on a server keeping `pool` sandboxes ready.
async fn measure(pool: &str) -> (f64, f64) {
    // Room for every round's conversation: on a host whose limit is reached by idle
    // sandboxes, the pool has no room to refill and a first run starts a sandbox.
    let env = [("LENS_SANDBOX_POOL_SIZE", pool), ("LENS_SANDBOX_MAX_RUNNING", "32")];
    let bench = Bench::start(&env).await;
    let (http, base, csrf) = (&bench.http, bench.server.base.as_str(), bench.csrf.as_str());
    let (mut first, mut warm) = (Vec::new(), Vec::new());
    for round in 0..=ROUNDS {
        // A person does not start conversations back to back: the pool refills meanwhile
        // (a second after a sandbox was taken, then the start itself). The warm run
        // follows the same pause, so both pay the same for a machine that was idle.
        let pause = Duration::from_millis(2000);
        tokio::time::sleep(pause).await;
        let chat = post(http, format!("{base}/api/v1/chats"), csrf, json!({})).await;
        let cid = chat["id"].as_str().unwrap().to_owned();
        let f = one_run(http, base, csrf, &cid).await;
        tokio::time::sleep(pause).await;
        let w = one_run(http, base, csrf, &cid).await;
        // The first round warms the server itself (its first sandbox, its caches).
        if round > 0 {
            first.push(f);
            warm.push(w);
        }
    }
    (p50(first), p50(warm))
}

fn p90(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() * 9).div_ceil(10) - 1]
}

/// Ten conversations made, then their first runs at once; the times in ms and the ids.
async fn burst(http: &reqwest::Client, base: &str, csrf: &str, n: usize) -> (Vec<f64>, Vec<String>) {
    let mut chats = Vec::new();
    for _ in 0..n {
        let chat = post(http, format!("{base}/api/v1/chats"), csrf, json!({})).await;
        chats.push(chat["id"].as_str().unwrap().to_owned());
    }
    let times = at_once(http, base, csrf, &chats).await;
    (times, chats)
}

/// One run in each conversation, all at once; ms each.
async fn at_once(http: &reqwest::Client, base: &str, csrf: &str, chats: &[String]) -> Vec<f64> {
    let runs: Vec<_> = chats
        .iter()
        .map(|cid| {
            let (http, base, csrf, cid) = (http.clone(), base.to_owned(), csrf.to_owned(), cid.clone());
            tokio::spawn(async move { one_run(&http, &base, &csrf, &cid).await })
        })
        .collect();
    let mut times = Vec::new();
    for r in runs {
        times.push(r.await.unwrap());
    }
    times
}

/// Pre-started sandboxes no conversation has claimed (a claimed one's disk image takes
/// the conversation's name; its mount point keeps the pool's until it stops).
fn ready(data: &std::path::Path) -> usize {
    let unclaimed = |name: &str| name.starts_with("lens-pool-") && name.ends_with(".img");
    std::fs::read_dir(data.join("data/sandboxes"))
        .map(|d| d.flatten().filter(|e| unclaimed(&e.file_name().to_string_lossy())).count())
        .unwrap_or(0)
}

/// The crowd: (first p50, p90; warm p50, p90; first burst's p90; ready at rest before, after).
async fn crowd() -> ([f64; 5], usize, usize, u64, u64) {
    const CROWD: usize = 10;
    // Room for both crowds and the pool beside them (256 MiB each, so memory does not cap
    // them first).
    let env =
        [("LENS_SANDBOX_MAX_RUNNING", "32"), ("LENS_SANDBOX_MEMORY_MB", "256"), ("LENS_ANSWERS_PER_PERSON", "32")];
    let bench = Bench::start(&env).await;
    let (http, base, csrf) = (&bench.http, bench.server.base.as_str(), bench.csrf.as_str());
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (at_rest, rss_before) = (ready(bench.dir.path()), common::rss_kib(bench.server.pid));
    let (taught, _) = burst(http, base, csrf, CROWD).await;
    // The pool refills to what the crowd asked for (a second after each take, then the starts).
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (first, chats) = burst(http, base, csrf, CROWD).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let warm = at_once(http, base, csrf, &chats).await;
    // Once the crowd has passed (the window is two minutes), the pool is back to its size.
    tokio::time::sleep(Duration::from_secs(130)).await;
    let (after, rss_after) = (ready(bench.dir.path()), common::rss_kib(bench.server.pid));
    let figures = [p50(first.clone()), p90(first), p50(warm.clone()), p90(warm), p90(taught)];
    (figures, at_rest, after, rss_before, rss_after)
}

#[tokio::main]
async fn main() {
    let ([first_p50, first_p90, warm_p50, warm_p90, taught_p90], at_rest, after, rss_before, rss_after) = crowd().await;
    println!("lens: ten new conversations asking at once, then their warm runs at once (2-core machine)");
    println!(
        "  first runs p50 {first_p50:>6.1} ms p90 {first_p90:>6.1} ms   warm runs p50 {warm_p50:>6.1} ms p90 {warm_p90:>6.1} ms  ({:.2}x at p90; target <= 2x: {})",
        first_p90 / warm_p90,
        if first_p90 <= 2.0 * warm_p90 { "met" } else { "NOT met" }
    );
    println!("  the crowd before it (which taught the pool): first runs p90 {taught_p90:>6.1} ms");
    println!(
        "  ready at rest: {at_rest} before the crowds, {after} once they passed; server memory {:.1} MB then {:.1} MB",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );

    let (first, warm) = measure("1").await;
    let (cold, warm_cold) = measure("0").await;
    println!(
        "lens first runs through the API (POST of the message to the saved step; p50 of {ROUNDS}; 2-core machine)"
    );
    println!(
        "  first run in a new conversation {first:>7.1} ms   warm run, same conversation {warm:>6.1} ms  ({:.2}x)",
        first / warm
    );
    println!("  target: first <= 2x warm: {}", if first <= 2.0 * warm { "met" } else { "NOT met" });
    println!(
        "  without the pool (LENS_SANDBOX_POOL_SIZE=0): first {cold:>6.1} ms, warm {warm_cold:>6.1} ms ({:.2}x)",
        cold / warm_cold
    );
}
