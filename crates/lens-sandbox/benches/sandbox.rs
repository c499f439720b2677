//! Prints the sandbox's figures, each next to a baseline measured in the same run:
//!
//! - first run in a new conversation (sandbox start + `print(1)` in the kernel) against
//!   a bare `python3 -c 'print(1)'`;
//! - a warm `run_python` (`print(1)`) against the same statement sent to an already
//!   running Python over a pipe: the difference is the driver's overhead;
//! - a warm `run_bash` (`true`) against starting `true` directly;
//! - a second `import numpy, matplotlib` (the kernel keeps them) against a fresh process;
//! - 100 conversations × 5 runs at once: failures, p50/p99 of a run, against 500 bare
//!   `python3 -c 'print(1)'` started with the same concurrency; memory per running and
//!   per stopped sandbox.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-sandbox`
//! (`make bench` does both).

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use lens_sandbox::{ExecRequest, LocalDriver, LocalOptions, RunEnding, SandboxDriver, run_to_end};

const ROUNDS: usize = 30;

/// The interpreter the sandbox runs, so the baselines use the same one (a `python3` on
/// the host's PATH may be a slower wrapper script).
const PYTHON: &str = "/usr/bin/python3";

fn agent() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
    assert!(agent.is_file(), "build it first: cargo build --release -p lens-sandbox-agent");
    agent
}

fn p50(v: Vec<f64>) -> f64 {
    pct(v, 50)
}

fn pct(mut v: Vec<f64>, p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() * p / 100).min(v.len() - 1)]
}

const CONVERSATIONS: usize = 100;
const RUNS_EACH: usize = 5;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn finish(run: lens_sandbox::RunStream) -> (Vec<u8>, RunEnding) {
    let run = run_to_end(run).await.expect("the run starts");
    (run.stdout, run.ending)
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let driver = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap();
    let t = Duration::from_secs(30);

    // First run in a new conversation vs a bare interpreter.
    let (mut first, mut bare) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let chat = format!("first{i}");
        let start = Instant::now();
        let (out, ending) = finish(driver.run_python(&chat, "print(1)", t).await.unwrap()).await;
        first.push(ms(start.elapsed()));
        assert_eq!((out.as_slice(), ending), (&b"1\n"[..], RunEnding::Exited { code: 0 }));
        driver.delete(&chat).await.unwrap();
        let start = Instant::now();
        let status = Command::new(PYTHON).args(["-c", "print(1)"]).stdout(Stdio::null()).status().unwrap();
        bare.push(ms(start.elapsed()));
        assert!(status.success());
    }

    // Warm runs.
    // The kernel starts with the first cell; measure the ones after it.
    finish(driver.run_python("warm", "x = 1", t).await.unwrap()).await;
    let (mut warm_py, mut warm_sh) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        finish(driver.run_python("warm", "print(1)", t).await.unwrap()).await;
        warm_py.push(ms(start.elapsed()));
        let start = Instant::now();
        let req = ExecRequest { argv: vec!["true".into()], env: Default::default(), timeout: t };
        finish(driver.exec("warm", req).await.unwrap()).await;
        warm_sh.push(ms(start.elapsed()));
    }

    // Baselines: a running Python fed over a pipe; `true` started directly.
    let mut py = Command::new(PYTHON)
        .args(["-u", "-c", "import sys\nfor line in sys.stdin:\n    exec(line)\n"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = py.stdin.take().unwrap();
    let mut stdout = BufReader::new(py.stdout.take().unwrap());
    let (mut pipe_py, mut bare_sh) = (Vec::new(), Vec::new());
    let mut line = String::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        stdin.write_all(b"print(1)\n").unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        pipe_py.push(ms(start.elapsed()));
        let start = Instant::now();
        Command::new("true").status().unwrap();
        bare_sh.push(ms(start.elapsed()));
    }
    let _ = py.kill();
    let _ = py.wait();

    let (first, bare, warm_py, pipe_py, warm_sh, bare_sh) =
        (p50(first), p50(bare), p50(warm_py), p50(pipe_py), p50(warm_sh), p50(bare_sh));
    println!("lens sandbox figures (p50 of {ROUNDS}; 2-core machine)");
    println!(
        "  first run in a new conversation  {first:>8.2} ms   bare python3 -c 'print(1)' {bare:>7.2} ms  ({:.2}x)",
        first / bare
    );
    println!("  target: first run <= 80 ms: {}", if first <= 80.0 { "met" } else { "NOT met" });
    println!(
        "  warm run_python print(1)         {warm_py:>8.2} ms   running python over a pipe {pipe_py:>7.2} ms  (overhead {:.2} ms)",
        warm_py - pipe_py
    );
    println!("  target: driver overhead <= 5 ms: {}", if warm_py - pipe_py <= 5.0 { "met" } else { "NOT met" });
    println!(
        "  warm run_bash true               {warm_sh:>8.2} ms   true started directly      {bare_sh:>7.2} ms  ({:.2}x)",
        warm_sh / bare_sh
    );

    // The kernel keeps its imports: a second import costs nothing like a fresh process.
    let imports = "import numpy, matplotlib";
    finish(driver.run_python("warm", imports, t).await.unwrap()).await;
    let (mut kept, mut fresh) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let start = Instant::now();
        finish(driver.run_python("warm", imports, t).await.unwrap()).await;
        kept.push(ms(start.elapsed()));
        let start = Instant::now();
        Command::new(PYTHON).args(["-c", imports]).status().unwrap();
        fresh.push(ms(start.elapsed()));
    }
    let (kept, fresh) = (p50(kept), p50(fresh));
    println!(
        "  second `{imports}`  {kept:>8.2} ms   in a fresh python3          {fresh:>7.2} ms  ({:.0}x faster)",
        fresh / kept
    );
    driver.delete("warm").await.unwrap();

    many_at_once(driver).await;
}

