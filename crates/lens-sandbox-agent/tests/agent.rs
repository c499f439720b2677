//! The agent binary over its real stdin/stdout: runs, endings, kills and files.
//! (Here it runs in a temp folder without bwrap, but confined by its own Landlock and
//! seccomp; the local driver's tests run it in bwrap.)

use std::{
    io::Write,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use lens_sandbox_agent::protocol::{FILE_PART, Reply, Request, read_frame, write_frame};
use lens_types::{OutputStream, RunEnding};

struct Agent {
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<Reply>,
    _dir: tempfile::TempDir,
}

impl Agent {
    fn start() -> Self {
        Self::start_with(Command::new(env!("CARGO_BIN_EXE_lens-sandbox-agent")))
    }

    /// Started the way a server without job control starts it: SIGINT ignored (a shell's
    /// `trap '' INT` is kept across `exec`, as `nohup cmd &` keeps it).
    fn start_with_sigint_ignored() -> Self {
        let mut sh = Command::new("sh");
        sh.args(["-c", "trap '' INT; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_lens-sandbox-agent")]);
        Self::start_with(sh)
    }

    fn start_with(mut command: Command) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut child =
            command.arg("--root").arg(dir.path()).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(Some(reply)) = read_frame::<_, Reply>(&mut stdout) {
                if tx.send(reply).is_err() {
                    break;
                }
            }
        });
        let agent = Agent { child, stdin, replies, _dir: dir };
        match agent.next() {
            Reply::Ready { landlock_abi, seccomp, .. } => {
                assert!(landlock_abi >= 3, "Landlock ABI {landlock_abi}");
                assert!(seccomp, "seccomp applied");
            }
            other => panic!("the agent's first frame is {other:?}"),
        }
        agent
    }

    fn send(&mut self, request: Request) {
        write_frame(&mut self.stdin, &request).unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&self) -> Reply {
        self.replies.recv_timeout(Duration::from_secs(20)).expect("the agent answers")
    }

    /// Runs to the end: (stdout, stderr, ending).
    fn run(&mut self, id: u64, argv: &[&str], timeout_ms: u64) -> (String, String, RunEnding) {
        self.send(Request::Exec {
            id,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into()), ("LENS_TEST".into(), "1".into())],
            timeout_ms,
        });
        self.collect(id)
    }

    fn collect(&self, id: u64) -> (String, String, RunEnding) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        loop {
            match self.next() {
                Reply::Output { id: i, stream, data } if i == id => match stream {
                    OutputStream::Stdout => out.extend(data),
                    OutputStream::Stderr => err.extend(data),
                },
                Reply::Ended { id: i, ending, .. } if i == id => {
                    return (String::from_utf8_lossy(&out).into(), String::from_utf8_lossy(&err).into(), ending);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_run_streams_both_pipes_and_reports_its_exit_code() {
    let mut a = Agent::start();
    let (out, err, ending) = a.run(1, &["sh", "-c", "echo hi; echo oops >&2; exit 3"], 10_000);
    assert_eq!((out.as_str(), err.as_str(), ending), ("hi\n", "oops\n", RunEnding::Exited { code: 3 }));
}

#[test]
fn the_environment_is_only_what_was_given() {
    let mut a = Agent::start();
    let (out, _, _) = a.run(1, &["env"], 10_000);
    let mut vars: Vec<&str> = out.lines().map(|l| l.split('=').next().unwrap()).collect();
    vars.sort();
    assert_eq!(vars, vec!["LENS_TEST", "PATH"]);
}

#[test]
fn a_time_out_kills_the_whole_group() {
    let mut a = Agent::start();
    let (out, _, ending) = a.run(1, &["sh", "-c", "sleep 30 & echo started; wait"], 300);
    assert_eq!(out, "started\n");
    assert_eq!(ending, RunEnding::TimedOut { after_ms: 300 });
}

#[test]
fn a_kill_request_cuts_the_run_short() {
    let mut a = Agent::start();
    let argv = vec!["sh".into(), "-c".into(), "echo begun; exec sleep 30".into()];
    a.send(Request::Exec { id: 5, argv, env: vec![], timeout_ms: 60_000 });
    // Killed once it surely runs: after its first output.
    assert!(matches!(a.next(), Reply::Output { id: 5, .. }), "the run prints first");
    a.send(Request::Kill { id: 5 });
    let mut ended = None;
    let mut done = false;
    while ended.is_none() || !done {
        match a.next() {
            Reply::Done { id: 5 } => done = true,
            Reply::Ended { id: 5, ending, .. } => ended = Some(ending),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(ended, Some(RunEnding::CutShort));
    a.send(Request::Kill { id: 5 });
    assert!(matches!(a.next(), Reply::Failed { id: 5, .. }), "the run is gone");
}

#[test]
fn background_processes_do_not_outlive_their_run() {
    let mut a = Agent::start();
    // The shell exits at once; its child keeps the pipes open until the agent kills it.
    let (out, _, ending) = a.run(1, &["sh", "-c", "sleep 30 & echo bye"], 60_000);
    assert_eq!((out.as_str(), ending), ("bye\n", RunEnding::Exited { code: 0 }));
}

#[test]
fn a_missing_program_is_a_clear_failure() {
    let mut a = Agent::start();
    a.send(Request::Exec { id: 9, argv: vec!["no-such-program".into()], env: vec![], timeout_ms: 1000 });
    assert!(matches!(a.next(), Reply::Failed { id: 9, message, .. } if message.contains("no-such-program")));
}

#[test]
fn files_are_written_read_and_listed_inside_the_workspace_only() {
    let mut a = Agent::start();
    a.send(write(1, "data/a.txt", b"hello", 0, true));
    assert_eq!(a.next(), Reply::Done { id: 1 });
    a.send(read(2, "/workspace/data/a.txt", 100, 0));
    assert_eq!(a.next(), Reply::File { id: 2, data: b"hello".to_vec(), size: 5 });
    a.send(Request::ListFiles { id: 3, path: "data".into() });
    let Reply::Files { entries, .. } = a.next() else { panic!() };
    assert_eq!(entries.len(), 1);
    assert_eq!((entries[0].path.as_str(), entries[0].size, entries[0].is_dir), ("data/a.txt", 5, false));
    // The run sees the same files.
    let (out, _, _) = a.run(4, &["cat", "data/a.txt"], 10_000);
    assert_eq!(out, "hello");

    for (id, request) in [
        (10, write(10, "../escape", b"x", 0, true)),
        (11, read(11, "/etc/passwd", 100_000, 0)),
        (12, read(12, "data/a.txt", 2, 0)),
        (13, Request::ListFiles { id: 13, path: "data/a.txt".into() }),
        (14, read(14, "nothing-here", 2, 0)),
    ] {
        a.send(request);
        assert!(matches!(a.next(), Reply::Failed { id: i, .. } if i == id), "request {id}");
    }
}

fn write(id: u64, path: &str, bytes: &[u8], offset: u64, last: bool) -> Request {
    Request::WriteFile { id, path: path.into(), data: bytes.to_vec(), offset, last }
}

fn read(id: u64, path: &str, max_bytes: u64, offset: u64) -> Request {
    Request::ReadFile { id, path: path.into(), max_bytes, offset, len: u64::MAX }
}

#[test]
fn a_file_moves_in_parts_and_shows_only_when_whole() {
    let mut a = Agent::start();
    let part = vec![7u8; FILE_PART];
    a.send(write(1, "big.bin", &part, 0, false));
    assert_eq!(a.next(), Reply::Done { id: 1 });
    let (out, _, _) = a.run(2, &["sh", "-c", "ls -A; test -e big.bin || echo none"], 10_000);
    assert_eq!(out, ".big.bin.lens-tmp\nnone\n", "half a file is not in place");
    // A part out of order is refused, and what was written goes.
    a.send(write(3, "big.bin", b"x", 5, false));
    assert!(matches!(a.next(), Reply::Failed { id: 3, message, .. } if message.contains("interrupted")));
    for (id, offset, last) in [(4, 0, false), (5, FILE_PART as u64, true)] {
        a.send(write(id, "big.bin", &part, offset, last));
        assert_eq!(a.next(), Reply::Done { id });
    }
    // Read back in parts of at most FILE_PART, whatever was asked.
    let mut back = Vec::new();
    for id in 6.. {
        a.send(read(id, "big.bin", u64::MAX, back.len() as u64));
        let Reply::File { data, size, .. } = a.next() else { panic!() };
        assert_eq!(size, 2 * FILE_PART as u64);
        assert!(data.len() <= FILE_PART);
        if data.is_empty() {
            break;
        }
        back.extend(data);
    }
    assert_eq!(back.len(), 2 * FILE_PART);
    // A part larger than FILE_PART is refused; a dropped write leaves nothing.
    a.send(write(20, "huge.bin", &vec![0; FILE_PART + 1], 0, true));
    assert!(matches!(a.next(), Reply::Failed { id: 20, .. }));
    a.send(write(21, "gone.bin", b"abc", 0, false));
    assert_eq!(a.next(), Reply::Done { id: 21 });
    a.send(Request::DropWrite { id: 22, path: "gone.bin".into() });
    assert_eq!(a.next(), Reply::Done { id: 22 });
    let (out, _, _) = a.run(23, &["ls", "-A"], 10_000);
    assert_eq!(out, "big.bin\n");
}

impl Agent {
    fn python(&mut self, id: u64, code: &str, timeout_ms: u64) -> (String, String, RunEnding) {
        self.send(Request::Python {
            id,
            code: code.into(),
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            timeout_ms,
        });
        self.collect(id)
    }
}

#[test]
fn python_cells_share_one_namespace_like_a_notebook() {
    let mut a = Agent::start();
    let (out, err, ending) = a.python(1, "import math\nx = 21\nprint('set')", 20_000);
    assert_eq!((out.as_str(), err.as_str(), ending), ("set\n", "", RunEnding::Exited { code: 0 }));
    let (out, _, ending) = a.python(2, "x * 2", 20_000);
    assert_eq!((out.as_str(), ending), ("42\n", RunEnding::Exited { code: 0 }), "the last expression is shown");
    let (out, _, _) = a.python(3, "print(math.pi > 3, end='')", 20_000);
    assert_eq!(out, "True");
}

#[test]
fn python_errors_show_the_traceback_and_keep_the_kernel() {
    let mut a = Agent::start();
    a.python(1, "y = 5", 20_000);
    let (_, err, ending) = a.python(2, "1 / 0", 20_000);
    assert!(err.contains("ZeroDivisionError"), "{err}");
    assert!(err.contains("File \"<cell>\", line 1") && !err.contains("<string>"), "only the cell's frames: {err}");
    assert_eq!(ending, RunEnding::Exited { code: 1 });
    let (_, _, ending) = a.python(3, "import sys\nsys.exit(3)", 20_000);
    assert_eq!(ending, RunEnding::Exited { code: 3 });
    let (out, _, _) = a.python(4, "y", 20_000);
    assert_eq!(out, "5\n");
}

#[test]
fn a_python_time_out_interrupts_the_cell_and_keeps_the_names() {
    let mut a = Agent::start();
    a.python(1, "z = 7", 20_000);
    let (out, err, ending) = a.python(2, "import time\nprint('working')\ntime.sleep(30)", 500);
    assert_eq!(out, "working\n");
    assert!(err.contains("KeyboardInterrupt"), "{err}");
    assert_eq!(ending, RunEnding::TimedOut { after_ms: 500 });
    let (out, _, _) = a.python(3, "z", 20_000);
    assert_eq!(out, "7\n", "an interrupted cell leaves the kernel as it was");
}

#[test]
fn a_kernel_that_ignores_interrupts_is_restarted_and_says_so() {
    let mut a = Agent::start();
    a.python(1, "w = 1", 20_000);
    let stubborn = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)";
    let (_, err, ending) = a.python(2, stubborn, 300);
    assert_eq!(ending, RunEnding::TimedOut { after_ms: 300 });
    assert!(err.contains("restarted the Python kernel"), "{err}");
    let (_, err, ending) = a.python(3, "w", 20_000);
    assert!(err.contains("NameError"), "a fresh kernel: {err}");
    assert_eq!(ending, RunEnding::Exited { code: 1 });
}

#[test]
fn a_python_time_out_keeps_the_names_when_the_server_ignored_sigint() {
    let mut a = Agent::start_with_sigint_ignored();
    let (out, _, _) = a.python(1, "import signal\nz = 7\nprint(signal.getsignal(signal.SIGINT))", 20_000);
    assert_eq!(out, "<built-in function default_int_handler>\n", "the kernel gets the default SIGINT");
    let (_, err, ending) = a.python(2, "import time\ntime.sleep(30)", 500);
    assert!(err.contains("KeyboardInterrupt") && !err.contains("restarted"), "{err}");
    assert_eq!(ending, RunEnding::TimedOut { after_ms: 500 });
    let (out, _, _) = a.python(3, "z", 20_000);
    assert_eq!(out, "7\n", "the interrupt kept the names");
}

#[test]
fn a_cell_cannot_find_or_forge_the_end_of_its_output() {
    let mut a = Agent::start();
    // Everything a cell could read the nonce from, and every stream it could forge on:
    // a forged end would end the run before "still running".
    let forger = r#"
import os, re, sys, time
places = [open('/proc/self/environ', 'rb').read().decode('latin-1'), repr(dict(os.environ)),
          repr({k: v for k, v in vars(sys.modules['__main__']).items() if k != '__builtins__'})]
found = sorted({m for p in places for m in re.findall(r'[0-9a-f]{32}', p)})
print('found', found)
for nonce in found + ['0' * 32]:
    for status in (b' ok\n', b' exit:0\n'):
        for fd in (1, 2, 3):
            try:
                os.write(fd, b'\0' + nonce.encode() + status)
                os.write(fd, nonce.encode() + status)
            except OSError:
                pass
time.sleep(1)
print('still running')
"#;
    let (out, _, ending) = a.python(1, forger, 20_000);
    assert!(out.starts_with("found []"), "no nonce anywhere the cell looks: {out}");
    assert!(out.ends_with("still running\n"), "the cell was not ended early: {out}");
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    let (out, _, _) = a.python(2, "print('next')", 20_000);
    assert_eq!(out, "next\n", "the next cell is its own");
}

#[test]
fn user_code_cannot_stop_kill_trace_or_read_the_agent() {
    let mut a = Agent::start();
    // The agent is the run's parent here (no bwrap, and as root when the tests are: the
    // Landlock domain is the wall, not the uid).
    let script = "for s in STOP KILL INT; do kill -$s $PPID 2>/dev/null && echo sent $s; done; \
                  head -c1 /proc/$PPID/mem >/dev/null 2>&1 && echo read mem; \
                  readlink /proc/$PPID/fd/1 >/dev/null 2>&1 && echo saw its pipe; \
                  echo x > /proc/$PPID/fd/1 2>/dev/null && echo wrote pipe; \
                  python3 -c 'import ctypes; print(\"ptrace\", ctypes.CDLL(None).ptrace(16, '$PPID', 0, 0))'; \
                  kill -9 -1; echo survived";
    let (out, _, _) = a.run(1, &["bash", "-c", script], 20_000);
    assert_eq!(out, "ptrace -1\nsurvived\n", "every attempt refused: {out}");
    let (out, _, ending) = a.run(2, &["echo", "ok"], 20_000);
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }), "the agent still serves");
}
