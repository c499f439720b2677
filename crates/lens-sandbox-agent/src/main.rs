//! `lens-sandbox-agent [--root DIR]`: serves the agent protocol on stdin/stdout.
//!
//! Plain threads, no async runtime: the binary stays small and its behaviour simple.
//! One thread reads requests; each run has a waiter thread and two pipe readers; every
//! reply goes through one locked stdout so frames never interleave.

use std::{
    collections::HashMap,
    io::Read,
    os::unix::process::{CommandExt, ExitStatusExt},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{Arc, Mutex, mpsc},
    thread,
    time::Duration,
};

use files::{Fail, drop_write, list_files, read_file, write_file};
use lens_sandbox_agent::protocol::{FailKind, Reply, Request, read_frame, write_frame};
use lens_types::{OutputStream, RunEnding};
use nix::{sys::signal::Signal, unistd::Pid};

mod changes;
mod confine;
mod error;
mod files;
mod kernel;
mod oom;
mod proxy;
mod reach;
mod seccomp_policy;
mod sweep;

/// Why a run's process group was killed, if it was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KillReason {
    Requested,
    TimedOut,
}

/// How long a run's output may keep coming after its process ended.
const PIPE_GRACE: Duration = Duration::from_millis(500);

struct Agent {
    root: PathBuf,
    out: Mutex<std::io::Stdout>,
    /// Running commands: id → channel that tells its waiter to kill it.
    runs: Mutex<HashMap<u64, mpsc::Sender<KillReason>>>,
    /// The Python kernel, started by the first cell; one cell runs at a time.
    kernel: Mutex<Option<kernel::Kernel>>,
    /// Whether leftovers may be swept (only in the sandbox's own pid namespace).
    sweeps: sweep::Sweep,
    proxy: Arc<proxy::Proxy>,
    /// The Landlock domain every started program enters, one below the agent's.
    domain: reach::UserDomain,
}

impl Agent {
    fn reply(&self, reply: &Reply) {
        if let Ok(mut out) = self.out.lock() {
            // If the server is gone there is no one to tell; the agent ends with stdin.
            let _ = write_frame(&mut *out, reply);
        }
    }

    fn failed(&self, id: u64, message: impl Into<String>) {
        self.refused(id, Fail { kind: FailKind::Other, message: message.into() });
    }

    fn refused(&self, id: u64, fail: Fail) {
        self.reply(&Reply::Failed { id, message: fail.message, kind: fail.kind });
    }

    /// Ends run `id`: when it was the last one running, whatever it left behind is
    /// killed (the kernel, `kernel_pid`, stays).
    fn finish(&self, id: u64, kernel_pid: Option<u32>) {
        let Ok(mut runs) = self.runs.lock() else { return };
        runs.remove(&id);
        if runs.is_empty() {
            self.sweeps.sweep(&kernel_pid.into_iter().collect::<Vec<_>>());
        }
    }

    /// The kernel's pid, or `None` when none is running; `Err` while a cell has it.
    fn kernel_pid(&self) -> Result<Option<u32>, ()> {
        self.kernel.try_lock().map(|k| k.as_ref().map(|k| k.pid())).map_err(|_| ())
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut root = PathBuf::from(lens_sandbox_agent::paths::WORKSPACE);
    let mut limits = confine::ProcessLimits { max_file_bytes: 1 << 30, max_open_files: 4096 };
    let mut own_namespace = false;
    let mut proxy_port = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--own-pid-namespace" => own_namespace = true,
            "--proxy" => proxy_port = Some(lens_sandbox_agent::protocol::PROXY_PORT),
            "--root" => root = args.next().map(PathBuf::from).unwrap_or(root),
            "--max-file-bytes" => {
                limits.max_file_bytes = args.next().and_then(|v| v.parse().ok()).unwrap_or(limits.max_file_bytes)
            }
            _ => {}
        }
    }
    // Chosen before confinement: becoming a subreaper is a prctl seccomp may refuse.
    let sweeps = sweep::Sweep::choose(own_namespace);
    // Nothing the server was started with (an ignored SIGINT) reaches user code, and
    // the agent's memory and pipes are not open to it through /proc.
    reach::reset_signals();
    let undumpable = reach::make_undumpable();
    // Confined before anything else runs, so every thread and child inherits it.
    let writable = [root.as_path(), Path::new("/tmp"), Path::new("/dev/shm")];
    let confined = undumpable.and_then(|()| confine::confine(&writable, &limits)).map_err(|e| e.to_string());
    let domain =
        confined.as_ref().map_err(String::clone).and_then(|_| reach::UserDomain::new().map_err(|e| e.to_string()));
    let (confinement, domain) = match (confined, domain) {
        (Ok(c), Ok(d)) => (c, d),
        (Err(message), _) | (_, Err(message)) => {
            let reply = Reply::Failed {
                id: 0,
                message: format!("the sandbox could not confine itself: {message}"),
                kind: FailKind::Other,
            };
            let _ = write_frame(&mut std::io::stdout(), &reply);
            std::process::exit(1);
        }
    };
    let agent = Arc::new(Agent {
        root,
        out: Mutex::new(std::io::stdout()),
        runs: Mutex::default(),
        kernel: Mutex::default(),
        sweeps,
        proxy: Arc::default(),
        domain,
    });
    agent.reply(&Reply::Ready {
        id: 0,
        landlock_abi: confinement.landlock_abi,
        landlock_full: confinement.landlock_full,
        seccomp: confinement.seccomp,
        signals_scoped: agent.domain.signals_scoped,
        seccomp_inherited: confinement.seccomp_inherited,
    });
    // The egress proxy listens before any program runs, so none can take its port.
    if let Some(port) = proxy_port {
        let replier = agent.clone();
        let reply: Arc<dyn Fn(&Reply) + Send + Sync> = Arc::new(move |r: &Reply| replier.reply(r));
        if let Err(e) = agent.proxy.listen(port, reply) {
            agent.failed(0, format!("the egress proxy could not listen: {e}"));
        }
    }
    let mut stdin = std::io::stdin().lock();
    loop {
        match read_frame::<_, Request>(&mut stdin) {
            Ok(Some(request)) => handle(&agent, request),
            Ok(None) => break,
            Err(e) => {
                // A broken frame means the stream cannot be trusted any more.
                agent.failed(0, format!("bad frame: {e}"));
                break;
            }
        }
    }
    // The server went away: nothing may outlive it.
    if let Ok(runs) = agent.runs.lock() {
        for kill in runs.values() {
            let _ = kill.send(KillReason::Requested);
        }
    }
}

