//! The persistent Python kernel: one `python3` per sandbox, fed cells on its stdin; the
//! end of each cell's output is marked on both pipes with a nonce the cell cannot know.
//!
//! A time-out or a Stop interrupts the cell (SIGINT to the kernel's group); a kernel that
//! does not stop within [`INTERRUPT_GRACE`] is killed and started afresh on the next
//! cell, and the run's stderr says that the kernel's names are gone.

use std::{
    io::{Read, Write},
    os::unix::process::{CommandExt, ExitStatusExt},
    path::Path,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use lens_types::{OutputStream, RunEnding};
use nix::{sys::signal::Signal, unistd::Pid};

use crate::KillReason;

const KERNEL_SOURCE: &str = include_str!("kernel.py");

/// How long an interrupted cell may take to stop before the kernel is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// A running kernel.
pub struct Kernel {
    child: Child,
    stdin: ChildStdin,
    group: Pid,
    mark: Vec<u8>,
    chunks: mpsc::Receiver<(OutputStream, Vec<u8>)>,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let _ = nix::sys::signal::killpg(self.group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

fn nonce() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Kernel {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn start(root: &Path, env: &[(String, String)]) -> Result<Self, String> {
        let nonce = nonce();
        let mut child = Command::new("python3")
            .args(["-u", "-c", KERNEL_SOURCE])
            .env_clear()
            .envs(env.iter().cloned())
            .env("LENS_KERNEL_NONCE", &nonce)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("could not start Python: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let (tx, chunks) = mpsc::channel();
        let pipes: [(OutputStream, Option<Box<dyn Read + Send>>); 2] = [
            (OutputStream::Stdout, child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
            (OutputStream::Stderr, child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
        ];
        for (stream, pipe) in pipes {
            let Some(mut pipe) = pipe else { continue };
            let tx = tx.clone();
            thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n @ 1..) = pipe.read(&mut buf) {
                    if tx.send((stream, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            });
        }
        let group = Pid::from_raw(child.id() as i32);
        Ok(Self { child, stdin, group, mark: format!("\0{nonce} ").into_bytes(), chunks })
    }

    fn interrupt(&self) {
        let _ = nix::sys::signal::killpg(self.group, Signal::SIGINT);
    }
}

/// One stream's bytes while looking for the end mark.
#[derive(Default)]
struct Scan {
    pending: Vec<u8>,
    status: Option<String>,
}

impl Scan {
    /// Adds bytes; returns what may be shown now.
    fn feed(&mut self, bytes: &[u8], mark: &[u8]) -> Vec<u8> {
        if self.status.is_some() {
            return Vec::new();
        }
        self.pending.extend_from_slice(bytes);
        if let Some(at) = find(&self.pending, mark) {
            let rest = &self.pending[at + mark.len()..];
            if let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                self.status = Some(String::from_utf8_lossy(&rest[..nl]).into_owned());
                let shown = self.pending[..at].to_vec();
                self.pending.clear();
                return shown;
            }
            // The mark is here but its status line is not complete yet.
            return self.pending.drain(..at).collect();
        }
        // Keep back only a tail that could be the start of the mark.
        let keep =
            (1..=mark.len().min(self.pending.len())).rev().find(|&n| self.pending.ends_with(&mark[..n])).unwrap_or(0);
        let upto = self.pending.len() - keep;
        self.pending.drain(..upto).collect()
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
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
    let body = code.as_bytes();
    let wrote = kernel
        .stdin
        .write_all(&(body.len() as u32).to_be_bytes())
        .and_then(|()| kernel.stdin.write_all(body))
        .and_then(|()| kernel.stdin.flush());
    if wrote.is_err() {
        *slot = None;
        send(OutputStream::Stderr, b"[the Python kernel had stopped; run the cell again to start a new one]\n");
        return RunEnding::Killed { signal: 0 };
    }
    let deadline = Instant::now() + timeout;
    let mut scans = [Scan::default(), Scan::default()];
    let mut killed: Option<(KillReason, Instant)> = None;
    loop {
        if scans.iter().all(|s| s.status.is_some()) {
            break;
        }
        if killed.is_none() {
            let reason = kills.try_recv().ok().or_else(|| (Instant::now() >= deadline).then_some(KillReason::TimedOut));
            if let Some(reason) = reason {
                kernel.interrupt();
                killed = Some((reason, Instant::now()));
            }
        }
        if let Some((_, at)) = killed
            && at.elapsed() > INTERRUPT_GRACE
        {
            *slot = None;
            send(
                OutputStream::Stderr,
                b"\n[Lens restarted the Python kernel: it did not stop when interrupted, so its names are gone]\n",
            );
            break;
        }
        match kernel.chunks.recv_timeout(Duration::from_millis(10)) {
            Ok((stream, bytes)) => {
                let scan = &mut scans[stream as usize];
                let shown = scan.feed(&bytes, &kernel.mark);
                if !shown.is_empty() {
                    send(stream, &shown);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The kernel died inside the cell (os._exit, a crash, the memory limit).
                let status = kernel.child.wait().ok();
                *slot = None;
                send(OutputStream::Stderr, b"\n[the Python kernel exited; its names are gone]\n");
                return match (killed, status) {
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
    }
    if let Some((reason, _)) = killed {
        return ending_for(reason, timeout);
    }
    match scans[0].status.as_deref() {
        Some("ok") => RunEnding::Exited { code: 0 },
        Some(s) if s.starts_with("exit:") => RunEnding::Exited { code: s[5..].parse().unwrap_or(1) },
        _ => RunEnding::Exited { code: 1 },
    }
}

fn ending_for(reason: KillReason, timeout: Duration) -> RunEnding {
    match reason {
        KillReason::TimedOut => RunEnding::TimedOut { after_ms: timeout.as_millis() as u64 },
        KillReason::Requested => RunEnding::CutShort,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_found_across_chunks_and_never_shown() {
        let mark = b"\0abc ";
        let mut s = Scan::default();
        let mut shown = s.feed(b"hello\0a", mark);
        assert_eq!(shown, b"hello");
        shown = s.feed(b"bc o", mark);
        assert!(shown.is_empty() && s.status.is_none());
        s.feed(b"k\n", mark);
        assert_eq!(s.status.as_deref(), Some("ok"));
        let mut t = Scan::default();
        assert_eq!(t.feed(b"no mark \0 here", mark), b"no mark \0 here");
    }
}
