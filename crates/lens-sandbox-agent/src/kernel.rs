//! The persistent Python kernel: one `python3` per sandbox, fed cells on its stdin.
//!
//! The end of a cell is not marked in its output: the kernel writes `<nonce> <status>` on
//! a status pipe of its own (descriptor 3), and the nonce reaches it as the first frame
//! on its stdin, never through its environment. The agent polls the three pipes together;
//! once the status arrives it drains what is already in the output pipes, which holds
//! everything the kernel wrote before the status, and the cell is over. A line on the
//! status pipe without the nonce is ignored.
//!
//! A time-out or a Stop interrupts the cell (SIGINT to the kernel's group); a kernel that
//! does not stop within [`INTERRUPT_GRACE`] is killed and started afresh on the next
//! cell, and the run's stderr says that the kernel's names are gone.

use std::{
    fs::File,
    io::{ErrorKind, Read, Write},
    os::{
        fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
        unix::process::{CommandExt, ExitStatusExt},
    },
    path::Path,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use lens_types::{OutputStream, RunEnding};
use nix::{sys::signal::Signal, unistd::Pid};

use crate::{KillReason, error::AgentError, reach};

const KERNEL_SOURCE: &str = include_str!("kernel.py");

/// How long an interrupted cell may take to stop before the kernel is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// The descriptor the kernel writes its status lines on.
const STATUS_FD: RawFd = 3;

/// A running kernel.
pub struct Kernel {
    child: Child,
    stdin: ChildStdin,
    group: Pid,
    nonce: Vec<u8>,
    /// stdout, stderr, then the status pipe; all non-blocking.
    pipes: [File; 3],
    /// Status bytes short of a whole line.
    status: Vec<u8>,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let _ = nix::sys::signal::killpg(self.group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

fn nonce() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A pipe whose two ends close on exec.
fn pipe() -> Result<(OwnedFd, OwnedFd), AgentError> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(AgentError::last_os("pipe2"));
    }
    // SAFETY: both descriptors were just made and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor this process owns, with integer arguments.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Writes one length-prefixed frame to the kernel's stdin.
fn write_frame(stdin: &mut ChildStdin, body: &[u8]) -> std::io::Result<()> {
    stdin.write_all(&(body.len() as u32).to_be_bytes())?;
    stdin.write_all(body)?;
    stdin.flush()
}

impl Kernel {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts a kernel in the programs' Landlock domain (`ruleset`).
    pub fn start(root: &Path, env: &[(String, String)], ruleset: RawFd) -> Result<Self, AgentError> {
        let nonce = nonce();
        let (status_read, status_write) = pipe()?;
        let status_fd = status_write.as_raw_fd();
        let mut command = Command::new("python3");
        command
            .args(["-u", "-c", KERNEL_SOURCE])
            .env_clear()
            .envs(env.iter().cloned())
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: only raw system calls between fork and exec (no allocation).
        unsafe {
            command.pre_exec(move || {
                reach::enter(ruleset)?;
                let rc = if status_fd == STATUS_FD {
                    libc::fcntl(STATUS_FD, libc::F_SETFD, 0)
                } else {
                    libc::dup2(status_fd, STATUS_FD)
                };
                if rc < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
            });
        }
        let mut child = command.spawn().map_err(AgentError::Python)?;
        drop(status_write);
        let missing = |pipe| AgentError::Python(std::io::Error::other(pipe));
        let mut stdin = child.stdin.take().ok_or_else(|| missing("no stdin"))?;
        let stdout: OwnedFd = child.stdout.take().ok_or_else(|| missing("no stdout"))?.into();
        let stderr: OwnedFd = child.stderr.take().ok_or_else(|| missing("no stderr"))?.into();
        let pipes = [stdout, stderr, status_read].map(File::from);
        pipes.iter().for_each(|p| set_nonblocking(p.as_raw_fd()));
        let group = Pid::from_raw(child.id() as i32);
        let wrote = write_frame(&mut stdin, nonce.as_bytes());
        // From here the kernel is killed with its group if anything goes wrong.
        let kernel = Self { child, stdin, group, nonce: nonce.into_bytes(), pipes, status: Vec::new() };
        wrote.map_err(AgentError::Python)?;
        Ok(kernel)
    }

    /// Whether the kernel's process has ended (killed between cells, say).
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    fn interrupt(&self) {
        let _ = nix::sys::signal::killpg(self.group, Signal::SIGINT);
    }
}

/// What one poll of the kernel's pipes found.
enum Polled {
    Output(OutputStream, Vec<u8>),
    /// The cell's status line (the nonce checked).
    Status(String),
    Nothing,
    /// The status pipe closed: the kernel is gone.
    Gone,
}

impl Kernel {
    /// Waits up to `wait` for something from the kernel.
    fn poll(&mut self, wait: Duration) -> Polled {
        if let Some(status) = self.take_status() {
            return Polled::Status(status);
        }
        let mut fds =
            self.pipes.each_ref().map(|p| libc::pollfd { fd: p.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        // SAFETY: `fds` is a live array of three pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait.as_millis() as libc::c_int) };
        if n <= 0 {
            return Polled::Nothing;
        }
        let mut buf = vec![0u8; 64 * 1024];
        for (i, stream) in [(0, OutputStream::Stdout), (1, OutputStream::Stderr)] {
            if fds[i].revents != 0
                && let Ok(n @ 1..) = self.pipes[i].read(&mut buf)
            {
                buf.truncate(n);
                return Polled::Output(stream, buf);
            }
        }
        if fds[2].revents != 0 {
            match self.pipes[2].read(&mut buf) {
                Ok(0) => return Polled::Gone,
                Ok(n) => {
                    self.status.extend_from_slice(&buf[..n]);
                    if let Some(status) = self.take_status() {
                        return Polled::Status(status);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Polled::Gone,
            }
        }
        Polled::Nothing
    }

    /// The first whole status line that carries the nonce; others are dropped.
    fn take_status(&mut self) -> Option<String> {
        while let Some(nl) = self.status.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.status.drain(..=nl).collect();
            let line = &line[..line.len() - 1];
            if let Some(rest) = line.strip_prefix(self.nonce.as_slice())
                && let Some(status) = rest.strip_prefix(b" ")
            {
                return Some(String::from_utf8_lossy(status).into_owned());
            }
        }
        None
    }

    /// What is already in the output pipes: all the kernel wrote before its status.
    fn drain(&mut self, send: &dyn Fn(OutputStream, &[u8])) {
        let mut buf = vec![0u8; 64 * 1024];
        for (i, stream) in [(0, OutputStream::Stdout), (1, OutputStream::Stderr)] {
            while let Ok(n @ 1..) = self.pipes[i].read(&mut buf) {
                send(stream, &buf[..n]);
            }
        }
    }
}

/// Runs one cell; `send` gets its output. The kernel is taken away (to be started
/// afresh) when it had to be killed or died.
pub fn run_cell(
    slot: &mut Option<Kernel>,
    code: &str,
    timeout: Duration,
    kills: &mpsc::Receiver<KillReason>,
    send: &dyn Fn(OutputStream, &[u8]),
) -> RunEnding {
    let Some(kernel) = slot.as_mut() else {
        return RunEnding::Killed { signal: 0 };
    };
    if write_frame(&mut kernel.stdin, code.as_bytes()).is_err() {
        *slot = None;
        send(OutputStream::Stderr, b"[the Python kernel had stopped; run the cell again to start a new one]\n");
        return RunEnding::Killed { signal: 0 };
    }
    let deadline = Instant::now() + timeout;
    let mut killed: Option<(KillReason, Instant)> = None;
    let status = loop {
        if killed.is_none() {
            let reason = kills.try_recv().ok().or_else(|| (Instant::now() >= deadline).then_some(KillReason::TimedOut));
            if let Some(reason) = reason {
                kernel.interrupt();
                killed = Some((reason, Instant::now()));
            }
        }
        if let Some((reason, at)) = killed
            && at.elapsed() > INTERRUPT_GRACE
        {
            *slot = None;
            send(
                OutputStream::Stderr,
                b"\n[Lens restarted the Python kernel: it did not stop when interrupted, so its names are gone]\n",
            );
            return ending_for(reason, timeout);
        }
        match kernel.poll(Duration::from_millis(10)) {
            Polled::Output(stream, bytes) => send(stream, &bytes),
            Polled::Status(status) => break status,
            Polled::Nothing => {}
            Polled::Gone => {
                // The kernel died inside the cell (os._exit, a crash, the memory limit).
                kernel.drain(send);
                let exit = kernel.child.wait().ok();
                *slot = None;
                send(OutputStream::Stderr, b"\n[the Python kernel exited; its names are gone]\n");
                return match (killed, exit) {
                    (Some((reason, _)), _) => ending_for(reason, timeout),
                    (None, Some(s)) => match (s.code(), s.signal()) {
                        (Some(code), _) => RunEnding::Exited { code },
                        (_, Some(signal)) => RunEnding::Killed { signal },
                        _ => RunEnding::Killed { signal: 0 },
                    },
                    (None, None) => RunEnding::Killed { signal: 0 },
                };
            }
        }
    };
    kernel.drain(send);
    if let Some((reason, _)) = killed {
        return ending_for(reason, timeout);
    }
    match status.as_str() {
        "ok" => RunEnding::Exited { code: 0 },
        s if s.starts_with("exit:") => RunEnding::Exited { code: s[5..].parse().unwrap_or(1) },
        _ => RunEnding::Exited { code: 1 },
    }
}

fn ending_for(reason: KillReason, timeout: Duration) -> RunEnding {
    match reason {
        KillReason::TimedOut => RunEnding::TimedOut { after_ms: timeout.as_millis() as u64 },
        KillReason::Requested => RunEnding::CutShort,
    }
}
