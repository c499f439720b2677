//! Prints the figures of a workspace as people's code leaves it (issue 40), each next to
//! a baseline measured in the same run, on the real `lens` binary with the local sandbox:
//!
//! - a 1 GB workspace of 20,000 files beside a virtual environment (its links included)
//!   downloaded as one zip: time and the server's memory growth, against `zip -r
//!   --symlinks` of a tree of the same shape on the host (target: at most 2x its time,
//!   at most 16 MiB of growth), and against `zip -0` (stored, as Lens's zip is);
//! - a fork of that conversation, against `cp -a` of the host tree and `sync`.
//!
//! The server is started with `LENS_WORKSPACE_MAX_FILES=20500`: the default cap (10,000)
//! answers a workspace this large with a 400 before any work.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench workspace_trees`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap) and `zip`.

mod common;

use std::time::Instant;

use common::post;
use serde_json::{Value, json};

/// The tree: `FILES` files of `FILE_BYTES` random bytes in folders of 500, and a venv.
const FILES: usize = 20_000;
const FILE_BYTES: usize = 50_000;

/// Makes the tree in the current folder (Python, as a person's code would).
const MAKE: &str = "import os, subprocess
subprocess.run(['python3', '-m', 'venv', '--without-pip', 'env'], check=True)
for i in range(20000):
    d = f'data/part-{i // 500:03}'
    os.makedirs(d, exist_ok=True)
    with open(f'{d}/f-{i:05}.bin', 'wb') as f:
        f.write(os.urandom(50000))
print('made')
";

/// Runs `code` (a fenced block) in `cid` and returns the saved answer.
async fn run(http: &reqwest::Client, base: &str, csrf: &str, cid: &str, code: &str) -> Value {
    let (_, asked) = post(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": code})).await;
    let aid = asked["answer_id"].as_str().expect("asked").to_owned();
    common::saved_message(http, base, cid, &aid).await
}

/// Seconds a command takes (and that it succeeded).
fn timed(cmd: &mut std::process::Command) -> f64 {
    let start = Instant::now();
    let status = cmd.status().expect("the command starts");
    assert!(status.success(), "{cmd:?}");
    start.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let env = [
        ("LENS_WORKSPACE_MAX_FILES", "20500"),
        ("LENS_SHARE_MAX_MB", "100"),
        ("LENS_SANDBOX_DISK_MB", "2600"),
        ("LENS_CHATS_PER_PERSON", "100"),
    ];
    let server = common::start_lens(dir.path(), &dist, &env).await;
    let (pid, base) = (server.pid, server.base.clone());
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let (_, session) =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    // Making 1 GB of files takes longer than a run's default minute on two busy cores.
    let resp = http
        .put(format!("{base}/api/v1/admin/sandbox"))
        .header("x-csrf-token", &csrf)
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"timeout_secs": 600}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap_or_default());
    let (_, chat) = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let made = run(&http, &base, &csrf, &cid, &format!("```python\n{MAKE}```")).await;
    assert_eq!(made["steps"][0]["output"]["stdout"], "made\n", "{made}");
    let answer = made["id"].as_str().unwrap().to_owned();

    // The same shape on the host, made by the same code.
    let host = dir.path().join("host");
    let tree = host.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let status = std::process::Command::new("python3").arg("-c").arg(MAKE).current_dir(&tree).status().unwrap();
    assert!(status.success());

    // The zip, twice, watching the server's memory.
    let (mut zips, mut growths) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let before = common::rss_kib(pid);
        let start = Instant::now();
        let (http, url) = (http.clone(), format!("{base}/api/v1/chats/{cid}/sandbox/zip"));
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
        zips.push(start.elapsed().as_secs_f64());
        growths.push(peak.saturating_sub(before) as f64 / 1024.0);
        assert!(bytes[0] > (FILES * FILE_BYTES) as u64, "the zip holds every file: {}", bytes[0]);
    }
    let (mut deflated, mut stored) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let out = host.join("out.zip");
        let zip = |level: &str| {
            let mut cmd = std::process::Command::new("zip");
            cmd.args(["-r", "-q", "--symlinks", level]).arg(&out).arg(".").current_dir(&tree);
            cmd
        };
        deflated.push(timed(&mut zip("-6")));
        std::fs::remove_file(&out).unwrap();
        stored.push(timed(&mut zip("-0")));
        std::fs::remove_file(&out).unwrap();
    }

    // The fork, against cp -a and sync.
    let mut forks = Vec::new();
    for _ in 0..2 {
        let start = Instant::now();
        let (status, forked) =
            post(&http, format!("{base}/api/v1/chats/{cid}/fork"), &csrf, json!({"message_id": answer})).await;
        forks.push(start.elapsed().as_secs_f64());
        assert_eq!(status, 201, "{forked}");
        assert!(forked["files_copied"].as_u64().unwrap() > FILES as u64, "{forked}");
        let id = forked["chat"]["id"].as_str().unwrap();
        let _ = http
            .delete(format!("{base}/api/v1/chats/{id}"))
            .header("x-csrf-token", &csrf)
            .header("sec-fetch-site", "same-origin")
            .send()
            .await;
    }
    let mut copies = Vec::new();
    for round in 0..2 {
        let to = host.join(format!("copy-{round}"));
        copies.push(timed(std::process::Command::new("sh").arg("-c").arg(format!(
            "cp -a '{}' '{}' && sync",
            tree.display(),
            to.display()
        ))));
        std::fs::remove_dir_all(&to).unwrap();
    }

    let best = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    let (zip, deflated, stored, fork, copy) = (best(zips), best(deflated), best(stored), best(forks), best(copies));
    let growth = growths.into_iter().fold(0.0, f64::max);
    println!("lens workspace figures: 1 GB in {FILES} files and a venv (local sandbox; best of 2)");
    println!(
        "  as one zip {zip:>6.1} s, memory growth {growth:>5.1} MiB (target <= 16 MiB: {}); zip -r --symlinks of the \
         same shape on the host {deflated:>6.1} s ({:.2}x its time; target <= 2x: {}), zip -0 {stored:>6.1} s ({:.2}x)",
        if growth <= 16.0 { "met" } else { "NOT met" },
        zip / deflated,
        if zip <= 2.0 * deflated { "met" } else { "NOT met" },
        zip / stored,
    );
    println!("  a fork {fork:>6.1} s; cp -a of the same shape and sync {copy:>6.1} s ({:.1}x)", fork / copy);
}
