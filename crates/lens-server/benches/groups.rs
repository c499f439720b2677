//! Prints what groups cost a person's run, next to the same work without them:
//!
//! - a run through the real `lens` binary's API by a person who is not an admin (the
//!   message posted, to the step saved), on a server with three groups stored (the person
//!   in two of them) and one with none, the two taking turns run by run: p50 of each;
//! - the check alone: reading a person's groups and their widest rules from the store
//!   (SQLite file, WAL, as served), with three groups stored against none.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-server --bench groups`
//! (`make bench` does both). Needs the sandbox (root, bubblewrap).

mod common;

use std::time::Instant;

use common::p50;
use lens_server::store::Store;
use serde_json::{Value, json};

const RUNS: usize = 60;
const CHECKS: usize = 2000;

async fn post(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    common::post(http, url, csrf, body).await.1
}

/// Rules that let everything through, so both servers run the same code.
fn open_rules() -> Value {
    json!({"sandbox": true, "network": "hosts", "allow_hosts": true, "max_running": 0, "models": []})
}

/// A server with an admin and the person `pat`, with groups or without: (server, pat's
/// client, pat's csrf, pat's chat).
async fn server(dir: &std::path::Path, groups: bool) -> (common::Server, reqwest::Client, String, String) {
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>").unwrap();
    let server = common::start_lens(dir, &dist, &[]).await;
    let admin = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let setup = json!({"username": "bench", "password": "bench-password"});
    let session = post(&admin, format!("{}/api/v1/setup", server.base), "", setup).await;
    let csrf = session["csrf_token"].as_str().expect("set up").to_owned();
    let pat = json!({"username": "pat", "password": "pat-password-1"});
    post(&admin, format!("{}/api/v1/users", server.base), &csrf, pat.clone()).await;
    if groups {
        for (name, members) in [("everyone", json!([])), ("analysts", json!(["pat"])), ("staff", json!(["pat"]))] {
            let url = format!("{}/api/v1/admin/groups/{name}", server.base);
            let put = admin.put(url).header("x-csrf-token", &csrf).header("sec-fetch-site", "same-origin");
            let resp = put.json(&json!({"rules": open_rules(), "members": members})).send().await.unwrap();
            assert!(resp.status().is_success(), "the group is stored");
        }
    }
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let session = post(&http, format!("{}/api/v1/auth/login", server.base), "", pat).await;
    let csrf = session["csrf_token"].as_str().expect("pat signs in").to_owned();
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

/// Runs through the API with groups and without, turn about: (p50 with, p50 without).
async fn through_the_api() -> (f64, f64) {
    let (with_dir, without_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let with = server(with_dir.path(), true).await;
    let without = server(without_dir.path(), false).await;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // The first round warms each server and is not counted; the two go first by turns.
    for n in 0..=RUNS {
        let (x, y) = if n % 2 == 0 {
            let x = one_run(&with.1, &with.0.base, &with.2, &with.3, n).await;
            (x, one_run(&without.1, &without.0.base, &without.2, &without.3, n).await)
        } else {
            let y = one_run(&without.1, &without.0.base, &without.2, &without.3, n).await;
            (one_run(&with.1, &with.0.base, &with.2, &with.3, n).await, y)
        };
        if n > 0 {
            a.push(x);
            b.push(y);
        }
    }
    (p50(a), p50(b))
}

/// The check alone, `CHECKS` times each, turn about on two databases: (p50 µs with three
/// groups stored, p50 µs with none).
async fn the_check() -> (f64, f64) {
    let rules = open_rules().to_string();
    let mut stores = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for (i, groups) in [true, false].into_iter().enumerate() {
        let store = Store::open(&dir.path().join(format!("lens-{i}.db"))).await.unwrap();
        let user = store.create_first_user("pat", "hash", &[]).await.unwrap().unwrap();
        if groups {
            store.put_group("everyone", &rules, &[], &[]).await.unwrap();
            store.put_group("analysts", &rules, &[user.id], &[]).await.unwrap();
            store.put_group("staff", &rules, &[user.id], &[]).await.unwrap();
        }
        stores.push((store, user.id));
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for n in 0..CHECKS * 2 {
        let (store, user) = &stores[n % 2];
        let start = Instant::now();
        let (rules, _) = lens_server::groups::groups_rules(store, *user).await.unwrap();
        let _ = lens_server::groups::widest(&rules, 1);
        let us = start.elapsed().as_secs_f64() * 1e6;
        if n % 2 == 0 { with.push(us) } else { without.push(us) }
    }
    (p50(with), p50(without))
}

#[tokio::main]
async fn main() {
    let (with, without) = the_check().await;
    println!(
        "a person's groups and their widest rules read from the store (SQLite, {CHECKS} of each): p50 {with:.0} µs \
         with three groups stored, {without:.0} µs with none"
    );
    let (with, without) = through_the_api().await;
    println!(
        "a person's run through the API ({RUNS} each, turn about): p50 {with:.1} ms with three groups stored (the \
         person in two), {without:.1} ms with none ({:+.1} ms)",
        with - without
    );
}
