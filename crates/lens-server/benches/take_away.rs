//! Prints the figures of taking work away, each next to a baseline measured in the same
//! run, on the real `lens` binary with the local sandbox:
//!
//! - a 1 GB workspace downloaded as one zip: the server's memory growth while it streams
//!   (target <= 16 MB) and its speed, against the same server sending a plain 1 GB file
//!   (its static-file service);
//! - a fork of a conversation whose workspace holds 500 MB, against `cp -r` of a folder of
//!   the same files on the same disk.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench take_away`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::Instant;

use common::{p50, post};
use serde_json::{Value, json};

/// Files of this size make the workspace: five for the fork, ten for the zip.
const FILE_MB: usize = 100;
const ROUNDS: usize = 3;

/// Runs `code` (a fenced block) in `cid` and returns the saved answer.
async fn run(http: &reqwest::Client, base: &str, csrf: &str, cid: &str, code: &str) -> Value {
    let (_, asked) = post(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": code})).await;
    let aid = asked["answer_id"].as_str().expect("asked").to_owned();
    common::saved_message(http, base, cid, &aid).await
}

/// Downloads `url` while watching `pid`'s memory: (seconds, bytes, peak growth KiB).
async fn download(http: &reqwest::Client, url: String, pid: u32) -> (f64, u64, u64) {
    let before = common::rss_kib(pid);
    let start = Instant::now();
    let http = http.clone();
    let task = tokio::spawn(async move {
        let mut resp = http.get(url).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        let mut n = 0u64;
        while let Some(chunk) = resp.chunk().await.unwrap() {
            n += chunk.len() as u64;
        }
        n
    });
    let (peak, bytes) = common::peak_rss_while(pid, vec![task]).await;
    (start.elapsed().as_secs_f64(), bytes[0], peak.saturating_sub(before))
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let env = [("LENS_SHARE_MAX_MB", "250"), ("LENS_SANDBOX_DISK_MB", "2600"), ("LENS_CHATS_PER_PERSON", "100")];
    let server = common::start_lens(dir.path(), &dist, &env).await;
    let (pid, base) = (server.pid, server.base.clone());
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let (_, session) =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let (_, chat) = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let make = |from: usize| {
        format!(
            "```bash\nfor i in $(seq {from} {}); do head -c {FILE_MB}000000 /dev/urandom > part-$i.bin; done\n```",
            from + 4
        )
    };

    // The fork: 500 MB in the workspace; against cp -r of the same files on the host.
    let made = run(&http, &base, &csrf, &cid, &make(1)).await;
    assert_eq!(made["steps"][0]["status"], "succeeded", "{made}");
    let answer = made["id"].as_str().unwrap().to_owned();
    let mut forks = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let (status, forked) =
            post(&http, format!("{base}/api/v1/chats/{cid}/fork"), &csrf, json!({"message_id": answer})).await;
        forks.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status, 201, "{forked}");
        assert_eq!(forked["bytes_copied"].as_u64(), Some(5 * FILE_MB as u64 * 1_000_000));
        let id = forked["chat"]["id"].as_str().unwrap();
        let _ = http
            .delete(format!("{base}/api/v1/chats/{id}"))
            .header("x-csrf-token", &csrf)
            .header("sec-fetch-site", "same-origin")
            .send()
            .await;
    }
    let host = dir.path().join("host");
    std::fs::create_dir_all(host.join("from")).unwrap();
    for i in 1..=5 {
        let bytes: Vec<u8> =
            (0..FILE_MB * 1_000_000).map(|b| (b.wrapping_mul(2_654_435_761) >> 13) as u8 ^ i).collect();
        std::fs::write(host.join(format!("from/part-{i}.bin")), bytes).unwrap();
    }
    let mut copies = Vec::new();
    for round in 0..ROUNDS {
        let to = host.join(format!("to-{round}"));
        let start = Instant::now();
        let status = std::process::Command::new("cp").arg("-r").arg(host.join("from")).arg(&to).status().unwrap();
        // As a fork's copy is on disk when it answers.
        std::process::Command::new("sync").status().unwrap();
        copies.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(status.success());
        std::fs::remove_dir_all(&to).unwrap();
    }
    std::fs::remove_dir_all(&host).unwrap();

    // The zip: 1 GB in the workspace; against a plain 1 GB file from the same server.
    let more = run(&http, &base, &csrf, &cid, &make(6)).await;
    assert_eq!(more["steps"][0]["status"], "succeeded", "{more}");
    let whole = 10 * FILE_MB as u64 * 1_000_000;
    let (mut zips, mut growths) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let (secs, bytes, growth) = download(&http, format!("{base}/api/v1/chats/{cid}/sandbox/zip"), pid).await;
        assert!(bytes > whole, "the zip holds every file: {bytes}");
        zips.push(bytes as f64 / 1e6 / secs);
        growths.push(growth as f64 / 1024.0);
    }
    let plain: Vec<u8> = (0..whole as usize).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(dist.join("plain.bin"), &plain).unwrap();
    drop(plain);
    let (mut plains, mut plain_growths) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let (secs, bytes, growth) = download(&http, format!("{base}/plain.bin"), pid).await;
        assert_eq!(bytes, whole);
        plains.push(bytes as f64 / 1e6 / secs);
        plain_growths.push(growth as f64 / 1024.0);
    }

    let (fork, copy) = (p50(forks), p50(copies));
    let (zip, plain) = (p50(zips), p50(plains));
    let (growth, plain_growth) =
        (growths.into_iter().fold(0.0, f64::max), plain_growths.into_iter().fold(0.0, f64::max));
    println!("lens take-away figures (local sandbox; p50)");
    println!(
        "  a 1 GB workspace as one zip: {zip:>7.1} MB/s, memory growth {growth:>5.1} MiB (target <= 16 MiB: {}); a plain 1 GB file from the same server {plain:>7.1} MB/s, growth {plain_growth:>5.1} MiB ({:.2}x its speed)",
        if growth <= 16.0 { "met" } else { "NOT met" },
        zip / plain
    );
    println!(
        "  a fork with a 500 MB workspace {fork:>8.0} ms; cp -r of the same files and sync {copy:>8.0} ms ({:.1}x)",
        fork / copy
    );
}
