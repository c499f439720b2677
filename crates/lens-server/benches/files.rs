//! Prints the file figures of the real `lens` binary, each next to a baseline measured
//! in the same run:
//!
//! - sharing a 25 MB file (copy out of the sandbox + encrypt + store, through the API)
//!   against copying the same size of file on the host;
//! - downloading it (decrypting as it streams) against the same server sending a plain
//!   25 MB file from disk (its static-file service);
//! - the server's memory growth during 20 parallel downloads, against 20 parallel plain
//!   ones;
//! - five 200 MB attachments handed to five conversations' sandboxes at once (in parts,
//!   from the vault): the server's memory growth, and the time against copying the same
//!   five files on the host at once.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench files`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::Instant;

use common::{p50, post};
use serde_json::{Value, json};

const SIZE: usize = 25_000_000;
const ROUNDS: usize = 5;
const PARALLEL: usize = 20;
/// The attachments handed over at once, and each one's size.
const HANDED: usize = 5;
const ATTACHMENT: usize = 200_000_000;

/// Downloads `url` whole; seconds.
async fn download(http: &reqwest::Client, url: &str) -> f64 {
    let start = Instant::now();
    let bytes = http.get(url).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(bytes.len(), SIZE, "{url} arrives whole");
    start.elapsed().as_secs_f64()
}

/// Peak memory growth while `n` downloads of `url` run at once, KiB.
async fn parallel_growth(http: &reqwest::Client, url: &str, pid: u32) -> u64 {
    let before = common::rss_kib(pid);
    let tasks: Vec<_> = (0..PARALLEL)
        .map(|_| {
            let (http, url) = (http.clone(), url.to_owned());
            tokio::spawn(async move {
                let mut resp = http.get(url).send().await.unwrap();
                let mut n = 0;
                while let Some(chunk) = resp.chunk().await.unwrap() {
                    n += chunk.len();
                }
                assert_eq!(n, SIZE);
            })
        })
        .collect();
    let (peak, _) = common::peak_rss_while(pid, tasks).await;
    peak.saturating_sub(before)
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let plain: Vec<u8> = (0..SIZE).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(dist.join("plain.bin"), &plain).unwrap();
    // One person asks in five conversations at once: the per-person limits are raised so
    // all five run together, and uploads may be 200 MB.
    let env = [
        ("LENS_UPLOAD_MAX_MB", "250"),
        ("LENS_ANSWERS_PER_PERSON", "8"),
        ("LENS_SANDBOX_MAX_RUNNING_PER_PERSON", "8"),
        ("LENS_SANDBOX_MAX_RUNNING", "8"),
    ];
    let server = common::start_lens(dir.path(), &dist, &env).await;
    let (pid, base) = (server.pid, server.base.clone());
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let (_, session) =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let (_, chat) = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let make = format!("```bash\nhead -c {SIZE} /dev/urandom > big.bin\n```");
    let (_, asked) = post(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, json!({"text": make})).await;
    let aid = asked["answer_id"].as_str().unwrap();
    let events = http.get(format!("{base}/api/v1/chats/{cid}/answers/{aid}/events")).send().await.unwrap();
    let _ = events.text().await;

    // Sharing: copy out, encrypt, store; against copying a file of the same size on the host.
    let (mut share, mut copy) = (Vec::new(), Vec::new());
    let mut file_id = String::new();
    for i in 0..ROUNDS {
        let start = Instant::now();
        let (status, file) =
            post(&http, format!("{base}/api/v1/chats/{cid}/files"), &csrf, json!({"path": "big.bin"})).await;
        share.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status, 201, "{file}");
        file_id = file["id"].as_str().unwrap().to_owned();
        let start = Instant::now();
        let target = dir.path().join(format!("copy{i}.bin"));
        std::fs::copy(dist.join("plain.bin"), &target).unwrap();
        std::fs::File::open(&target).unwrap().sync_all().unwrap();
        copy.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let (share, copy) = (p50(share), p50(copy));

    // Downloading: the vault's stream against the same server's plain static file.
    let shared_url = format!("{base}/api/v1/chats/{cid}/files/{file_id}");
    let plain_url = format!("{base}/plain.bin");
    download(&http, &shared_url).await;
    download(&http, &plain_url).await;
    let (mut enc, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        enc.push(SIZE as f64 / 1e6 / download(&http, &shared_url).await);
        raw.push(SIZE as f64 / 1e6 / download(&http, &plain_url).await);
    }
    let (enc, raw) = (p50(enc), p50(raw));

    let growth = parallel_growth(&http, &shared_url, pid).await;
    let plain_growth = parallel_growth(&http, &plain_url, pid).await;

    let (handed, host, handed_growth) = hand_over(&http, &base, &csrf, pid, dir.path()).await;

    println!("lens file figures (p50 of {ROUNDS}; 2-core machine; a 25 MB file)");
    println!(
        "  share (copy out + encrypt + store)   {share:>8.1} ms   copying 25 MB on the host {copy:>7.1} ms  ({:.2}x)",
        share / copy
    );
    println!("  target: share <= 3x the host copy: {}", if share / copy <= 3.0 { "met" } else { "NOT met" });
    println!(
        "  download, decrypting as it streams  {enc:>8.1} MB/s  the same server, plain file {raw:>6.1} MB/s  (ratio {:.2})",
        enc / raw
    );
    println!("  target: ratio >= 0.5: {}", if enc / raw >= 0.5 { "met" } else { "NOT met" });
    println!(
        "  memory growth, {PARALLEL} parallel downloads {:>6.1} MB    {PARALLEL} parallel plain downloads {:>6.1} MB",
        growth as f64 / 1024.0,
        plain_growth as f64 / 1024.0
    );
    println!("  target: growth <= 8 MB: {}", if growth <= 8 * 1024 { "met" } else { "NOT met" });
    println!(
        "  {HANDED} x {} MB attachments into {HANDED} sandboxes at once {handed:>6.2} s   copying them on the host at once {host:>5.2} s  ({:.2}x)",
        ATTACHMENT / 1_000_000,
        handed / host
    );
    println!(
        "  memory growth while they are handed over {:>6.1} MB  (target <= 16 MB: {})",
        handed_growth as f64 / 1024.0,
        if handed_growth <= 16 * 1024 { "met" } else { "NOT met" }
    );
}

