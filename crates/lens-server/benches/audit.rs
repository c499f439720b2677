//! Prints what the audit trail costs a run, next to the same work without it:
//!
//! - a run through the real `lens` binary's API (the message posted, to the step saved),
//!   on a server with the trail on and one with it off (`LENS_AUDIT_DAYS=0`), the two
//!   taking turns run by run: p50 of each, and the difference (target: ≤ +1 ms p50);
//! - the store's part alone, where the entry is written: saving the answer that ends a
//!   run with its entry, against the same save without (SQLite file, WAL, as served);
//! - the trail's growth per 1,000 runs: its table and indexes' bytes (SQLite's `dbstat`).
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench audit`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::Instant;

use common::p50;
use lens_server::{
    audit::Audit,
    store::{AnswerProgress, NewAnswer, Store},
};
use lens_types::{MessageStatus, ToolStep};
use serde_json::{Value, json};

const RUNS: usize = 60;
const SAVES: usize = 2000;

async fn post(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    let resp = common::page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    resp.json().await.unwrap_or(Value::Null)
}

/// A server set up with one person and one conversation: (server, client, csrf, chat).
async fn server(dir: &std::path::Path, env: &[(&str, &str)]) -> (common::Server, reqwest::Client, String, String) {
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let server = common::start_lens(dir, &dist, env).await;
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let setup = json!({"username": "bench", "password": "bench-password"});
    let session = post(&http, format!("{}/api/v1/setup", server.base), "", setup).await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let chat = post(&http, format!("{}/api/v1/chats", server.base), &csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    (server, http, csrf, cid)
}

/// Posts one Python run and follows it to its saved step; milliseconds.
async fn one_run(http: &reqwest::Client, base: &str, csrf: &str, cid: &str, n: usize) -> f64 {
    let start = Instant::now();
    let text = format!("```python\nprint({n})\n```");
    let asked = post(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": text})).await;
    let aid = asked["answer_id"].as_str().expect("the message is taken").to_owned();
    let message = common::saved_message(http, base, cid, &aid).await;
    assert_eq!(message["steps"][0]["output"]["stdout"], format!("{n}\n"), "the run ran: {message}");
    start.elapsed().as_secs_f64() * 1000.0
}

/// Runs through the API on a server with the trail and one without, turn about:
/// (p50 on, p50 off, run entries the first server wrote).
async fn through_the_api() -> (f64, f64, usize) {
    let (on_dir, off_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let on = server(on_dir.path(), &[]).await;
    let off = server(off_dir.path(), &[("LENS_AUDIT_DAYS", "0")]).await;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    // The first round warms each server (its sandbox, its caches) and is not counted;
    // the two go first by turns, so neither always follows the other's run.
    for n in 0..=RUNS {
        let (a, b) = if n % 2 == 0 {
            let a = one_run(&on.1, &on.0.base, &on.2, &on.3, n).await;
            (a, one_run(&off.1, &off.0.base, &off.2, &off.3, n).await)
        } else {
            let b = one_run(&off.1, &off.0.base, &off.2, &off.3, n).await;
            (one_run(&on.1, &on.0.base, &on.2, &on.3, n).await, b)
        };
        if n > 0 {
            with.push(a);
            without.push(b);
        }
    }
    let page = on.1.get(format!("{}/api/v1/admin/audit?action=run&limit=500", on.0.base)).send().await.unwrap();
    let page: Value = page.json().await.unwrap();
    let runs = page["entries"].as_array().map(Vec::len).unwrap_or(0);
    (p50(with), p50(without), runs)
}

/// An answer's one finished run, as the runner saves it.
fn run_step(n: usize) -> ToolStep {
    serde_json::from_value(json!({
        "id": "s1", "tool": "run_python", "args": {"code": format!("print({n})")},
        "summary": "Run Python", "status": "succeeded",
        "output": {"language": "python", "code": format!("print({n})"), "stdout": format!("{n}\n"), "stderr": "",
                   "stdout_cut": false, "stderr_cut": false, "stdout_bytes": 2, "stderr_bytes": 0,
                   "ending": {"exited": {"code": 0}}, "duration_ms": 40}
    }))
    .expect("a step as the runner saves it")
}

/// The save that ends each of `SAVES` answers with one run, with its entry and without,
/// turn about on one database: (p50 µs with, p50 µs without, the trail's bytes per 1,000 runs).
async fn in_the_store() -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lens.db")).await.unwrap();
    let user = store.create_first_user("bench", "hash", &[]).await.unwrap().unwrap();
    store.create_chat(user.id, "c1", "Bench", None, 10).await.unwrap().unwrap();
    let audit = Audit::new(365);
    let bytes = || async {
        let pool = store.sqlite_pool().unwrap();
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(pool).await.unwrap();
        let sum: Option<i64> = sqlx::query_scalar(
            "SELECT SUM(pgsize) FROM dbstat WHERE name IN ('audit', 'audit_at', 'audit_action', 'audit_actor') \
             OR name LIKE 'sqlite_autoindex_audit%'",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        sum.unwrap_or(0) as f64
    };
    let before = bytes().await;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for n in 0..SAVES {
        let ids = NewAnswer { message_id: format!("q{n}"), answer_id: format!("a{n}"), replica: "r".into() };
        store.add_question("c1", user.id, &ids, "run it", &[], 10).await.unwrap();
        let steps = [run_step(n)];
        let progress = AnswerProgress { text: "", steps: &steps, turns: &[], model: None, usage: None };
        let notes = if n % 2 == 0 { audit.runs(user.id, "c1", &ids.answer_id, &steps) } else { Vec::new() };
        let start = Instant::now();
        store.save_answer(&ids.answer_id, progress, MessageStatus::Complete, None, None, &notes).await.unwrap();
        let us = start.elapsed().as_secs_f64() * 1e6;
        if n % 2 == 0 { with.push(us) } else { without.push(us) }
    }
    let grown = bytes().await - before;
    (p50(with), p50(without), grown / (SAVES / 2) as f64 * 1000.0)
}

#[tokio::main]
async fn main() {
    let (with, without, per_1000) = in_the_store().await;
    println!(
        "the save that ends a run (SQLite, {} of each): p50 {with:.0} µs with its audit entry, {without:.0} µs without \
         (+{:.0} µs)",
        SAVES / 2,
        with - without
    );
    println!("the audit trail grows {:.0} KiB per 1,000 runs (table and indexes, SQLite dbstat)", per_1000 / 1024.0);
    let (on, off, entries) = through_the_api().await;
    println!(
        "a run through the API ({RUNS} each, turn about): p50 {on:.1} ms with the audit trail on, {off:.1} ms off \
         ({:+.1} ms; target ≤ +1 ms); {entries} run entries written",
        on - off
    );
}
