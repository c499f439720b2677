//! Prints the preview figures of the real `lens` binary, each next to a baseline measured
//! in the same run:
//!
//! - the first rows of a 100 MB CSV opened in the page (`…/preview`; target <= 300 ms:
//!   it must not read the whole file), against downloading the same file whole from the
//!   same server; and counting all its rows (`…/rows`, which does read it all).
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench previews`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::Instant;

use common::{p50, post};
use serde_json::{Value, json};

const ROUNDS: usize = 5;
/// The CSV's size, about.
const MB: usize = 100;

/// Milliseconds `get` takes, p50 of ROUNDS, and its last result.
async fn timed<F, Fut, T>(mut get: F) -> (f64, T)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        last = Some(get().await);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    (p50(times), last.unwrap())
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let server = common::start_lens(dir.path(), &dist, &[("LENS_SHARE_MAX_MB", "250")]).await;
    let base = server.base.clone();
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let (_, session) =
        post(&http, format!("{base}/api/v1/setup"), "", json!({"username": "bench", "password": "bench-password"}))
            .await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let (_, chat) = post(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    // Rows of about 60 bytes, a quoted field in each, until the file is MB megabytes.
    let make = format!(
        "```python\nrow = 0\nwith open('big.csv', 'w') as f:\n    f.write('id,name,value,note\\n')\n    while f.tell() < {MB} * 1000 * 1000:\n        f.write(f'{{row}},item {{row}},{{row * 0.5}},\"a note, quoted\"\\n')\n        row += 1\nprint(row)\n```"
    );
    let (_, asked) = post(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, json!({"text": make})).await;
    let aid = asked["answer_id"].as_str().unwrap();
    let message = common::saved_message(&http, &base, &cid, aid).await;
    let rows: u64 = message["steps"][0]["output"]["stdout"].as_str().unwrap().trim().parse().expect("rows made");
    let (status, file) =
        post(&http, format!("{base}/api/v1/chats/{cid}/files"), &csrf, json!({"path": "big.csv"})).await;
    assert_eq!(status, 201, "{file}");
    let (fid, size) = (file["id"].as_str().unwrap().to_owned(), file["size"].as_u64().unwrap());
    let url = format!("{base}/api/v1/chats/{cid}/files/{fid}");

    let (first_rows, preview) =
        timed(|| async { http.get(format!("{url}/preview")).send().await.unwrap().json::<Value>().await.unwrap() })
            .await;
    assert_eq!(preview["rows"].as_array().map(Vec::len), Some(1_001), "the header and 1,000 rows");
    assert_eq!(preview["rows"][1][0], "0");
    let (whole, bytes) = timed(|| async { http.get(&url).send().await.unwrap().bytes().await.unwrap().len() }).await;
    assert_eq!(bytes as u64, size);
    let (counting, counted) =
        timed(|| async { http.get(format!("{url}/rows")).send().await.unwrap().json::<Value>().await.unwrap() }).await;
    assert_eq!(counted["rows"].as_u64(), Some(rows + 1), "every row and the header");

    println!("lens preview figures ({:.0} MB CSV, {rows} rows; p50 of {ROUNDS})", size as f64 / 1e6);
    println!(
        "  its first 1,000 rows in the page {first_rows:>8.1} ms (target <= 300 ms: {}); downloading it whole {whole:>8.1} ms (baseline; {:.3}x of it)",
        if first_rows <= 300.0 { "met" } else { "NOT met" },
        first_rows / whole
    );
    println!("  counting all its rows {counting:>8.1} ms ({:.2}x of the download)", counting / whole);
}