/// Uploads five 200 MB files, then asks five new conversations at once to read one each
/// (so each is handed to its sandbox); the seconds that took and the server's peak memory
/// growth meanwhile (KiB), and the seconds copying five such files on the host at once takes.
async fn hand_over(http: &reqwest::Client, base: &str, csrf: &str, pid: u32, dir: &std::path::Path) -> (f64, f64, u64) {
    let source = dir.join("attachment.bin");
    let bytes: Vec<u8> = (0..ATTACHMENT).map(|i| (i.wrapping_mul(2_246_822_519) >> 11) as u8).collect();
    std::fs::write(&source, &bytes).unwrap();
    let mut asks = Vec::new();
    for i in 0..HANDED {
        let part = reqwest::multipart::Part::bytes(bytes.clone()).file_name(format!("big{i}.bin"));
        let form = reqwest::multipart::Form::new().part("file", part);
        let upload: Value = common::page_post(http, format!("{base}/api/v1/uploads"), csrf)
            .multipart(form)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = upload["id"].as_str().unwrap_or_else(|| panic!("uploaded: {upload}")).to_owned();
        let (_, chat) = post(http, format!("{base}/api/v1/chats"), csrf, json!({})).await;
        asks.push((chat["id"].as_str().unwrap().to_owned(), id, i));
    }
    drop(bytes);
    let before = common::rss_kib(pid);
    let start = Instant::now();
    let tasks: Vec<_> = asks
        .into_iter()
        .map(|(cid, id, i)| {
            let (http, base, csrf) = (http.clone(), base.to_owned(), csrf.to_owned());
            tokio::spawn(async move {
                let code = format!("```bash\nwc -c < attachments/big{i}.bin\n```");
                let ask = json!({"text": code, "attachments": [id]});
                let (status, asked) = post(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, ask).await;
                assert_eq!(status, 202, "{asked}");
                let message = common::saved_message(&http, &base, &cid, asked["answer_id"].as_str().unwrap()).await;
                let out = message["steps"][0]["output"]["stdout"].as_str().unwrap_or_default().trim().to_owned();
                assert_eq!(out, ATTACHMENT.to_string(), "the whole attachment reached the sandbox: {message}");
            })
        })
        .collect();
    let (peak, _) = common::peak_rss_while(pid, tasks).await;
    let handed = start.elapsed().as_secs_f64();
    // The same bytes copied on the host, five at once.
    let start = Instant::now();
    let copies: Vec<_> = (0..HANDED)
        .map(|i| {
            let (source, target) = (source.clone(), dir.join(format!("host-copy{i}.bin")));
            std::thread::spawn(move || {
                std::fs::copy(&source, &target).unwrap();
                std::fs::File::open(&target).unwrap().sync_all().unwrap();
            })
        })
        .collect();
    copies.into_iter().for_each(|c| c.join().unwrap());
    (handed, start.elapsed().as_secs_f64(), peak.saturating_sub(before))
}
