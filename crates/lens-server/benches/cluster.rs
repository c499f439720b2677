//! Prints Lens's figures on several machines' parts (scripts/cluster: PostgreSQL, Garage,
//! the fake OpenShell gateway, replicas behind nginx, all on loopback), each next to a
//! baseline measured in the same run:
//!
//! - 300 answers streaming at once through nginx to three replicas, against one replica
//!   behind the same nginx: event latency p50/p99 (the scripted model of
//!   `common::stamped` stamps each token with its send time) and the replicas' memory;
//! - a 200 MB shared file downloaded from Garage (a replica with `LENS_FILE_STORE=s3`)
//!   against the same file from a single server's local folder (target >= 0.7x), with the
//!   CPU time each process (client, replica, Garage) spent on it and the ceiling that
//!   puts on two cores;
//! - the first run in a new conversation through nginx and a replica, against a single
//!   server (SQLite, local folder) on the same gateway.
//!
//! The machine has two cores: three replicas, PostgreSQL, Garage and nginx share them, so
//! the replicas cannot be faster than one here; the figure says what a replica costs.
//! PostgreSQL runs without fsync (scripts/postgres), as in the tests.
//!
//! Run: `make bench` (it builds the server, the web app and the fake gateway first), or
//! `cargo build --release -p lens-openshell --features fake --bin lens-fake-gateway &&
//! cargo bench -p lens-server --bench cluster`.

mod common;

use std::{
    io::BufRead,
    os::unix::process::CommandExt,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use common::{
    p50,
    stamped::{TOKEN_GAP, TOKENS, epoch, latency_of, percentile, read_sse, start_model},
};
use futures_util::StreamExt;
use serde_json::{Value, json};

const ANSWERS: usize = 300;
const FILE: usize = 200_000_000;
const ROUNDS: usize = 3;

/// scripts/cluster running in its own process group; stopped (every piece, and its
/// files removed) when dropped.
struct Cluster {
    child: Child,
    url: String,
    replicas: Vec<(String, u32)>,
    gateway: String,
    certs: String,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.child.wait();
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Starts `replicas` replicas with their own PostgreSQL and Garage, `env` added to each.
fn start_cluster(replicas: usize, env: &[(&str, &str)]) -> Cluster {
    let mut child = Command::new("scripts/cluster")
        .current_dir(workspace())
        .env("REPLICAS", replicas.to_string())
        .env_remove("LENS_TEST_DATABASE_URL")
        .env_remove("LENS_TEST_S3_BUCKET")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("scripts/cluster starts");
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut url, mut members, mut gateway, mut certs) = (None, Vec::new(), String::new(), String::new());
    for line in lines {
        let line = line.expect("scripts/cluster speaks");
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["gateway:", address, "certs", dir] => (gateway, certs) = ((*address).to_owned(), (*dir).to_owned()),
            ["replica", _, base, "pid", pid, ..] => members.push(((*base).to_owned(), pid.parse().unwrap())),
            [front] if front.starts_with("CLUSTER_URL=") => {
                url = Some(front.trim_start_matches("CLUSTER_URL=").to_owned());
                break;
            }
            _ => {}
        }
    }
    let url = url.expect("scripts/cluster printed its address");
    Cluster { child, url, replicas: members, gateway, certs }
}

async fn post_json(http: &reqwest::Client, url: String, csrf: &str, body: Value) -> Value {
    let resp = common::page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    resp.json().await.unwrap_or(Value::Null)
}

/// A client set up as the first person on `base`.
async fn person(base: &str) -> (reqwest::Client, String) {
    let http = reqwest::Client::builder().cookie_store(true).pool_max_idle_per_host(ANSWERS * 2).build().unwrap();
    let session = post_json(
        &http,
        format!("{base}/api/v1/setup"),
        "",
        json!({"username": "bench", "password": "bench-password"}),
    )
    .await;
    let csrf = session["csrf_token"].as_str().unwrap_or_else(|| panic!("set up: {session}")).to_owned();
    (http, csrf)
}

/// What ANSWERS answers at once through `cluster`'s nginx showed.
struct Flood {
    latencies: Vec<u64>,
    complete: usize,
    idle_kib: u64,
    busy_kib: u64,
}

/// Sets the cluster's model (the settings are in the shared database).
async fn set_model(http: &reqwest::Client, base: &str, csrf: &str, model: Value) {
    let resp = http
        .put(format!("{base}/api/v1/settings/model"))
        .header("x-csrf-token", csrf)
        .header("sec-fetch-site", "same-origin")
        .json(&model)
        .send()
        .await
        .expect("the server answers");
    assert!(resp.status().is_success(), "the model is set: {}", resp.text().await.unwrap_or_default());
}