/// 100 conversations × 5 runs at once, against the same number of bare interpreters
/// started with the same concurrency.
async fn many_at_once(driver: LocalDriver) {
    let driver = Arc::new(driver);
    let t = Duration::from_secs(120);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CONVERSATIONS {
        let driver = driver.clone();
        tasks.push(tokio::spawn(async move {
            let chat = format!("many{c}");
            let mut times = Vec::new();
            let mut failures = 0;
            for _ in 0..RUNS_EACH {
                let start = Instant::now();
                let ok = match driver.run_python(&chat, "print(1)", t).await {
                    Ok(run) => matches!(run_to_end(run).await, Ok(r) if r.stdout == b"1\n"),
                    Err(_) => false,
                };
                times.push(ms(start.elapsed()));
                failures += usize::from(!ok);
            }
            (times, failures)
        }));
    }
    let (mut times, mut failures) = (Vec::new(), 0);
    for task in tasks {
        let (t, f) = task.await.unwrap();
        times.extend(t);
        failures += f;
    }
    let wall = ms(started.elapsed());
    let running: Vec<u64> = {
        let mut v = Vec::new();
        for c in 0..CONVERSATIONS {
            v.push(driver.memory_bytes(&format!("many{c}")).await);
        }
        v
    };
    let per_running = running.iter().sum::<u64>() as f64 / CONVERSATIONS as f64 / 1048576.0;

    // The baseline: the same number of bare interpreters, the same concurrency.
    let started = Instant::now();
    let mut bare_tasks = Vec::new();
    for _ in 0..CONVERSATIONS {
        bare_tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            for _ in 0..RUNS_EACH {
                let start = Instant::now();
                tokio::process::Command::new(PYTHON).args(["-c", "print(1)"]).output().await.unwrap();
                times.push(ms(start.elapsed()));
            }
            times
        }));
    }
    let mut bare = Vec::new();
    for task in bare_tasks {
        bare.extend(task.await.unwrap());
    }
    let bare_wall = ms(started.elapsed());

    for c in 0..CONVERSATIONS {
        driver.stop(&format!("many{c}")).await.unwrap();
    }
    let stopped_memory: u64 = {
        let mut sum = 0;
        for c in 0..CONVERSATIONS {
            sum += driver.memory_bytes(&format!("many{c}")).await;
        }
        sum
    };
    let mut disk = 0;
    for c in 0..CONVERSATIONS {
        disk += driver.status(&format!("many{c}")).await.unwrap().disk_bytes;
    }
    let n = CONVERSATIONS * RUNS_EACH;
    println!(
        "  {CONVERSATIONS} conversations x {RUNS_EACH} runs at once: {failures} failures of {n}; run p50 {:.1} ms, p99 {:.1} ms, all in {:.1} s",
        pct(times.clone(), 50),
        pct(times, 99),
        wall / 1000.0
    );
    println!(
        "    baseline, {n} bare python3 -c 'print(1)' at the same concurrency: p50 {:.1} ms, p99 {:.1} ms, all in {:.1} s",
        pct(bare.clone(), 50),
        pct(bare, 99),
        bare_wall / 1000.0
    );
    println!(
        "    memory per running sandbox (cgroup, agent + Python kernel): {per_running:.1} MiB; per stopped sandbox: \
         {} bytes and no process; disk per workspace image {:.1} MiB",
        stopped_memory / CONVERSATIONS as u64,
        disk as f64 / CONVERSATIONS as f64 / 1048576.0
    );
    for c in 0..CONVERSATIONS {
        driver.delete(&format!("many{c}")).await.unwrap();
    }
}