fn handle(agent: &Arc<Agent>, request: Request) {
    match request {
        Request::Exec { id, argv, env, timeout_ms } => exec(agent, id, argv, env, Duration::from_millis(timeout_ms)),
        Request::Python { id, code, env, timeout_ms } => {
            python(agent, id, code, env, Duration::from_millis(timeout_ms))
        }
        Request::Kill { id } => {
            let sent = agent.runs.lock().ok().and_then(|r| r.get(&id).map(|k| k.send(KillReason::Requested).is_ok()));
            match sent {
                Some(true) => agent.reply(&Reply::Done { id }),
                _ => agent.failed(id, "no such run"),
            }
        }
        Request::WriteFile { id, path, data, offset, last } => {
            match write_file(&agent.root, &path, &data, offset, last) {
                Ok(()) => agent.reply(&Reply::Done { id }),
                Err(fail) => agent.refused(id, fail),
            }
        }
        Request::DropWrite { id, path } => match drop_write(&agent.root, &path) {
            Ok(()) => agent.reply(&Reply::Done { id }),
            Err(fail) => agent.refused(id, fail),
        },
        Request::ReadFile { id, path, max_bytes, offset, len } => {
            match read_file(&agent.root, &path, max_bytes, offset, len) {
                Ok((data, size)) => agent.reply(&Reply::File { id, data, size }),
                Err(fail) => agent.refused(id, fail),
            }
        }
        Request::ListFiles { id, path } => match list_files(&agent.root, &path) {
            Ok(entries) => agent.reply(&Reply::Files { id, entries }),
            Err(fail) => agent.refused(id, fail),
        },
        Request::RestartPython { id } => match agent.kernel.try_lock() {
            Ok(mut slot) => {
                // Dropping the kernel kills its process group.
                *slot = None;
                agent.reply(&Reply::Done { id })
            }
            Err(_) => agent.failed(id, "a Python cell is running; stop it first"),
        },
        Request::NetOpen { id, ok, message } => agent.proxy.deliver(id, proxy::NetMessage::Open { ok, message }),
        Request::NetData { id, data } => agent.proxy.deliver(id, proxy::NetMessage::Data(data)),
        Request::NetClose { id } => agent.proxy.deliver(id, proxy::NetMessage::Close),
    }
}

