//! A sandbox cannot grow the server's log without bound: a program that hammers the
//! proxy with 16 KB `CONNECT` targets for 20 seconds (the network off, so each is refused)
//! makes a few log lines with the text cut, and one egress record that counts them all.
//! The next run in the conversation works.

use std::{
    io::Write,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use lens_sandbox::{LocalDriver, LocalOptions, RunEnding};

mod common;

/// Counts the bytes the log would have written.
#[derive(Clone, Default)]
struct Counted(Arc<AtomicUsize>);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len(), Ordering::Relaxed);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn hammering_the_proxy_grows_the_log_by_little_and_is_counted() {
    let logged = Counted::default();
    let writer = logged.clone();
    tracing_subscriber::fmt().with_max_level(tracing::Level::INFO).with_writer(move || writer.clone()).init();

    let dir = tempfile::tempdir().unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &common::agent())).unwrap();
    let hammer = "import socket, time\n\
                  target = 'a' * 16000 + '.example:443'\n\
                  end = time.time() + 20\n\
                  n = 0\n\
                  while time.time() < end:\n    \
                      try:\n        \
                          s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n        \
                          s.sendall(f'CONNECT {target} HTTP/1.1\\r\\n\\r\\n'.encode())\n        \
                          s.recv(4096)\n        \
                          s.close()\n        \
                          n += 1\n    \
                      except OSError:\n        \
                          pass\n\
                  print(n)\n";
    let (out, err, ending) = common::bash(
        &d,
        "hammer",
        &format!("cat > /workspace/hammer.py <<'EOF'\n{hammer}EOF\npython3 /workspace/hammer.py"),
        Duration::from_secs(90),
    )
    .await;
    assert_eq!(ending, RunEnding::Exited { code: 0 }, "{err}");
    let tries: u64 = out.trim().parse().unwrap_or_else(|_| panic!("{out} {err}"));
    assert!(tries > 100, "the program hammered: {tries} connections");

    let bytes = logged.0.load(Ordering::Relaxed);
    assert!(bytes <= 100_000, "{tries} refused connections grew the log by {bytes} bytes");
    let all = d.egress_log();
    let records: Vec<_> = all.iter().filter(|e| e.chat_id == "hammer").collect();
    assert!(!records.is_empty(), "{:?}", all.iter().map(|e| (&e.chat_id, e.count, &e.reason)).collect::<Vec<_>>());
    let counted: u64 = records.iter().map(|e| e.count).sum();
    assert!(counted >= tries, "the egress record counts every try: {counted} of {tries} in {} records", records.len());
    assert!(records.iter().all(|e| e.target.chars().count() < 260), "targets are cut");

    let (out, _, ending) = common::bash(&d, "hammer", "echo next", Duration::from_secs(30)).await;
    assert_eq!((out.as_str(), ending), ("next\n", RunEnding::Exited { code: 0 }));
}
