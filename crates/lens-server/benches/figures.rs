//! Prints the server's figures next to baselines measured in the same run:
//!
//! - resident memory of the real `lens` process, idle and with N answers streaming;
//! - event latency p50/p99 with N concurrent answers over real HTTP: a scripted
//!   OpenAI-compatible model stamps each token with the time it sent it, and the
//!   client measures when the token arrives through Lens's SSE. The baseline is the
//!   same clients reading the scripted model directly, so the ratio is Lens's cost.
//!
//! Run: `cargo bench -p lens-server --bench figures` (or `make bench`). N defaults to
//! 100; `LENS_BENCH_ANSWERS` changes it.

mod common;

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use common::stamped::{TOKEN_GAP, TOKENS, epoch, latency_of, percentile, read_sse, start_model};
use serde_json::{Value, json};

/// POSTs `body` as the logged-in bench user and reads the JSON answer.
async fn post_json(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    let resp = common::page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    resp.json().await.expect("the answer is JSON")
}

struct Server {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_lens(model_url: &str) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new(env!("CARGO_BIN_EXE_lens"))
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path())
        .env("LENS_MODEL_PROVIDER", "openai_compatible")
        .env("LENS_MODEL_BASE_URL", model_url)
        .env("LENS_MODEL_NAME", "scripted")
        .env("LENS_LOG", "warn")
        // One person writes every answer here: the per-person limits are not measured.
        .env("LENS_ANSWERS_PER_PERSON", "100000")
        .env("LENS_STREAMS_PER_PERSON", "100000")
        .env("LENS_CHATS_PER_PERSON", "100000")
        .stdout(Stdio::null())
        .spawn()
        .expect("the lens binary starts");
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if reqwest::get(format!("{base}/healthz")).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Server { child, base, _dir: dir }
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("LENS_BENCH_ANSWERS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    epoch();
    let model_url = start_model().await;
    let server = start_lens(&model_url).await;
    let pid = server.child.id();
    let http = reqwest::Client::builder().cookie_store(true).pool_max_idle_per_host(n * 2).build().unwrap();
    let base = server.base.clone();

    let session = post_json(
        &http,
        format!("{base}/api/v1/setup"),
        "",
        json!({"username": "bench", "password": "bench-password"}),
    )
    .await;
    let csrf = session["csrf_token"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = common::rss_kib(pid);

    // Baseline: the same number of clients reading the scripted model directly.
    let mut direct = Vec::new();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let http = http.clone();
            let url = format!("{model_url}/chat/completions");
            tokio::spawn(async move {
                let mut lat = Vec::new();
                let resp = http.post(url).json(&json!({})).send().await.unwrap();
                read_sse(resp, |data| {
                    if let Ok(v) = serde_json::from_str::<Value>(data)
                        && let Some(t) = v.pointer("/choices/0/delta/content").and_then(Value::as_str)
                        && let Some(l) = latency_of(t)
                    {
                        lat.push(l);
                    }
                    data != "[DONE]"
                })
                .await;
                lat
            })
        })
        .collect();
    for t in tasks {
        direct.extend(t.await.unwrap());
    }

    // Lens: N chats, one answer each, all streaming at once.
    let mut answers = Vec::new();
    for _ in 0..n {
        let chat = post_json(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
        let cid = chat["id"].as_str().unwrap().to_owned();
        answers.push(cid);
    }
    let started = Instant::now();
    let tasks: Vec<_> = answers
        .into_iter()
        .map(|cid| {
            let http = http.clone();
            let base = base.clone();
            let csrf = csrf.clone();
            tokio::spawn(async move {
                let made =
                    post_json(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, json!({"text": "go"})).await;
                let aid = made["answer_id"].as_str().unwrap_or_else(|| panic!("asking failed: {made}")).to_owned();
                let resp = http.get(format!("{base}/api/v1/chats/{cid}/answers/{aid}/events")).send().await.unwrap();
                let mut lat = Vec::new();
                let mut done = false;
                read_sse(resp, |data| {
                    let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                    if let Some(token) = v.get("token") {
                        if let Some(l) = token["text"].as_str().and_then(latency_of) {
                            lat.push(l);
                        }
                    } else if let Some(d) = v.get("done") {
                        done = d["message"]["status"] == "complete";
                        return false;
                    }
                    true
                })
                .await;
                (lat, done)
            })
        })
        .collect();
    // Midway through the answers, all N are streaming.
    tokio::time::sleep(TOKEN_GAP * (TOKENS as u32) / 2).await;
    let busy = common::rss_kib(pid);
    let mut lens = Vec::new();
    let mut complete = 0;
    for t in tasks {
        let (lat, done) = t.await.unwrap();
        lens.extend(lat);
        complete += usize::from(done);
    }
    let wall = started.elapsed();

    direct.sort_unstable();
    lens.sort_unstable();
    println!(
        "lens figures ({n} concurrent answers x {TOKENS} tokens, {} ms apart; 2-core machine)",
        TOKEN_GAP.as_millis()
    );
    println!("  answers completed            {complete}/{n} in {:.2} s", wall.as_secs_f64());
    println!("  resident memory, idle        {:>8.1} MiB", idle as f64 / 1024.0);
    println!(
        "  resident memory, {n} streaming {:>6.1} MiB  ({:.2}x idle)",
        busy as f64 / 1024.0,
        busy as f64 / idle.max(1) as f64
    );
    let (d50, d99, l50, l99) =
        (percentile(&direct, 0.5), percentile(&direct, 0.99), percentile(&lens, 0.5), percentile(&lens, 0.99));
    println!(
        "  event latency baseline (model read directly)  p50 {d50:>7.2} ms  p99 {d99:>7.2} ms  ({} tokens)",
        direct.len()
    );
    println!(
        "  event latency through Lens                    p50 {l50:>7.2} ms  p99 {l99:>7.2} ms  ({} tokens)",
        lens.len()
    );
    println!("  Lens/baseline                                 p50 {:>6.2}x    p99 {:>6.2}x", l50 / d50, l99 / d99);
    println!("  target: p99 through Lens <= 50 ms: {}", if l99 <= 50.0 { "met" } else { "NOT met" });
}
