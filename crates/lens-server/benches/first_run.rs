//! Prints the first run in a new conversation next to a warm run in the same
//! conversation, both through the real `lens` binary's API (the message posted, to the
//! step saved), with the pool of pre-started sandboxes (default 1) and without it:
//!
//! - target: the first run in a new conversation ≤ 2× a warm run. Each round pauses
//!   2 s before each run, as a person would, so the pool refills and both runs follow
//!   the same idle gap; the server may run 32 sandboxes (memory caps it at 18 here), so
//!   every round's conversation fits beside the pool.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench first_run`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ROUNDS: usize = 15;

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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

/// (first runs, warm runs) p50 in ms, on a server keeping `pool` sandboxes ready.
async fn measure(pool: &str) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    // Room for every round's conversation: on a host whose limit is reached by idle
    // sandboxes, the pool has no room to refill and a first run starts a sandbox.
    // One person starts every conversation here: their share is all of it.
    let env = [
        ("LENS_SANDBOX_POOL_SIZE", pool),
        ("LENS_SANDBOX_MAX_RUNNING", "32"),
        ("LENS_SANDBOX_MAX_RUNNING_PER_PERSON", "32"),
    ];
    let server = common::start_lens(dir.path(), &dist, &env).await;
    let base = server.base.clone();
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let session =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let (mut first, mut warm) = (Vec::new(), Vec::new());
    for round in 0..=ROUNDS {
        // A person does not start conversations back to back: the pool refills meanwhile
        // (a second after a sandbox was taken, then the start itself). The warm run
        // follows the same pause, so both pay the same for a machine that was idle.
        let pause = Duration::from_millis(2000);
        tokio::time::sleep(pause).await;
        let chat = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
        let cid = chat["id"].as_str().unwrap().to_owned();
        let f = one_run(&http, &base, &csrf, &cid).await;
        tokio::time::sleep(pause).await;
        let w = one_run(&http, &base, &csrf, &cid).await;
        // The first round warms the server itself (its first sandbox, its caches).
        if round > 0 {
            first.push(f);
            warm.push(w);
        }
    }
    (p50(first), p50(warm))
}

#[tokio::main]
async fn main() {
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
