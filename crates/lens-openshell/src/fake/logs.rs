//! The sandboxes' logs as the gateway keeps them and hands them out (`GetSandboxLogs`),
//! ported from NVIDIA's OpenShell (`crates/openshell-server/src/grpc/policy.rs`
//! `handle_get_sandbox_logs`, `grpc/validation.rs` `source_matches` and `level_matches`;
//! commit 2f7fb6559): the newest lines of one sandbox (2000 when the request says 0),
//! filtered by time, source and lowest level. A sandbox's supervisor pushes its lines in
//! batches every half second, so a line is there only some time after it happened; the
//! fake holds each line back for as long, so a client that reads too early misses it.

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::{Duration, Instant, SystemTime},
};

use crate::proto::openshell::v1::{GetSandboxLogsRequest, SandboxLogLine};

/// The gateway's tail when a request asks for no number of lines, and what it keeps.
const DEFAULT_LINES: usize = 2000;

/// How late a sandbox's line reaches the gateway: its supervisor's push interval.
pub const PUSH_DELAY: Duration = Duration::from_millis(500);

/// Every sandbox's lines, by sandbox name; each line with the instant it arrives.
#[derive(Default)]
pub(crate) struct Logs(Mutex<HashMap<String, VecDeque<(Instant, SandboxLogLine)>>>);

impl Logs {
    /// A line the sandbox's supervisor logged now; it reaches the gateway a push later.
    pub(crate) fn push(&self, sandbox: &str, line: SandboxLogLine) {
        let Ok(mut all) = self.0.lock() else { return };
        let lines = all.entry(sandbox.to_owned()).or_default();
        if lines.len() == DEFAULT_LINES {
            lines.pop_front();
        }
        lines.push_back((Instant::now() + PUSH_DELAY, line));
    }

    pub(crate) fn forget(&self, sandbox: &str) {
        if let Ok(mut all) = self.0.lock() {
            all.remove(sandbox);
        }
    }

    /// The lines a request asks for, and how many lines the tail held before filtering.
    pub(crate) fn tail(&self, r: &GetSandboxLogsRequest) -> (Vec<SandboxLogLine>, u32) {
        let Ok(all) = self.0.lock() else { return (Vec::new(), 0) };
        let now = Instant::now();
        let arrived: Vec<&SandboxLogLine> = all
            .get(&r.sandbox)
            .map(|lines| lines.iter().filter(|(at, _)| *at <= now).map(|(_, l)| l).collect())
            .unwrap_or_default();
        let wanted = if r.lines == 0 { DEFAULT_LINES } else { r.lines as usize };
        let tail = &arrived[arrived.len().saturating_sub(wanted)..];
        let since = r.since_time.and_then(|t| SystemTime::try_from(t).ok());
        let lines = tail
            .iter()
            .filter(|l| match (since, l.event_time.and_then(|t| SystemTime::try_from(t).ok())) {
                (Some(since), Some(at)) => at >= since,
                _ => true,
            })
            .filter(|l| r.sources.is_empty() || source_matches(&l.source, &r.sources))
            .filter(|l| level_matches(&l.level, &r.min_level))
            .map(|l| (*l).clone())
            .collect();
        (lines, tail.len() as u32)
    }
}

/// A line with no source is the gateway's own.
fn source_matches(source: &str, filters: &[String]) -> bool {
    let effective = if source.is_empty() { "gateway" } else { source };
    filters.iter().any(|f| f == effective)
}

/// An OCSF event counts as INFO; a level the gateway does not know always passes.
fn level_matches(level: &str, min_level: &str) -> bool {
    if min_level.is_empty() {
        return true;
    }
    let rank = |s: &str| match s.to_uppercase().as_str() {
        "ERROR" => 0,
        "WARN" => 1,
        "INFO" | "OCSF" => 2,
        "DEBUG" => 3,
        "TRACE" => 4,
        _ => 5,
    };
    rank(level) <= rank(min_level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(source: &str, level: &str, message: &str, at: SystemTime) -> SandboxLogLine {
        SandboxLogLine {
            source: source.into(),
            level: level.into(),
            message: message.into(),
            event_time: Some(at.into()),
            ..Default::default()
        }
    }

    #[test]
    fn lines_arrive_a_push_later_and_are_filtered_as_the_gateway_filters() {
        let logs = Logs::default();
        let start = SystemTime::now();
        logs.push("s", line("sandbox", "INFO", "old", start - Duration::from_secs(5)));
        logs.push("s", line("sandbox", "OCSF", "net", start));
        logs.push("s", line("", "DEBUG", "gateway's", start));
        let ask = GetSandboxLogsRequest { sandbox: "s".into(), ..Default::default() };
        assert_eq!(logs.tail(&ask).0.len(), 0, "nothing has reached the gateway yet");
        std::thread::sleep(PUSH_DELAY + Duration::from_millis(50));
        assert_eq!(logs.tail(&ask).0.len(), 3);
        let since = GetSandboxLogsRequest { since_time: Some(start.into()), ..ask.clone() };
        assert_eq!(logs.tail(&since).0.len(), 2, "older lines are left out");
        let sandbox = GetSandboxLogsRequest { sources: vec!["sandbox".into()], ..since.clone() };
        assert_eq!(logs.tail(&sandbox).0.iter().map(|l| l.message.as_str()).collect::<Vec<_>>(), ["net"]);
        let gateway = GetSandboxLogsRequest { sources: vec!["gateway".into()], ..since };
        assert_eq!(logs.tail(&gateway).0[0].message, "gateway's", "no source is the gateway's");
        let info = GetSandboxLogsRequest { min_level: "INFO".into(), ..ask.clone() };
        assert_eq!(logs.tail(&info).0.len(), 2, "OCSF counts as INFO, DEBUG is below it");
        let one = GetSandboxLogsRequest { lines: 1, ..ask };
        let (lines, total) = logs.tail(&one);
        assert_eq!((lines[0].message.as_str(), total), ("gateway's", 1), "the newest line");
    }
}
