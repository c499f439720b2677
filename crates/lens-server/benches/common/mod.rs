//! What the server's benchmarks share.

// Each benchmark is its own crate and uses only part of this.
#![allow(dead_code)]

pub mod stamped;

/// The median of `v`.
pub fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Resident memory of a process, KiB (`VmRSS`), or 0 if it cannot be read.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| l.to_owned()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// CPU time a process has used, user and system, in seconds; 0 if it cannot be read.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The name in brackets may hold spaces: count the fields after its closing bracket.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks: f64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<f64>().ok()).sum();
    // The kernel's USER_HZ, 100 on every Linux Lens runs on.
    ticks / 100.0
}

/// A JSON POST as Lens's page sends it: its status, and its body (`null` if not JSON).
pub async fn post(
    http: &reqwest::Client,
    url: String,
    csrf: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let resp = page_post(http, url, csrf).json(&body).send().await.expect("the server answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

/// A POST as Lens's page sends it when logged in: the CSRF proof, and the browser's word
/// (`Sec-Fetch-Site`) that Lens's own page sent it.
pub fn page_post(http: &reqwest::Client, url: String, csrf: &str) -> reqwest::RequestBuilder {
    http.post(url).header("x-csrf-token", csrf).header("sec-fetch-site", "same-origin")
}

/// The real `lens` binary serving on a free loopback port with the sandbox on; killed
/// with SIGTERM when dropped, so it stops its sandboxes and unmounts their workspaces.
pub struct Server {
    child: std::process::Child,
    pub pid: u32,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

/// Starts `lens serve --sandbox` with its data in `dir` and `dist` as its web app,
/// `env` added, and waits until it answers.
pub async fn start_lens(dir: &std::path::Path, dist: &std::path::Path, env: &[(&str, &str)]) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let lens = std::path::Path::new(env!("CARGO_BIN_EXE_lens"));
    let child = std::process::Command::new(lens)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--sandbox", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--web-dist")
        .arg(dist)
        .arg("--sandbox-agent")
        .arg(lens.with_file_name("lens-sandbox-agent"))
        .env("LENS_LOG", "warn")
        // Previews on a port of the kernel's choosing, not the one after Lens's.
        .env("LENS_PREVIEW_ADDR", "127.0.0.1:0")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the lens binary starts");
    let server = Server { pid: child.id(), child, base: format!("http://127.0.0.1:{port}") };
    for _ in 0..400 {
        if reqwest::get(format!("{}/healthz", server.base)).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    server
}

/// The peak resident memory of `pid` while `tasks` run (sampled every few ms), KiB;
/// the tasks' results in order once all are done.
pub async fn peak_rss_while<T>(pid: u32, tasks: Vec<tokio::task::JoinHandle<T>>) -> (u64, Vec<T>) {
    let mut peak = rss_kib(pid);
    while !tasks.iter().all(|t| t.is_finished()) {
        peak = peak.max(rss_kib(pid));
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("a measured task ends"));
    }
    (peak, results)
}

/// Follows an answer's event stream as a tab would (reconnecting if the server ends it)
/// until `done`, and returns the saved message it carries.
pub async fn saved_message(http: &reqwest::Client, base: &str, cid: &str, aid: &str) -> serde_json::Value {
    loop {
        let events = http.get(format!("{base}/api/v1/chats/{cid}/answers/{aid}/events")).send().await.unwrap();
        let body = events.text().await.unwrap_or_default();
        let done = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
            .find_map(|v| v.get("done").cloned());
        if let Some(done) = done {
            return done["message"].clone();
        }
    }
}