fn exec(agent: &Arc<Agent>, id: u64, argv: Vec<String>, env: Vec<(String, String)>, timeout: Duration) {
    let Some((program, args)) = argv.split_first() else {
        return agent.failed(id, "nothing to run");
    };
    let before = changes::list(&agent.root);
    let oom_kills = oom::kills();
    // Counted as running before its process exists: a run ending meanwhile must not
    // sweep the new process away as a leftover (its sweep holds `runs` while it kills).
    let (kill_tx, kill_rx) = mpsc::channel();
    if let Ok(mut runs) = agent.runs.lock() {
        runs.insert(id, kill_tx.clone());
    }
    let mut spawned = Command::new(program);
    spawned
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(&agent.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a time-out or a Stop kills everything it started.
        .process_group(0);
    let ruleset = agent.domain.fd();
    // SAFETY: `enter` is one raw system call: nothing between fork and exec allocates.
    let spawned = unsafe { spawned.pre_exec(move || reach::enter(ruleset)) }.spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            agent.runs.lock().map(|mut r| r.remove(&id)).ok();
            return agent.failed(id, format!("could not start `{program}`: {e}"));
        }
    };
    let group = Pid::from_raw(child.id() as i32);
    let (pipe_done, pipes_done) = mpsc::channel::<()>();
    let pipes: Vec<thread::JoinHandle<()>> = [
        child.stdout.take().map(|p| (OutputStream::Stdout, Box::new(p) as Box<dyn Read + Send>)),
        child.stderr.take().map(|p| (OutputStream::Stderr, Box::new(p) as Box<dyn Read + Send>)),
    ]
    .into_iter()
    .flatten()
    .map(|(stream, mut pipe)| {
        let agent = agent.clone();
        let done = pipe_done.clone();
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                agent.reply(&Reply::Output { id, stream, data: buf[..n].to_vec() });
            }
            let _ = done.send(());
        })
    })
    .collect();
    // The time-out: a sleeping thread that asks for the kill (ignored once the run ended).
    thread::spawn(move || {
        thread::sleep(timeout);
        let _ = kill_tx.send(KillReason::TimedOut);
    });
    let agent = agent.clone();
    thread::spawn(move || {
        let mut killed = None;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {}
                Err(_) => break None,
            }
            if let Ok(reason) = kill_rx.recv_timeout(Duration::from_millis(5)) {
                killed.get_or_insert(reason);
                let _ = nix::sys::signal::killpg(group, Signal::SIGKILL);
            }
        };
        // Whatever the run left behind in its group goes with it, so its pipes close;
        // so does what left the group, unless another run (or a cell) is still going.
        let _ = nix::sys::signal::killpg(group, Signal::SIGKILL);
        match agent.kernel_pid() {
            Ok(kernel) => agent.finish(id, kernel),
            Err(()) => {
                agent.runs.lock().map(|mut r| r.remove(&id)).ok();
            }
        }
        // The output still in the pipes arrives before the ending; a pipe that an escaped
        // process still holds open is not waited for past the grace.
        let deadline = std::time::Instant::now() + PIPE_GRACE;
        let mut open = pipes.len();
        while open > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if pipes_done.recv_timeout(left).is_err() {
                break;
            }
            open -= 1;
        }
        drop(pipes);
        let ending = match (killed, status) {
            (Some(KillReason::TimedOut), _) => RunEnding::TimedOut { after_ms: timeout.as_millis() as u64 },
            (Some(KillReason::Requested), _) => RunEnding::CutShort,
            (None, Some(s)) => match (s.code(), s.signal()) {
                (Some(code), _) => RunEnding::Exited { code },
                (None, Some(signal)) => RunEnding::Killed { signal },
                (None, None) => RunEnding::Killed { signal: 0 },
            },
            (None, None) => RunEnding::Killed { signal: 0 },
        };
        let ending = oom::judge(oom_kills, ending);
        let files = changes::changed(&before, &changes::list(&agent.root));
        agent.reply(&Reply::Ended { id, ending, files });
    });
}

fn python(agent: &Arc<Agent>, id: u64, code: String, env: Vec<(String, String)>, timeout: Duration) {
    let (kill_tx, kill_rx) = mpsc::channel();
    if let Ok(mut runs) = agent.runs.lock() {
        runs.insert(id, kill_tx);
    }
    let agent = agent.clone();
    thread::spawn(move || {
        let ending = {
            let Ok(mut slot) = agent.kernel.try_lock() else {
                agent.runs.lock().map(|mut r| r.remove(&id)).ok();
                return agent.failed(id, "the Python kernel is busy with another cell");
            };
            let send = |stream, bytes: &[u8]| agent.reply(&Reply::Output { id, stream, data: bytes.to_vec() });
            // A kernel killed between cells (`kill -9 -1` in a bash run) is replaced
            // before this cell, which then runs normally.
            if slot.as_mut().is_some_and(|k| k.has_exited()) {
                *slot = None;
                send(OutputStream::Stderr, b"[the Python kernel had stopped since the last cell; this cell runs in a new one, so earlier names are gone]\n");
            }
            if slot.is_none() {
                match kernel::Kernel::start(&agent.root, &env, agent.domain.fd()) {
                    Ok(k) => *slot = Some(k),
                    Err(m) => {
                        agent.runs.lock().map(|mut r| r.remove(&id)).ok();
                        return agent.failed(id, m.to_string());
                    }
                }
            }
            let before = changes::list(&agent.root);
            let oom_kills = oom::kills();
            let ending = oom::judge(oom_kills, kernel::run_cell(&mut slot, &code, timeout, &kill_rx, &send));
            agent.finish(id, slot.as_ref().map(|k| k.pid()));
            (ending, changes::changed(&before, &changes::list(&agent.root)))
        };
        let (ending, files) = ending;
        agent.reply(&Reply::Ended { id, ending, files });
    });
}
