//! What of a run's output goes out live: the first `budget` characters of each stream,
//! then one line saying how the rest is shown. Every event that goes out is kept in the
//! answer's in-memory log for tabs that join late, so this is what bounds the server's
//! memory for a run that prints a gigabyte; the step's captured head and tail and the
//! run's log file have the rest.

use lens_types::OutputStream;

/// The live budget of one run.
#[derive(Debug)]
pub struct LiveOutput {
    budget: usize,
    /// Characters sent so far, per stream (stdout, stderr).
    sent: [usize; 2],
    /// Whether the skip line went out, per stream.
    cut: [bool; 2],
}

impl LiveOutput {
    pub fn new(budget: usize) -> Self {
        Self { budget, sent: [0; 2], cut: [false; 2] }
    }

    /// The part of `text` that may go out live (empty once the budget is spent).
    pub fn pass(&mut self, stream: OutputStream, text: String) -> String {
        let i = stream as usize;
        if self.cut[i] {
            return String::new();
        }
        let room = self.budget - self.sent[i];
        let chars = text.chars().count();
        if chars <= room {
            self.sent[i] += chars;
            return text;
        }
        self.cut[i] = true;
        self.sent[i] = self.budget;
        let head: String = text.chars().take(room).collect();
        let name = match stream {
            OutputStream::Stdout => "output",
            OutputStream::Stderr => "error output",
        };
        format!("{head}\n[… more {name} while the run goes on; the step shows its start and end when it ends]\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stream_goes_out_up_to_its_budget_then_says_so_once() {
        let mut live = LiveOutput::new(10);
        assert_eq!(live.pass(OutputStream::Stdout, "héllo ".into()), "héllo ");
        let cut = live.pass(OutputStream::Stdout, "wörld and more".into());
        assert!(cut.starts_with("wörl\n[… more output"), "{cut}");
        assert_eq!(live.pass(OutputStream::Stdout, "x".repeat(1 << 20)), "");
        assert_eq!(live.pass(OutputStream::Stderr, "err".into()), "err", "stderr has a budget of its own");
    }
}
