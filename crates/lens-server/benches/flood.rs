//! Prints the real `lens` binary's memory while runs print far more than anyone reads,
//! next to the same server idle in the same run:
//!
//! - one run printing 1 GB, then ten such runs at once in ten conversations: the
//!   server's peak RSS growth over its idle RSS (targets: ≤ 32 MB and ≤ 64 MB).
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench flood`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const FLOOD: u64 = 1_000_000_000;
const AT_ONCE: usize = 10;

async fn post(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    let resp = common::page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    resp.json().await.unwrap_or(Value::Null)
}

/// Runs one flood in a new conversation and follows its answer to the end; the step's
/// stdout byte count.
async fn flood(http: reqwest::Client, base: String, csrf: String) -> u64 {
    let chat = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let text = format!("```bash\nyes | head -c {FLOOD}\n```");
    let asked = post(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, json!({"text": text})).await;
    let aid = asked["answer_id"].as_str().unwrap().to_owned();
    let message = common::saved_message(&http, &base, &cid, &aid).await;
    message["steps"][0]["output"]["stdout_bytes"].as_u64().unwrap_or(0)
}

/// Peak RSS growth over `idle` while `runs` floods go at once; MiB, and seconds taken.
async fn peak_growth(http: &reqwest::Client, base: &str, csrf: &str, pid: u32, idle: u64, runs: usize) -> (f64, f64) {
    let start = Instant::now();
    let tasks: Vec<_> =
        (0..runs).map(|_| tokio::spawn(flood(http.clone(), base.to_owned(), csrf.to_owned()))).collect();
    let (peak, counted) = common::peak_rss_while(pid, tasks).await;
    assert!(counted.iter().all(|&bytes| bytes == FLOOD), "every flood arrives whole and is counted: {counted:?}");
    (peak.saturating_sub(idle) as f64 / 1024.0, start.elapsed().as_secs_f64())
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    // One person floods in ten conversations at once: their share is raised to all of it.
    let env = [
        ("LENS_SANDBOX_TIMEOUT_SECS", "600"),
        ("LENS_ANSWERS_PER_PERSON", "16"),
        ("LENS_SANDBOX_MAX_RUNNING_PER_PERSON", "16"),
    ];
    let server = common::start_lens(dir.path(), &dist, &env).await;
    let (pid, base) = (server.pid, server.base.clone());
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let session =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle = common::rss_kib(pid);
    let (one, one_secs) = peak_growth(&http, &base, &csrf, pid, idle, 1).await;
    let idle_again = common::rss_kib(pid);
    let (ten, ten_secs) = peak_growth(&http, &base, &csrf, pid, idle_again, AT_ONCE).await;
    let after = common::rss_kib(pid);
    println!("lens memory under output floods (the real binary, Direct mode, real sandbox; 2-core machine)");
    println!("  idle server RSS                        {:>7.1} MB", idle as f64 / 1024.0);
    println!(
        "  one run printing 1 GB:     peak growth {one:>6.1} MB in {one_secs:>5.1} s  (target <= 32 MB: {})",
        if one <= 32.0 { "met" } else { "NOT met" }
    );
    println!(
        "  {AT_ONCE} such runs at once:      peak growth {ten:>6.1} MB in {ten_secs:>5.1} s  (target <= 64 MB: {})",
        if ten <= 64.0 { "met" } else { "NOT met" }
    );
    println!("  RSS after, over idle                   {:>7.1} MB", after.saturating_sub(idle) as f64 / 1024.0);
}
