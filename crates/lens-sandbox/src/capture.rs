//! What a run printed, as people and models see it: the start of stdout and the end of
//! stderr, decoded as UTF-8 across chunk boundaries, cut on character boundaries, with
//! the byte counts of everything that was printed.
//!
//! Memory stays bounded whatever a program prints: stdout keeps its first characters,
//! stderr a window of its last ones.

use lens_types::{OutputStream, RunEnding, RunOutput};

/// The most characters of a run the model reads (stdout, stderr and the ending).
pub const MODEL_TEXT_LIMIT: usize = 12_000;

/// Characters kept of each stream for the model; the person sees `shown` of them.
const KEEP: usize = MODEL_TEXT_LIMIT / 2;
/// Characters of each stream the model reads; labels take at most 100 more each.
const FOR_MODEL: usize = KEEP - 100;

/// Incremental UTF-8 decoding: bytes of a character split across chunks wait for the rest;
/// invalid bytes become U+FFFD.
#[derive(Debug, Default)]
struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    fn decode(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // `valid_up_to` marks a valid prefix, so this never falls back.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[n..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// Whatever is left at the end is an incomplete character.
    fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }
}

/// A finished run: what the person sees, and what the model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedRun {
    pub output: RunOutput,
    /// The start of stdout, the end of stderr and the ending, at most
    /// [`MODEL_TEXT_LIMIT`] characters in all.
    pub for_model: String,
    /// Whether `for_model` left part of the output out.
    pub cut_for_model: bool,
}

/// Gathers one run's output.
#[derive(Debug, Default)]
pub struct OutputCapture {
    stdout: Decoder,
    stderr: Decoder,
    head: String,
    head_chars: usize,
    stdout_chars: usize,
    stdout_bytes: u64,
    tail: String,
    stderr_chars: usize,
    stderr_bytes: u64,
}

impl OutputCapture {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one chunk; returns its text, for live output.
    pub fn push(&mut self, stream: OutputStream, bytes: &[u8]) -> String {
        match stream {
            OutputStream::Stdout => {
                self.stdout_bytes += bytes.len() as u64;
                let text = self.stdout.decode(bytes);
                self.add_stdout(&text);
                text
            }
            OutputStream::Stderr => {
                self.stderr_bytes += bytes.len() as u64;
                let text = self.stderr.decode(bytes);
                self.add_stderr(&text);
                text
            }
        }
    }

    fn add_stdout(&mut self, text: &str) {
        for c in text.chars() {
            if self.head_chars < KEEP {
                self.head.push(c);
                self.head_chars += 1;
            }
            self.stdout_chars += 1;
        }
    }

    fn add_stderr(&mut self, text: &str) {
        self.tail.push_str(text);
        self.stderr_chars += text.chars().count();
        // Trim only now and then, so a flood costs O(n), not O(n²).
        if self.tail.len() > 8 * KEEP {
            self.tail = last_chars(&self.tail, KEEP).to_owned();
        }
    }

    /// The run's output: at most `shown` characters of each stream for the person, more
    /// for the model.
    pub fn finish(
        mut self,
        language: &str,
        code: &str,
        ending: RunEnding,
        duration_ms: u64,
        shown: usize,
    ) -> CapturedRun {
        let rest = self.stdout.finish();
        self.add_stdout(&rest);
        let rest = self.stderr.finish();
        self.add_stderr(&rest);
        let for_model = self.model_text(&ending, duration_ms);
        let cut_for_model = self.stdout_chars > FOR_MODEL || self.stderr_chars > FOR_MODEL;
        let stdout: String = self.head.chars().take(shown).collect();
        let stderr = last_chars(&self.tail, shown.min(KEEP)).to_owned();
        let output = RunOutput {
            language: language.to_owned(),
            code: code.to_owned(),
            stdout_cut: self.stdout_chars > stdout.chars().count(),
            stderr_cut: self.stderr_chars > stderr.chars().count(),
            stdout,
            stderr,
            stdout_bytes: self.stdout_bytes,
            stderr_bytes: self.stderr_bytes,
            ending,
            duration_ms,
            files: Vec::new(),
            images: Vec::new(),
            log: None,
            network: Vec::new(),
        };
        CapturedRun { output, for_model, cut_for_model }
    }