/// ANSWERS answers at once from the scripted `model`, then the model back to Direct.
async fn flood(cluster: &Cluster, model: &str) -> Flood {
    let base = cluster.url.clone();
    let (http, csrf) = person(&base).await;
    let scripted = json!({"provider": "openai_compatible", "base_url": model, "model": "scripted"});
    set_model(&http, &base, &csrf, scripted).await;
    let memory = || cluster.replicas.iter().map(|(_, pid)| common::rss_kib(*pid)).sum::<u64>();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle_kib = memory();
    let mut chats = Vec::new();
    for _ in 0..ANSWERS {
        let chat = post_json(&http, format!("{base}/api/v1/chats"), &csrf, json!({})).await;
        chats.push(chat["id"].as_str().expect("a conversation").to_owned());
    }
    let tasks: Vec<_> = chats
        .into_iter()
        .map(|cid| {
            let (http, base, csrf) = (http.clone(), base.clone(), csrf.clone());
            tokio::spawn(async move {
                let made =
                    post_json(&http, format!("{base}/api/v1/chats/{cid}/messages"), &csrf, json!({"text": "go"})).await;
                let aid = made["answer_id"].as_str().unwrap_or_else(|| panic!("asking failed: {made}")).to_owned();
                let (mut latencies, mut done, mut last) = (Vec::new(), false, None::<String>);
                // A stream ends now and then (a replica's limit); the page resumes it.
                while !done {
                    let mut get = http.get(format!("{base}/api/v1/chats/{cid}/answers/{aid}/events"));
                    if let Some(id) = &last {
                        get = get.header("last-event-id", id);
                    }
                    let Ok(resp) = get.send().await else { break };
                    let mut seen = 0;
                    read_sse(resp, |data| {
                        seen += 1;
                        let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                        if let Some(text) = v.pointer("/token/text").and_then(Value::as_str) {
                            latencies.extend(latency_of(text));
                        } else if let Some(d) = v.get("done") {
                            done = d["message"]["status"] == "complete";
                            return false;
                        }
                        true
                    })
                    .await;
                    // Replay starts after the last event seen: counted by position.
                    let before: usize = last.as_deref().and_then(|l| l.parse().ok()).unwrap_or(0);
                    last = Some((before + seen).to_string());
                    if seen == 0 {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
                (latencies, done)
            })
        })
        .collect();
    tokio::time::sleep(TOKEN_GAP * (TOKENS as u32) / 2).await;
    let busy_kib = memory();
    let (mut latencies, mut complete) = (Vec::new(), 0);
    for task in tasks {
        let (lat, done) = task.await.unwrap();
        latencies.extend(lat);
        complete += usize::from(done);
    }
    latencies.sort_unstable();
    set_model(&http, &base, &csrf, json!({"provider": "direct"})).await;
    Flood { latencies, complete, idle_kib, busy_kib }
}

/// Follows a run posted in a new conversation on `base` to its saved step; milliseconds.
async fn first_run(http: &reqwest::Client, base: &str, csrf: &str) -> f64 {
    let chat = post_json(http, format!("{base}/api/v1/chats"), csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let start = Instant::now();
    let text = "```python\nprint(1)\n```";
    let asked = post_json(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": text})).await;
    let aid = asked["answer_id"].as_str().expect("the message is taken").to_owned();
    let message = common::saved_message(http, base, &cid, &aid).await;
    assert_eq!(message["steps"][0]["output"]["stdout"], "1\n", "the run ran: {message}");
    start.elapsed().as_secs_f64() * 1000.0
}

/// What downloading a file took: the p50 speed, and per round the wall time and the CPU
/// time each watched process used (the bench itself, the client, first).
struct Download {
    mb_s: f64,
    wall: f64,
    cpu: Vec<(&'static str, f64)>,
}

impl Download {
    /// "client 0.41 s + replica 0.90 s = 1.31 s of CPU in 0.80 s (1.6 of 2 cores busy)"
    fn cpu_total(&self) -> f64 {
        self.cpu.iter().map(|(_, s)| s).sum()
    }

    fn cpu_line(&self) -> String {
        let parts: Vec<String> = self.cpu.iter().map(|(name, s)| format!("{name} {s:.2} s")).collect();
        let total = self.cpu_total();
        format!(
            "{} = {total:.2} s of CPU in {:.2} s ({:.1} of 2 cores busy)",
            parts.join(" + "),
            self.wall,
            total / self.wall
        )
    }
}

/// Makes a FILE-byte file in a new conversation on `base`, shares it, and downloads it
/// ROUNDS times, watching the CPU time of `watch` (with the bench itself, as the client).
async fn download(http: &reqwest::Client, base: &str, csrf: &str, watch: &[(&'static str, u32)]) -> Download {
    let chat = post_json(http, format!("{base}/api/v1/chats"), csrf, json!({})).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let make = format!("```bash\nhead -c {FILE} /dev/urandom > big.bin\n```");
    let asked = post_json(http, format!("{base}/api/v1/chats/{cid}/messages"), csrf, json!({"text": make})).await;
    let aid = asked["answer_id"].as_str().expect("the message is taken").to_owned();
    let made = common::saved_message(http, base, &cid, &aid).await;
    assert_eq!(made["steps"][0]["status"], "succeeded", "the file is made: {made}");
    let file = post_json(http, format!("{base}/api/v1/chats/{cid}/files"), csrf, json!({"path": "big.bin"})).await;
    let id = file["id"].as_str().unwrap_or_else(|| panic!("shared: {file}")).to_owned();
    let url = format!("{base}/api/v1/chats/{cid}/files/{id}");
    let watch: Vec<(&'static str, u32)> =
        [("client", std::process::id())].into_iter().chain(watch.iter().copied()).collect();
    let cpu_before: Vec<f64> = watch.iter().map(|(_, pid)| common::cpu_seconds(*pid)).collect();
    let all = Instant::now();
    let mut speeds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut resp = http.get(&url).send().await.unwrap();
        let mut n = 0;
        while let Some(chunk) = resp.chunk().await.unwrap() {
            n += chunk.len();
        }
        assert_eq!(n, FILE, "the file arrives whole");
        speeds.push(FILE as f64 / 1e6 / start.elapsed().as_secs_f64());
    }
    let rounds = ROUNDS as f64;
    let cpu = watch
        .iter()
        .zip(cpu_before)
        .map(|((name, pid), before)| (*name, (common::cpu_seconds(*pid) - before) / rounds))
        .collect();
    Download { mb_s: p50(speeds), wall: all.elapsed().as_secs_f64() / rounds, cpu }
}

/// The Garage server of the cluster whose process group is `group`.
fn garage_pid(group: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()).find(|pid| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some((name, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(')')) else { return false };
        // Fields after the name: state, ppid, pgrp.
        name == "garage" && rest.split_whitespace().nth(2) == Some(&group.to_string())
    })
}

/// The same bucket read directly (object_store, no Lens): a FILE-byte object put there
/// and read back ROUNDS times, with the credentials the replica `pid` was given; p50 MB/s.
async fn raw_garage(pid: u32) -> f64 {
    use object_store::{ObjectStore, aws::AmazonS3Builder, path::Path};
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the replica's environment");
    let vars: std::collections::HashMap<String, String> = environ
        .split(|b| *b == 0)
        .filter_map(|kv| String::from_utf8_lossy(kv).split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    let bucket = vars["LENS_FILE_STORE"].trim_start_matches("s3://").split('/').next().unwrap().to_owned();
    let store = AmazonS3Builder::new()
        .with_endpoint(&vars["AWS_ENDPOINT_URL"])
        .with_region(&vars["AWS_REGION"])
        .with_access_key_id(&vars["AWS_ACCESS_KEY_ID"])
        .with_secret_access_key(&vars["AWS_SECRET_ACCESS_KEY"])
        .with_bucket_name(bucket)
        .with_allow_http(true)
        .build()
        .expect("the bucket's client");
    let path = Path::from("bench/raw.bin");
    let bytes: Vec<u8> = (0..FILE).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    store.put(&path, bytes.into()).await.expect("the object is put");
    let mut speeds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut body = store.get(&path).await.expect("the object").into_stream();
        let mut n = 0;
        while let Some(piece) = body.next().await {
            n += piece.expect("the object's bytes").len();
        }
        assert_eq!(n, FILE);
        speeds.push(FILE as f64 / 1e6 / start.elapsed().as_secs_f64());
    }
    p50(speeds)
}

fn flood_line(name: &str, f: &Flood) -> (f64, f64) {
    let (l50, l99) = (percentile(&f.latencies, 0.5), percentile(&f.latencies, 0.99));
    println!(
        "  {name:<22} p50 {l50:>7.2} ms  p99 {l99:>7.2} ms  complete {}/{ANSWERS}  memory idle {:>6.1} MiB, streaming {:>6.1} MiB",
        f.complete,
        f.idle_kib as f64 / 1024.0,
        f.busy_kib as f64 / 1024.0
    );
    (l50, l99)
}

#[tokio::main]
async fn main() {
    epoch();
    let model = start_model().await;
    let env = [
        // One person asks everything: the per-person limits are not measured.
        ("LENS_ANSWERS_PER_PERSON", "100000"),
        ("LENS_STREAMS_PER_PERSON", "100000"),
        ("LENS_CHATS_PER_PERSON", "100000"),
        ("LENS_SHARE_MAX_MB", "250"),
    ];

    // `LENS_BENCH_FLOOD=0` leaves out the answers at once (the longest part).
    let floods = std::env::var("LENS_BENCH_FLOOD").map_or(true, |v| v != "0");
    let three = start_cluster(3, &env);
    let flood3 = if floods { Some(flood(&three, &model).await) } else { None };

    // The single machine: SQLite and its own folder, on the cluster's gateway.
    let dir = tempfile::tempdir().unwrap();
    let dist = workspace().join("dist");
    let mut single_env = env.to_vec();
    single_env.extend([
        ("LENS_SANDBOX_BACKEND", "gateway"),
        ("LENS_SANDBOX_GATEWAY", three.gateway.as_str()),
        ("LENS_SANDBOX_GATEWAY_CERTS", three.certs.as_str()),
    ]);
    let single = common::start_lens(dir.path(), &dist, &single_env).await;
    let (single_http, single_csrf) = person(&single.base).await;
    let (cluster_http, cluster_csrf) = if !floods {
        person(&three.url).await
    } else {
        let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
        let session = post_json(
            &http,
            format!("{}/api/v1/auth/login", three.url),
            "",
            json!({"username": "bench", "password": "bench-password"}),
        )
        .await;
        (http, session["csrf_token"].as_str().expect("logged in").to_owned())
    };
    let (mut through, mut alone) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        through.push(first_run(&cluster_http, &three.url, &cluster_csrf).await);
        tokio::time::sleep(Duration::from_secs(2)).await;
        alone.push(first_run(&single_http, &single.base, &single_csrf).await);
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let (through, alone) = (p50(through), p50(alone));
    // Garage is read by a replica directly (not through nginx), as the single server is.
    let replica = three.replicas[0].0.clone();
    let garage = garage_pid(three.child.id()).expect("the cluster's Garage");
    let garage_watch = [("replica", three.replicas[0].1), ("Garage", garage)];
    let from_garage = download(&cluster_http, &replica, &cluster_csrf, &garage_watch).await;
    let from_folder = download(&single_http, &single.base, &single_csrf, &[("server", single.pid)]).await;
    let raw = raw_garage(three.replicas[0].1).await;
    drop(single);
    drop(three);

    println!("lens cluster figures (scripts/cluster on loopback; 2-core machine)");
    if let Some(flood3) = flood3 {
        let one = start_cluster(1, &env);
        let flood1 = flood(&one, &model).await;
        drop(one);
        println!(
            "  {ANSWERS} answers x {TOKENS} tokens at once, through nginx, event latency and the replicas' memory (all summed):"
        );
        let (b50, b99) = flood_line("one replica (baseline)", &flood1);
        let (t50, t99) = flood_line("three replicas", &flood3);
        println!("  three/one              p50 {:>6.2}x    p99 {:>6.2}x", t50 / b50, t99 / b99);
    }
    let (garage_mb_s, folder_mb_s) = (from_garage.mb_s, from_folder.mb_s);
    println!(
        "  a 200 MB download: from Garage {garage_mb_s:>7.1} MB/s, from a local folder {folder_mb_s:>7.1} MB/s ({:.2}x; target >= 0.7x: {})",
        garage_mb_s / folder_mb_s,
        if garage_mb_s / folder_mb_s >= 0.7 { "met" } else { "NOT met" }
    );
    println!("    CPU per download from Garage: {}", from_garage.cpu_line());
    println!("    CPU per download from a folder: {}", from_folder.cpu_line());
    // However well the three overlap, two cores give at most two CPU-seconds a second.
    let best_wall = from_garage.cpu_total() / 2.0;
    println!(
        "    on 2 cores the Garage download can take no less than {best_wall:.2} s (its CPU over two cores): at most {:.2}x of the folder's {:.2} s",
        from_folder.wall / best_wall,
        from_folder.wall
    );
    println!(
        "    Garage read directly (no Lens, no decryption) {raw:>7.1} MB/s: Lens from Garage is {:.2}x of it",
        garage_mb_s / raw
    );
    println!(
        "  the first run in a new conversation (p50 of 5, the fake gateway): through nginx and a replica {through:>7.1} ms, a single server {alone:>7.1} ms ({:.2}x)",
        through / alone
    );
}
