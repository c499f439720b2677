//! Prints the sandbox's figures, each next to a baseline measured in the same run:
//!
//! - first run in a new conversation (sandbox start + `print(1)` in the kernel) against
//!   a bare `python3 -c 'print(1)'`;
//! - a warm `run_python` (`print(1)`) against the same statement sent to an already
//!   running Python over a pipe: the difference is the driver's overhead;
//! - a warm `run_bash` (`true`) against starting `true` directly.
//!
//! Run: `cargo build --release -p lens-sandbox-agent && cargo bench -p lens-sandbox`
//! (`make bench` does both).

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Command, Stdio},
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

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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
}