    /// Labels take at most 100 characters each side, so the total stays in the limit.
    fn model_text(&self, ending: &RunEnding, duration_ms: u64) -> String {
        let stdout: String = self.head.chars().take(FOR_MODEL).collect();
        let stderr = last_chars(&self.tail, FOR_MODEL);
        let mut text = String::new();
        if self.stdout_chars > 0 {
            let shown = stdout.chars().count();
            if shown < self.stdout_chars {
                text.push_str(&format!("[stdout: the first {shown} of {} characters]\n", self.stdout_chars));
            } else {
                text.push_str("[stdout]\n");
            }
            text.push_str(&stdout);
            text.push('\n');
        }
        if self.stderr_chars > 0 {
            let shown = stderr.chars().count();
            if shown < self.stderr_chars {
                text.push_str(&format!("[stderr: the last {shown} of {} characters]\n", self.stderr_chars));
            } else {
                text.push_str("[stderr]\n");
            }
            text.push_str(stderr);
            text.push('\n');
        }
        text.push_str(&format!("[{} after {duration_ms} ms]", ending.describe()));
        text
    }
}

/// The last `n` characters of `s`.
fn last_chars(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[(OutputStream, &[u8])], shown: usize) -> RunOutput {
        let mut c = OutputCapture::new();
        for (stream, bytes) in chunks {
            c.push(*stream, bytes);
        }
        c.finish("python", "print()", RunEnding::Exited { code: 0 }, 5, shown).output
    }

    #[test]
    fn keeps_the_start_of_stdout_and_the_end_of_stderr() {
        let out = run(&[(OutputStream::Stdout, b"0123456789"), (OutputStream::Stderr, b"abcdefghij")], 4);
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("0123", "ghij"));
        assert!(out.stdout_cut && out.stderr_cut);
        assert_eq!((out.stdout_bytes, out.stderr_bytes), (10, 10));
        let out = run(&[(OutputStream::Stdout, b"hi\n")], 4);
        assert_eq!(out.stdout, "hi\n");
        assert!(!out.stdout_cut && !out.stderr_cut);
    }

    #[test]
    fn characters_split_across_chunks_are_whole_and_cuts_fall_between_characters() {
        let snow = "☃".as_bytes();
        let out = run(
            &[
                (OutputStream::Stdout, &snow[..1]),
                (OutputStream::Stdout, &snow[1..]),
                (OutputStream::Stdout, "é☃x".as_bytes()),
            ],
            3,
        );
        assert_eq!(out.stdout, "☃é☃");
        assert_eq!(out.stdout_bytes, 9);
        let out = run(&[(OutputStream::Stderr, "ab☃é".as_bytes())], 2);
        assert_eq!(out.stderr, "☃é");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let out = run(&[(OutputStream::Stdout, b"ok\xff\xfe!"), (OutputStream::Stderr, b"\xe2\x98")], 100);
        assert_eq!(out.stdout, "ok\u{fffd}\u{fffd}!");
        assert_eq!(out.stderr, "\u{fffd}", "an unfinished character at the end");
    }

    #[test]
    fn a_flood_stays_bounded() {
        let mut c = OutputCapture::new();
        let line = [b'x'; 1000];
        for _ in 0..10_000 {
            c.push(OutputStream::Stdout, &line);
            c.push(OutputStream::Stderr, &line);
        }
        assert!(c.head.len() <= KEEP && c.tail.len() <= 9 * KEEP);
        let run = c.finish("bash", "yes", RunEnding::CutShort, 1, 4000);
        let out = &run.output;
        assert_eq!((out.stdout.len(), out.stderr.len()), (4000, 4000));
        assert_eq!(out.stdout_bytes, 10_000_000);
        assert!(run.for_model.chars().count() <= MODEL_TEXT_LIMIT);
        assert!(run.for_model.starts_with("[stdout: the first 5900 of 10000000 characters]\n"));
        assert!(run.for_model.ends_with("[stopped before it finished after 1 ms]"));
        assert!(run.cut_for_model);
    }

    #[test]
    fn the_model_reads_both_streams_and_the_ending() {
        let mut c = OutputCapture::new();
        c.push(OutputStream::Stdout, b"42\n");
        c.push(OutputStream::Stderr, b"Traceback: boom\n");
        let run = c.finish("python", "x", RunEnding::Exited { code: 1 }, 12, 4000);
        assert_eq!(run.for_model, "[stdout]\n42\n\n[stderr]\nTraceback: boom\n\n[exited with code 1 after 12 ms]");
        assert!(!run.cut_for_model);
    }
}
