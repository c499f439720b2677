//! A sandbox run's output so far, saved with its answer while the run goes on, so a
//! server that dies mid-run leaves the step with its code, what it had printed and an
//! ending that says the server stopped. It holds what went out live, which the live
//! budget bounds (the step's `shown` characters of each stream and one line), and a cap
//! of its own besides.

use lens_types::{OutputStream, RunEnding, RunOutput};
use tokio::time::Instant;

use lens_llm::RunsCode;

use crate::store::LiveRun;

/// The most characters of each stream kept, whatever the sink sends.
const KEEP_AT_MOST: usize = 64 * 1024;

/// Collects a run's live output for [`LiveRun`].
#[derive(Debug)]
pub struct LiveCapture {
    run: LiveRun,
    started: Instant,
    changed: bool,
}

impl LiveCapture {
    /// For a call of a run tool, with the language and code argument the tool declares.
    pub fn for_run(step_id: &str, kind: RunsCode, args: &serde_json::Value) -> Self {
        let output = RunOutput {
            language: kind.language.to_owned(),
            code: args[kind.code_arg].as_str().unwrap_or_default().to_owned(),
            stdout: String::new(),
            stderr: String::new(),
            stdout_cut: false,
            stderr_cut: false,
            stdout_bytes: 0,
            stderr_bytes: 0,
            ending: RunEnding::ServerStopped,
            duration_ms: 0,
            files: Vec::new(),
            images: Vec::new(),
            log: None,
            network: Vec::new(),
        };
        Self { run: LiveRun { step_id: step_id.to_owned(), output }, started: Instant::now(), changed: true }
    }

    pub fn push(&mut self, stream: OutputStream, text: &str) {
        let o = &mut self.run.output;
        let (kept, cut, bytes) = match stream {
            OutputStream::Stdout => (&mut o.stdout, &mut o.stdout_cut, &mut o.stdout_bytes),
            OutputStream::Stderr => (&mut o.stderr, &mut o.stderr_cut, &mut o.stderr_bytes),
        };
        *bytes += text.len() as u64;
        let room = KEEP_AT_MOST.saturating_sub(kept.len());
        if text.len() <= room {
            kept.push_str(text);
        } else {
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            kept.push_str(&text[..end]);
            *cut = true;
        }
        self.changed = true;
    }

    /// Whether output came since the last [`LiveCapture::snapshot`].
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The run as it stands, to save.
    pub fn snapshot(&mut self) -> LiveRun {
        self.changed = false;
        self.run.output.duration_ms = self.started.elapsed().as_millis() as u64;
        self.run.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_code_and_a_bounded_output_of_runs_only() {
        let python = RunsCode::PYTHON;
        let mut live = LiveCapture::for_run("s1", python, &serde_json::json!({"code": "print(1)"}));
        live.push(OutputStream::Stdout, "1\n");
        live.push(OutputStream::Stderr, &"é".repeat(KEEP_AT_MOST));
        let run = live.snapshot();
        assert!(!live.changed());
        assert_eq!((run.output.language.as_str(), run.output.code.as_str()), ("python", "print(1)"));
        assert_eq!(run.output.stdout, "1\n");
        assert!(run.output.stderr.len() <= KEEP_AT_MOST && run.output.stderr_cut);
        assert_eq!(run.output.stderr_bytes, 2 * KEEP_AT_MOST as u64);
        assert_eq!(run.output.ending, RunEnding::ServerStopped);
    }
}
